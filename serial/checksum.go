package serial

import (
	"context"
	"fmt"

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
