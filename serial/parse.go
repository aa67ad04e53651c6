package serial

import (
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/idforge/idforge"
)

// SyntaxError is the error Parse returns for a template it refuses: bad
// syntax, an unknown kind, option or generator, a bad reference, a
// template longer than Options.MaxLen. It wraps idforge.ErrInvalidArgument
// and, when set, Err.
type SyntaxError struct {
	// Col is the 1-based byte column in the template text where the
	// problem is; len(text)+1 for an unexpected end.
	Col int
	// Msg says what is wrong.
	Msg string
	// Err is the underlying cause, if any: a Resolver's error (wrapping
	// idforge.ErrUnknownKey for an unknown generator) or a Kind's error.
	Err error
}

// Error returns "serial: col N: msg", followed by the cause if any.
func (e *SyntaxError) Error() string {
	s := "serial: col " + strconv.Itoa(e.Col) + ": " + e.Msg
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns idforge.ErrInvalidArgument and Err.
func (e *SyntaxError) Unwrap() []error {
	if e.Err == nil {
		return []error{idforge.ErrInvalidArgument}
	}
	return []error{idforge.ErrInvalidArgument, e.Err}
}

func errAt(col int, format string, args ...any) *SyntaxError {
	return &SyntaxError{Col: col, Msg: fmt.Sprintf(format, args...)}
}

// item is one piece of a template's text: static text or an expression.
type item struct {
	static string
	col    int
	expr   *Expr    // nil for static text
	as     Option   // the as= option; Name is "" when there is none
	opts   []Option // every option as written, as= included
}

// lex splits text into static text and expressions. It checks the
// syntax only; what an expression means is the Kind's business.
func lex(text string) ([]item, error) {
	var items []item
	var lit []byte
	litCol := 1
	flush := func() {
		if len(lit) > 0 {
			items = append(items, item{static: string(lit), col: litCol})
			lit = nil
		}
	}
	for i := 0; i < len(text); {
		c := text[i]
		switch {
		case c == '@' && i+1 < len(text) && text[i+1] == '@':
			if len(lit) == 0 {
				litCol = i + 1
			}
			lit = append(lit, '@')
			i += 2
		case c == '@' && i+1 < len(text) && text[i+1] == '{':
			flush()
			it, next, err := lexExpr(text, i)
			if err != nil {
				return nil, err
			}
			items = append(items, it)
			i = next
		default:
			if err := checkChar(text, i); err != nil {
				return nil, err
			}
			if len(lit) == 0 {
				litCol = i + 1
			}
			_, size := utf8.DecodeRuneInString(text[i:])
			lit = append(lit, text[i:i+size]...)
			i += size
		}
	}
	flush()
	return items, nil
}

// checkChar refuses control characters and bytes that are not UTF-8.
func checkChar(text string, i int) error {
	c := text[i]
	if c < 0x20 || c == 0x7f {
		return errAt(i+1, "control character %q", c)
	}
	if c >= utf8.RuneSelf {
		if r, size := utf8.DecodeRuneInString(text[i:]); r == utf8.RuneError && size <= 1 {
			return errAt(i+1, "invalid UTF-8")
		}
	}
	return nil
}

// lexExpr reads the expression whose "@{" is at text[at:]; it returns
// the item and the offset after its '}'.
func lexExpr(text string, at int) (item, int, error) {
	e := &Expr{Col: at + 1}
	it := item{col: at + 1, expr: e}
	i := skipBlanks(text, at+2)
	start := i
	for i < len(text) && (isLetter(text[i]) || isDigit(text[i]) || text[i] == '_' || text[i] == '-' || text[i] == '.') {
		i++
	}
	e.Kind = text[start:i]
	if e.Kind == "" {
		if i >= len(text) {
			return it, 0, errAt(len(text)+1, "unexpected end: expression at col %d not closed by '}'", at+1)
		}
		return it, 0, errAt(i+1, "expected a kind name after '@{'")
	}
	if !validKindName(e.Kind) {
		return it, 0, errAt(start+1, "invalid kind name %q", e.Kind)
	}
	i = skipBlanks(text, i)
	e.ArgCol = i + 1
	if i < len(text) && text[i] == ':' {
		v, vcol, next, err := lexValue(text, i+1)
		if err != nil {
			return it, 0, err
		}
		e.Arg, e.ArgCol, i = v, vcol, next
	}
	for {
		if i >= len(text) {
			return it, 0, errAt(len(text)+1, "unexpected end: expression at col %d not closed by '}'", at+1)
		}
		switch text[i] {
		case '}':
			return it, i + 1, nil
		case ',':
		default:
			return it, 0, errAt(i+1, "expected ',' or '}', found %q", text[i])
		}
		i = skipBlanks(text, i+1)
		o := Option{Col: i + 1}
		start := i
		if i < len(text) && isLetter(text[i]) {
			for i < len(text) && (isLetter(text[i]) || isDigit(text[i]) || text[i] == '_') {
				i++
			}
		}
		o.Name = text[start:i]
		if o.Name == "" {
			if i >= len(text) {
				return it, 0, errAt(len(text)+1, "unexpected end: expression at col %d not closed by '}'", at+1)
			}
			return it, 0, errAt(i+1, "expected an option name, found %q", text[i])
		}
		i = skipBlanks(text, i)
		if i >= len(text) || text[i] != '=' {
			if i >= len(text) {
				return it, 0, errAt(len(text)+1, "unexpected end: expression at col %d not closed by '}'", at+1)
			}
			return it, 0, errAt(i+1, "expected '=' after option %q", o.Name)
		}
		v, vcol, next, err := lexValue(text, i+1)
		if err != nil {
			return it, 0, err
		}
		if v == "" {
			return it, 0, errAt(vcol, "option %q has no value", o.Name)
		}
		o.Value, o.ValueCol, i = v, vcol, next
		for _, p := range it.opts {
			if p.Name == o.Name {
				return it, 0, errAt(o.Col, "option %q given twice", o.Name)
			}
		}
		it.opts = append(it.opts, o)
		if o.Name == "as" {
			it.as = o
		} else {
			e.Options = append(e.Options, o)
		}
	}
}

// lexValue reads an argument or option value starting at text[i]: bytes
// up to the next ',' or '}' outside single quotes, blanks around it
// trimmed. It returns the value, its column, and the offset of the ','
// or '}' (or len(text)).
func lexValue(text string, i int) (string, int, int, error) {
	i = skipBlanks(text, i)
	start := i
	end := i // end of the value without trailing blanks
	for i < len(text) && text[i] != ',' && text[i] != '}' {
		if err := checkChar(text, i); err != nil {
			return "", 0, 0, err
		}
		if text[i] == '\'' {
			q := i
			i++
			for i < len(text) && text[i] != '\'' {
				if err := checkChar(text, i); err != nil {
					return "", 0, 0, err
				}
				_, size := utf8.DecodeRuneInString(text[i:])
				i += size
			}
			if i >= len(text) {
				return "", 0, 0, errAt(q+1, "quote not closed")
			}
			i++
			end = i
			continue
		}
		_, size := utf8.DecodeRuneInString(text[i:])
		i += size
		if text[i-size] != ' ' && text[i-size] != '\t' {
			end = i
		}
	}
	return text[start:end], start + 1, i, nil
}

func skipBlanks(text string, i int) int {
	for i < len(text) && (text[i] == ' ' || text[i] == '\t') {
		i++
	}
	return i
}

// maxWidth bounds every width, length and count option.
const maxWidth = 255

// parseWidth reads a width-like option value: a decimal integer in
// [lo, maxWidth].
func parseWidth(o Option, lo int) (int, error) {
	n := 0
	for i := 0; i < len(o.Value); i++ {
		c := o.Value[i]
		if !isDigit(c) {
			return 0, errAt(o.ValueCol+i, "%s=%s: want a number from %d to %d", o.Name, o.Value, lo, maxWidth)
		}
		n = n*10 + int(c-'0')
		if n > maxWidth {
			return 0, errAt(o.ValueCol, "%s=%s: at most %d", o.Name, o.Value, maxWidth)
		}
	}
	if n < lo {
		return 0, errAt(o.ValueCol, "%s=%s: at least %d", o.Name, o.Value, lo)
	}
	return n, nil
}

// parsePad reads a pad= option: one printable ASCII character other than
// a blank or a quote.
func parsePad(o Option) (byte, error) {
	if len(o.Value) != 1 || o.Value[0] <= ' ' || o.Value[0] >= 0x7f || o.Value[0] == '\'' {
		return 0, errAt(o.ValueCol, "pad=%s: want one printable ASCII character", o.Value)
	}
	return o.Value[0], nil
}

// validName reports whether s can name a generator, parameter or part:
// what idforge.ValidateKeyName accepts.
func validName(s string) bool { return idforge.ValidateKeyName(s) == nil }
