package serial

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"
)

const kindDate = "date"

// Fields of a date layout.
const (
	opLit     = iota
	opYear    // yyyy
	opYear2   // yy
	opMonth   // M, MM
	opDay     // d, dd
	opYearDay // D, DDD
	opHour    // H, HH
	opHour12  // h, hh
	opMinute  // m, mm
	opSecond  // s, ss
	opFrac    // S…SSSSSSSSS
)

type dateOp struct {
	code  byte
	width int    // digits: the minimum for numbers, the exact count for opFrac
	lit   string // opLit
}

// datePart renders @{date:LAYOUT,tz=ZONE}.
type datePart struct {
	col    int
	layout string
	ops    []dateOp
	loc    *time.Location
	max    int
	fine   bool // renders fractions of a second
	cache  atomic.Pointer[dateText]
}

// dateText is the rendering of one whole second, reused while the second
// lasts (layouts without fractions only).
type dateText struct {
	sec  int64
	text []byte
}

func compileDate(e Expr, loc *time.Location) (*datePart, error) {
	if err := e.OnlyOptions("tz"); err != nil {
		return nil, err
	}
	p := &datePart{col: e.Col, layout: e.Arg, loc: loc}
	if o, ok := e.Option("tz"); ok {
		l, err := loadZone(o.Value)
		if err != nil {
			return nil, &SyntaxError{Col: o.ValueCol, Msg: fmt.Sprintf("tz=%s: unknown time zone", o.Value), Err: err}
		}
		p.loc = l
	}
	if e.Arg == "" {
		return nil, errAt(e.ArgCol, "date needs a layout, e.g. @{date:yyyyMMdd}")
	}
	ops, err := parseLayout(e.Arg, e.ArgCol)
	if err != nil {
		return nil, err
	}
	p.ops = ops
	for _, op := range ops {
		switch op.code {
		case opLit:
			p.max += len(op.lit)
		case opYear:
			p.max += 4
		case opYearDay:
			p.max += 3
		case opFrac:
			p.max += op.width
			p.fine = true
		default:
			p.max += 2
		}
	}
	return p, nil
}

// loadZone reads a tz= value: an IANA zone name, "UTC", "Local", or a
// fixed offset such as +08:00, +0800 or -05.
func loadZone(s string) (*time.Location, error) {
	if s[0] == '+' || s[0] == '-' {
		digits := strings.ReplaceAll(s[1:], ":", "")
		if (len(digits) == 2 || len(digits) == 4) && strings.Count(s, ":") <= 1 && allDigits(digits) {
			h := int(digits[0]-'0')*10 + int(digits[1]-'0')
			m := 0
			if len(digits) == 4 {
				m = int(digits[2]-'0')*10 + int(digits[3]-'0')
			}
			if h <= 14 && m < 60 {
				off := (h*60 + m) * 60
				if s[0] == '-' {
					off = -off
				}
				return time.FixedZone("UTC"+s, off), nil
			}
		}
		return nil, fmt.Errorf("offset %q: want ±hh, ±hhmm or ±hh:mm", s)
	}
	return time.LoadLocation(s)
}

// parseLayout translates a Java-style date pattern; col is the column of
// layout[0]. ASCII letters are pattern letters (unknown ones are
// refused); text in single quotes is literal, a doubled quote is a quote;
// any other character is literal.
func parseLayout(layout string, col int) ([]dateOp, error) {
	var ops []dateOp
	lit := func(s string) {
		if n := len(ops); n > 0 && ops[n-1].code == opLit {
			ops[n-1].lit += s
		} else {
			ops = append(ops, dateOp{code: opLit, lit: s})
		}
	}
	for i := 0; i < len(layout); {
		c := layout[i]
		if c == '\'' {
			if i+1 < len(layout) && layout[i+1] == '\'' {
				lit("'")
				i += 2
				continue
			}
			var text []byte
			j := i + 1
			for ; j < len(layout); j++ {
				if layout[j] != '\'' {
					text = append(text, layout[j])
				} else if j+1 < len(layout) && layout[j+1] == '\'' {
					text = append(text, '\'')
					j++
				} else {
					break
				}
			}
			if j >= len(layout) {
				return nil, errAt(col+i, "quote not closed")
			}
			lit(string(text))
			i = j + 1
			continue
		}
		if !isLetter(c) {
			lit(layout[i : i+1])
			i++
			continue
		}
		n := 1
		for i+n < len(layout) && layout[i+n] == c {
			n++
		}
		op, err := patternOp(c, n)
		if err != nil {
			return nil, errAt(col+i, "date layout: %s", err)
		}
		ops = append(ops, op)
		i += n
	}
	return ops, nil
}

// numberLetters are the pattern letters of the numeric fields, each with
// its field and the repetitions it may be written in (yy is opYear2).
var numberLetters = map[byte]struct {
	code   byte
	widths []int
}{
	'y': {opYear, []int{4, 2}}, 'M': {opMonth, []int{2, 1}}, 'd': {opDay, []int{2, 1}},
	'D': {opYearDay, []int{3, 1}}, 'H': {opHour, []int{2, 1}}, 'h': {opHour12, []int{2, 1}},
	'm': {opMinute, []int{2, 1}}, 's': {opSecond, []int{2, 1}},
}

// patternOp returns the field for n repetitions of pattern letter c.
func patternOp(c byte, n int) (dateOp, error) {
	if f, ok := numberLetters[c]; ok {
		if !slices.Contains(f.widths, n) {
			forms := make([]string, len(f.widths))
			for i, w := range f.widths {
				forms[i] = strings.Repeat(string(c), w)
			}
			return dateOp{}, fmt.Errorf("%s: write %s", strings.Repeat(string(c), n), strings.Join(forms, " or "))
		}
		if c == 'y' && n == 2 {
			return dateOp{code: opYear2, width: 2}, nil
		}
		return dateOp{code: f.code, width: n}, nil
	}
	switch c {
	case 'S':
		if n <= 9 {
			return dateOp{code: opFrac, width: n}, nil
		}
		return dateOp{}, fmt.Errorf("at most 9 S (nanoseconds)")
	case 'Y':
		return dateOp{}, fmt.Errorf("unknown pattern letter 'Y' (week year); the year is y")
	}
	return dateOp{}, fmt.Errorf("unknown pattern letter %q; quote literal text: '%c'", c, c)
}

func (p *datePart) MaxLen() int { return p.max }

// digitsOnly reports whether the part renders only digits.
func (p *datePart) digitsOnly() bool {
	for _, op := range p.ops {
		if op.code == opLit && !allDigits(op.lit) {
			return false
		}
	}
	return true
}

func (p *datePart) Append(_ context.Context, dst []byte, ev *Eval) ([]byte, error) {
	if p.fine {
		return p.render(dst, ev.at)
	}
	sec := ev.at.Unix()
	if c := p.cache.Load(); c != nil && c.sec == sec {
		return append(dst, c.text...), nil
	}
	start := len(dst)
	dst, err := p.render(dst, ev.at)
	if err == nil {
		p.cache.Store(&dateText{sec: sec, text: bytes.Clone(dst[start:])})
	}
	return dst, err
}

// render appends t, in the part's zone, as the layout says.
func (p *datePart) render(dst []byte, t time.Time) ([]byte, error) {
	t = t.In(p.loc)
	year, month, day := t.Date()
	hour, minute, second := t.Clock()
	for _, op := range p.ops {
		switch op.code {
		case opLit:
			dst = append(dst, op.lit...)
		case opYear, opYear2:
			if year < 0 || year > 9999 {
				return dst, fmt.Errorf("serial: date at col %d: year %d has no 4-digit form", p.col, year)
			}
			if op.code == opYear2 {
				dst = appendPadded(dst, year%100, 2, '0')
			} else {
				dst = appendPadded(dst, year, 4, '0')
			}
		case opMonth:
			dst = appendPadded(dst, int(month), op.width, '0')
		case opDay:
			dst = appendPadded(dst, day, op.width, '0')
		case opYearDay:
			dst = appendPadded(dst, t.YearDay(), op.width, '0')
		case opHour:
			dst = appendPadded(dst, hour, op.width, '0')
		case opHour12:
			h := hour % 12
			if h == 0 {
				h = 12
			}
			dst = appendPadded(dst, h, op.width, '0')
		case opMinute:
			dst = appendPadded(dst, minute, op.width, '0')
		case opSecond:
			dst = appendPadded(dst, second, op.width, '0')
		case opFrac:
			ns := t.Nanosecond()
			for range 9 - op.width {
				ns /= 10
			}
			dst = appendPadded(dst, ns, op.width, '0')
		}
	}
	return dst, nil
}

// appendPadded appends the decimal form of v ≥ 0, padded on the left
// with pad to width: date fields pad with '0', seq parts with their own.
func appendPadded[I ~int | ~int64](dst []byte, v I, width int, pad byte) []byte {
	var b [maxInt64Digits]byte
	i := len(b)
	for v >= 10 {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
	}
	i--
	b[i] = byte('0' + v)
	for n := len(b) - i; n < width; n++ {
		dst = append(dst, pad)
	}
	return append(dst, b[i:]...)
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return s != ""
}

// periodFields are the date fields that name one period of each length:
// a serial whose count restarts every period must show all of them, or
// the same number comes back in a later period.
var periodFields = map[string][]byte{
	"month":  {opYear, opMonth},
	"day":    {opYear, opMonth, opDay},
	"hour":   {opYear, opMonth, opDay, opHour},
	"minute": {opYear, opMonth, opDay, opHour, opMinute},
	"second": {opYear, opMonth, opDay, opHour, opMinute, opSecond},
}

// shows reports whether the date parts among nodes for which use
// reports true (use nil: all of them), rendered in a zone named zone (any
// zone when zone is ""), together show every field of a period. yy counts
// as the year, DDD as the month and day, and hh (12-hour) does not count
// as the hour.
func shows(nodes []node, period, zone string, use func(node int) bool) bool {
	have := map[byte]bool{}
	for i, n := range nodes {
		d, ok := n.part.(*datePart)
		if !ok || (zone != "" && d.loc.String() != zone) || use != nil && !use(i) {
			continue
		}
		for _, op := range d.ops {
			switch op.code {
			case opYear2:
				have[opYear] = true
			case opYearDay:
				have[opMonth], have[opDay] = true, true
			default:
				have[op.code] = true
			}
		}
	}
	for _, f := range periodFields[period] {
		if !have[f] {
			return false
		}
	}
	return true
}
