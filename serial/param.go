package serial

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/chars"
)

const kindParam = "param"

// defaultParamMax is the length limit of a param without width= or max=.
const defaultParamMax = 32

// charSet is a named set of ASCII characters, for chars= options.
type charSet struct {
	name     string
	alphabet string // the characters in ascending order
	has      [256]bool
}

const (
	lowerChars = "abcdefghijklmnopqrstuvwxyz"
	upperChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	digitChars = "0123456789"
)

// charSets are the sets chars= can name.
var charSets = func() map[string]*charSet {
	m := map[string]*charSet{}
	for name, alphabet := range map[string]string{
		"digits":     digitChars,
		"alpha":      upperChars + lowerChars,
		"upper":      upperChars,
		"lower":      lowerChars,
		"alnum":      digitChars + upperChars + lowerChars,
		"upperalnum": digitChars + upperChars,
		"loweralnum": digitChars + lowerChars,
		"hex":        digitChars + "abcdef",
		"upperhex":   digitChars + "ABCDEF",
		"crockford":  digitChars + "ABCDEFGHJKMNPQRSTVWXYZ",
		"safe":       "-" + digitChars + upperChars + "_" + lowerChars,
	} {
		s := &charSet{name: name, alphabet: alphabet}
		for i := 0; i < len(alphabet); i++ {
			s.has[alphabet[i]] = true
		}
		m[name] = s
	}
	return m
}()

func charSetNames() string {
	var names []string
	for name := range charSets {
		names = append(names, name)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// parseCharSet reads a chars= option.
func parseCharSet(o Option) (*charSet, error) {
	if s, ok := charSets[o.Value]; ok {
		return s, nil
	}
	return nil, errAt(o.ValueCol, "chars=%s: unknown set (sets: %s)", o.Value, charSetNames())
}

// paramPart renders @{param:NAME,…}: a request parameter, validated.
type paramPart struct {
	col    int
	name   string
	width  int  // 0: any length up to max
	pad    byte // 0: the value must have exactly width characters
	max    int
	set    *charSet
	in     map[string]bool // in=A|B|C: the values allowed; nil: any the other limits allow
	inText string
}

func compileParam(e Expr) (*paramPart, error) {
	if err := e.OnlyOptions("width", "pad", "chars", "max", "in"); err != nil {
		return nil, err
	}
	if !validName(e.Arg) {
		if e.Arg == "" {
			return nil, errAt(e.ArgCol, "param needs a parameter name, e.g. @{param:area}")
		}
		return nil, errAt(e.ArgCol, "param:%s: a name is 1 to %d letters, digits or . _ : -", e.Arg, idforge.MaxKeyLen)
	}
	p := &paramPart{col: e.Col, name: e.Arg, max: defaultParamMax, set: charSets["safe"]}
	if o, ok := e.Option("chars"); ok {
		var err error
		if p.set, err = parseCharSet(o); err != nil {
			return nil, err
		}
	}
	w, hasW := e.Option("width")
	if hasW {
		var err error
		if p.width, err = parseWidth(w, 1); err != nil {
			return nil, err
		}
		p.max = p.width
	}
	if o, ok := e.Option("max"); ok {
		if hasW {
			return nil, errAt(o.Col, "max= and width= exclude each other")
		}
		var err error
		if p.max, err = parseWidth(o, 1); err != nil {
			return nil, err
		}
	}
	if o, ok := e.Option("pad"); ok {
		if !hasW {
			return nil, errAt(o.Col, "pad= needs width=")
		}
		var err error
		if p.pad, err = parsePad(o); err != nil {
			return nil, err
		}
		if !p.set.has[p.pad] {
			return nil, errAt(o.ValueCol, "pad=%c is not in chars=%s", p.pad, p.set.name)
		}
	}
	if o, ok := e.Option("in"); ok {
		p.in, p.inText = map[string]bool{}, o.Value
		for _, v := range strings.Split(o.Value, "|") {
			check := *p
			check.in = nil
			if _, err := check.value(map[string]string{p.name: v}); err != nil {
				return nil, errAt(o.ValueCol, "in=%s: value %q: %v", o.Value, v, strings.TrimPrefix(err.Error(), idforge.ErrInvalidArgument.Error()+": "))
			}
			p.in[v] = true
		}
	}
	return p, nil
}

func (p *paramPart) argName() string { return p.name }

// digitsOnly reports whether the part renders only digits.
func (p *paramPart) digitsOnly() bool {
	return allDigits(p.set.alphabet) && (p.pad == 0 || isDigit(p.pad))
}

func (p *paramPart) MaxLen() int { return p.max }

// value returns the parameter from params, or an error wrapping
// idforge.ErrInvalidArgument that names it. Characters are checked before
// the length, as for key names: a value of characters outside the set is
// refused for them, naming the first (its position, itself and its code
// point), not for the bytes they take.
func (p *paramPart) value(params map[string]string) (string, error) {
	v, ok := params[p.name]
	if !ok {
		return "", fmt.Errorf("%w: serial: parameter %q is missing", idforge.ErrInvalidArgument, p.name)
	}
	if v == "" {
		return "", fmt.Errorf("%w: serial: parameter %q is empty", idforge.ErrInvalidArgument, p.name)
	}
	if r, refused := chars.FirstRefused(v, p.allows); refused {
		return "", fmt.Errorf("%w: serial: parameter %q: %s is not in chars=%s", idforge.ErrInvalidArgument, p.name, r, p.set.name)
	}
	// Every character is ASCII now: the length in bytes is the length in
	// characters.
	switch {
	case p.width > 0 && p.pad == 0 && len(v) != p.width:
		return "", fmt.Errorf("%w: serial: parameter %q is %d characters long, want %d", idforge.ErrInvalidArgument, p.name, len(v), p.width)
	case len(v) > p.max:
		return "", fmt.Errorf("%w: serial: parameter %q is %d characters long, at most %d allowed", idforge.ErrInvalidArgument, p.name, len(v), p.max)
	case p.in != nil && !p.in[v]:
		return "", fmt.Errorf("%w: serial: parameter %q: %q is not one of in=%s", idforge.ErrInvalidArgument, p.name, v, p.inText)
	}
	return v, nil
}

// allows reports whether c is in the part's chars= set (sets are ASCII).
func (p *paramPart) allows(c rune) bool { return c < 0x80 && p.set.has[c] }

func (p *paramPart) Append(_ context.Context, dst []byte, ev *Eval) ([]byte, error) {
	v, err := p.value(ev.params)
	if err != nil {
		return dst, err
	}
	for n := len(v); n < p.width; n++ {
		dst = append(dst, p.pad)
	}
	return append(dst, v...), nil
}
