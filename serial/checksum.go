package serial

import (
	"context"
	"fmt"
	"strings"

	"github.com/idforge/idforge"
)

const kindChecksum = "checksum"

// Checksum algorithms.
const (
	algoMod     = "mod"     // JD's n*9%31%10 on the number
	algoLuhn    = "luhn"    // Luhn mod 10, as on payment cards
	algoISO7064 = "iso7064" // ISO 7064 MOD 11-2: 0-9 or X
)

// checksumPart renders @{checksum:ALGO,of=PART}: one check character
// computed from the digits of another part, or of all the text before it.
type checksumPart struct {
	col   int
	algo  string
	of    string
	ofCol int
}

// refSpec is a reference as written, with its column, for built-in parts.
type refSpec struct {
	name string
	col  int
}

func compileChecksum(e Expr) (*checksumPart, error) {
	if err := e.OnlyOptions("of"); err != nil {
		return nil, err
	}
	switch e.Arg {
	case algoMod, algoLuhn, algoISO7064:
	case "":
		return nil, errAt(e.ArgCol, "checksum needs an algorithm: %s, %s or %s", algoMod, algoLuhn, algoISO7064)
	default:
		return nil, errAt(e.ArgCol, "checksum:%s: unknown algorithm (algorithms: %s, %s, %s)", e.Arg, algoMod, algoLuhn, algoISO7064)
	}
	p := &checksumPart{col: e.Col, algo: e.Arg, of: "all", ofCol: e.Col}
	if o, ok := e.Option("of"); ok {
		if o.Value != "all" && !validName(o.Value) {
			return nil, errAt(o.ValueCol, "of=%s: not a part name", o.Value)
		}
		p.of, p.ofCol = o.Value, o.ValueCol
	}
	return p, nil
}

func (p *checksumPart) refSpecs() []refSpec { return []refSpec{{name: p.of, col: p.ofCol}} }

func (p *checksumPart) MaxLen() int { return 1 }

// digitsOnly reports whether the part renders only digits: iso7064 may
// render X.
func (p *checksumPart) digitsOnly() bool { return p.algo != algoISO7064 }

func (p *checksumPart) Append(_ context.Context, dst []byte, ev *Eval) ([]byte, error) {
	d := ev.digits[:0]
	r := ev.t.nodes[ev.cur].refs[0]
	if r.node >= 0 {
		s := ev.spans[r.node]
		v := ev.buf[s.start:s.end]
		for i, c := range v {
			if !isDigit(c) {
				return dst, fmt.Errorf("%w: serial: checksum at col %d: %s is %q, character %d is not a digit", idforge.ErrInvalidArgument, p.col, p.of, v, i+1)
			}
		}
		d = append(d, v...)
	} else {
		for i := range ev.cur {
			if n := &ev.t.nodes[i]; n.part == nil {
				d = appendDigits(d, n.static)
			} else {
				s := ev.spans[i]
				d = appendDigits(d, ev.buf[s.start:s.end])
			}
		}
	}
	ev.digits = d
	if len(d) == 0 {
		return dst, fmt.Errorf("%w: serial: checksum at col %d: %s has no digits", idforge.ErrInvalidArgument, p.col, p.of)
	}
	return append(dst, checkDigit(p.algo, d)), nil
}

// checkDigit computes the check character of the ASCII digits d.
func checkDigit(algo string, d []byte) byte {
	switch algo {
	case algoMod:
		return '0' + byte(modCheck(d))
	case algoLuhn:
		return '0' + byte(luhnCheck(d))
	default:
		c := iso7064Check(d)
		if c == 10 {
			return 'X'
		}
		return '0' + byte(c)
	}
}

// modCheck is the check digit of JD's serial-number platform,
// n * 9 % 31 % 10, for the number n the digits spell. It works on n mod
// 31, so n may have any number of digits: n*9 % 31 = (n%31)*9 % 31.
func modCheck(d []byte) int {
	r := 0
	for _, c := range d {
		r = (r*10 + int(c-'0')) % 31
	}
	return r * 9 % 31 % 10
}

// luhnCheck is the digit that, appended to d, makes a valid Luhn number:
// from the right, every other digit of d, starting with the last, is
// doubled (minus 9 when over 9), and the check digit tops the sum up to a
// multiple of 10.
func luhnCheck(d []byte) int {
	sum := 0
	double := true
	for i := len(d) - 1; i >= 0; i-- {
		v := int(d[i] - '0')
		if double {
			if v *= 2; v > 9 {
				v -= 9
			}
		}
		sum += v
		double = !double
	}
	return (10 - sum%10) % 10
}

// iso7064Check is the ISO 7064 MOD 11-2 check value of d, 0 to 10 (10 is
// written X), as in ISO 27729 (ISNI) and ORCID identifiers.
func iso7064Check(d []byte) int {
	p := 0
	for _, c := range d {
		p = (p + int(c-'0')) * 2 % 11
	}
	return (12 - p) % 11
}

// appendDigits appends the ASCII digits of v to d.
func appendDigits[T string | []byte](d []byte, v T) []byte {
	for i := 0; i < len(v); i++ {
		if isDigit(v[i]) {
			d = append(d, v[i])
		}
	}
	return d
}

// paramSum is a checksum over all the text before it that only
// parameters can give digits: nothing else before it always renders one.
// Its request's values are checked for a digit before any number is
// drawn (checkParams), so a request it would fail on uses up none.
type paramSum struct {
	node   int   // the checksum's node
	params []int // the nodes of the parameters before it
}

// digitsBefore sorts out, for every checksum over all the text before it,
// where that text's digits come from, so that a checksum never fails
// after numbers were drawn for its serial:
//
//   - a digit in the static text, or a part that always renders one
//     (a seq, a date field, mod and luhn checksums, a part with digits
//     only), settles it: the checksum always has digits;
//   - else, parameters before it may give the digits: each request is
//     checked before anything is drawn (t.paramSums);
//   - else, with no parameter before it, the text has digits only by
//     chance (random characters, an iso7064 checksum that may be X) or
//     never: the template is refused.
//
// A custom part before it may render digits or not, which only it knows:
// its checksum is checked as it renders, as before.
func (t *Template) digitsBefore() error {
	for i := range t.nodes {
		n := &t.nodes[i]
		sum, ok := n.part.(*checksumPart)
		if !ok || n.refs[0].node != -1 {
			continue
		}
		var params []int
		settled := false
		for j := range i {
			o := &t.nodes[j]
			switch p := o.part.(type) {
			case nil:
				settled = settled || strings.ContainsAny(o.static, digitChars)
			case *paramPart:
				if p.digitsOnly() {
					settled = true // a value is not empty, and all digits
				} else {
					params = append(params, j)
				}
			default:
				if !o.builtin {
					settled = true // only it knows: checked as it renders
				} else {
					settled = settled || alwaysDigit(o.part)
				}
			}
		}
		switch {
		case settled:
		case len(params) > 0:
			t.paramSums = append(t.paramSums, paramSum{node: i, params: params})
		default:
			return errAt(n.col, "checksum:%s sums the digits of the text before it, which need not have any: nothing there always renders a digit (a seq, a date field, a digit in the text, a part with chars=digits); put one before it, or name a part of digits with of=", sum.algo)
		}
	}
	return nil
}

// alwaysDigit reports whether a built-in part renders at least one digit
// in every serial.
func alwaysDigit(p Part) bool {
	switch p := p.(type) {
	case *seqPart:
		return true // a number, padded or not
	case *datePart:
		for _, op := range p.ops {
			if op.code != opLit || strings.ContainsAny(op.lit, digitChars) {
				return true
			}
		}
		return false
	case *randomPart:
		return p.digitsOnly()
	case *checksumPart:
		return p.digitsOnly() // iso7064 may render X
	}
	return false
}

// checkParams checks a request's parameters before any number is drawn:
// every value (see paramPart.value), then that each checksum whose digits
// only parameters can give gets some. Errors wrap
// idforge.ErrInvalidArgument.
func (t *Template) checkParams(params map[string]string) error {
	for _, i := range t.paramNodes {
		if _, err := t.nodes[i].part.(*paramPart).value(params); err != nil {
			return err
		}
	}
	for _, s := range t.paramSums {
		var values []string
		for _, j := range s.params {
			p := t.nodes[j].part.(*paramPart)
			v := params[p.name]
			if strings.ContainsAny(v, digitChars) {
				values = nil
				break
			}
			values = append(values, fmt.Sprintf("parameter %q is %q", p.name, v))
		}
		if values != nil {
			n := &t.nodes[s.node]
			return fmt.Errorf("%w: serial: checksum at col %d: the text before it has no digits, which only parameters give here (%s)",
				idforge.ErrInvalidArgument, n.col, strings.Join(values, ", "))
		}
	}
	return nil
}
