package serial

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/idforge/idforge"
)

// UniqueCounter is implemented by a custom Part that declares itself a
// counter: a part whose texts never repeat. A template is accepted only
// when it holds a counter (see "Uniqueness" in the package
// documentation); a custom part that does not implement UniqueCounter, or
// whose UniqueCounter returns false, is not one.
type UniqueCounter interface {
	Part
	// UniqueCounter reports whether no two evaluations of the part, in
	// any process and at any time, render the same text (evaluations
	// that fail render nothing). A part that draws from a key or another
	// never-repeating source may say true; one that renders the time, a
	// parameter or random characters must not.
	UniqueCounter() bool
}

// fixedLener is implemented by the built-in parts: fixedLen reports
// whether every text the part renders has the same length, so that the
// parts after it start at a known offset.
type fixedLener interface{ fixedLen() bool }

// charser is implemented by the parts whose text must be read back out
// of a serial (seq and date): chars returns every byte the part can
// render, so that a neighbouring byte outside the set marks where the
// part's text ends.
type charser interface{ chars() *[256]bool }

// checkUnique refuses a template that cannot prove that it never renders
// the same serial twice. The proof needs a counter (a seq part, or a
// custom part that declares itself a UniqueCounter) whose text can be
// read back out of every serial: then two serials that are equal hold
// the same number, which the counter never hands out twice. A per-period
// counter repeats its numbers in every period, so its period must be read
// back too, from a date (checkPeriods says which fields).
//
// The text of a part can be read back when the serial says where it
// starts and ends: every part before it has a fixed length (or every
// part after it), and it has a fixed length itself or is closed on the
// other side by fixed-length parts or by static text that begins (ends)
// with a byte it never renders. Otherwise a neighbour of varying length
// can swap characters with it: param "A1" + number 23 and param "A12" +
// number 3 both render A123.
//
// When several counters are present one proof is enough; when none
// works, the error describes the first counter's problem.
func (t *Template) checkUnique() error {
	var first error
	for i := range t.nodes {
		isCounter, err := t.proveCounter(i)
		if !isCounter {
			continue
		}
		if err == nil {
			t.uniqueBy = i
			return nil
		}
		if first == nil {
			first = err
		}
	}
	if first != nil {
		return first
	}
	hint := ""
	for _, n := range t.nodes {
		if n.part != nil && !n.builtin {
			hint = fmt.Sprintf("; a custom kind such as %s counts only when its Part implements serial.UniqueCounter", n.kind)
			break
		}
	}
	return errAt(1, "the template has no counter, so nothing keeps two serials apart: static text, dates, parameters and random characters all repeat; add a number that never repeats, such as @{seq:KEY} (a key, a configured source or a per-period counter)%s", hint)
}

// proveCounter reports whether node i is a counter and, if it is, why it
// does not make the template unique (nil when it does).
func (t *Template) proveCounter(i int) (bool, error) {
	n := &t.nodes[i]
	switch p := n.part.(type) {
	case *seqPart:
		what := "seq:" + p.name
		if why := t.unreadable(i, what, "give "+what+" a width="); why != "" {
			return true, errAt(n.col, "%s: the serial does not show its number unambiguously: %s", what, why)
		}
		if p.by != "" {
			// The number repeats from one value to the next: the serial
			// must show the value too.
			for j, o := range t.nodes {
				if o.part != Part(p.byParam) {
					continue
				}
				if why := t.unreadable(j, "param:"+p.by, "give param:"+p.by+" a width="); why != "" {
					return true, errAt(n.col, "%s,by=%s counts apart for each value of %s, so the serial must show that value unambiguously: %s", what, p.by, p.by, why)
				}
			}
		}
		if p.ctr == nil {
			return true, nil
		}
		// Dates render the latest period of all the template's
		// counters; with two of them the date may show the other
		// one's period, and this one's numbers restart unseen.
		for j, o := range t.nodes {
			if op, ok := o.part.(*seqPart); ok && j != i && op.ctr != nil {
				return true, errAt(n.col, "%s counts per period next to another per-period counter (seq:%s at col %d): the dates show the later of their periods, so neither counter's own period can be read back; add a number that never repeats, such as a key", what, op.name, o.col)
			}
		}
		pr, ok := p.ctr.(idforge.PeriodReporter)
		if !ok {
			return true, errAt(n.col, "%s counts per period but does not say which (it implements no idforge.PeriodReporter), so no date can be proven to tell its periods apart", what)
		}
		period, loc := pr.CountsPer()
		if _, known := periodFields[period]; !known {
			return true, errAt(n.col, "%s counts per %q, a period no date field can show (periods: second, minute, hour, day, month)", what, period)
		}
		zone := periodZone(period, loc)
		if shows(t.nodes, period, zone, func(d int) bool { return t.fixedLen(d) && t.unreadable(d, "", "") == "" }) {
			return true, nil
		}
		// checkPeriods has made sure the fields are there: some of
		// them are in a date whose text cannot be read back.
		for d, dn := range t.nodes {
			if dp, ok := dn.part.(*datePart); !ok || zone != "" && dp.loc.String() != zone {
				continue
			}
			if !t.fixedLen(d) {
				return true, errAt(dn.col, "%s counts per %s, and this date cannot be proven to show the %s unambiguously: its fields vary in width (yyyyMd renders both 2025-1-11 and 2025-11-1 as 2025111); write them padded: MM, dd, HH, mm, ss, DDD rather than M, d, H, m, s, D", what, period, period)
			}
			if why := t.unreadable(d, "the date", ""); why != "" {
				return true, errAt(dn.col, "%s counts per %s, and the serial does not show this date's %s unambiguously: %s", what, period, period, why)
			}
		}
		return true, errAt(n.col, "%s counts per %s, and no date that can be read back shows the %s", what, period, period)
	case UniqueCounter:
		if !p.UniqueCounter() {
			return false, nil
		}
		if why := t.unreadable(i, n.kind, ""); why != "" {
			return true, errAt(n.col, "%s: the serial does not show its text unambiguously: %s", n.kind, why)
		}
		return true, nil
	}
	return false, nil
}

// unreadable returns "" when the text of node i can be read back out of
// every serial (see checkUnique), or else why not and what would help.
// name names the part ("seq:order") and selfFix is the change to the part
// itself that would help ("" when there is none).
func (t *Template) unreadable(i int, name, selfFix string) string {
	prevVar, nextVar := -1, -1
	for j := i - 1; j >= 0 && prevVar < 0; j-- {
		if !t.fixedLen(j) {
			prevVar = j
		}
	}
	for j := i + 1; j < len(t.nodes) && nextVar < 0; j++ {
		if !t.fixedLen(j) {
			nextVar = j
		}
	}
	startKnown, endKnown := prevVar < 0, nextVar < 0
	var set *[256]bool
	if c, ok := t.nodes[i].part.(charser); ok {
		set = c.chars()
	}
	// A static byte the part never renders closes it on that side.
	closedBefore := i > 0 && t.nodes[i-1].part == nil && set != nil && !set[t.nodes[i-1].static[len(t.nodes[i-1].static)-1]]
	closedAfter := i+1 < len(t.nodes) && t.nodes[i+1].part == nil && set != nil && !set[t.nodes[i+1].static[0]]
	self := t.fixedLen(i)
	switch {
	case startKnown && (self || endKnown || closedAfter), endKnown && (self || closedBefore):
		return ""
	}
	// Name the nearest neighbour of varying length on a side that is
	// not known, and the changes that would settle it.
	other := prevVar
	if other < 0 {
		other = nextVar
	}
	o := &t.nodes[other]
	var fixes []string
	if !self && selfFix != "" {
		fixes = append(fixes, selfFix)
	}
	fixes = append(fixes, fmt.Sprintf("give the %s part at col %d a fixed length%s", o.kind, o.col, fixedLenHint(o.kind)))
	if !self && set != nil {
		for _, c := range []byte("-_/|#.") {
			if !set[c] {
				fixes = append(fixes, fmt.Sprintf("put text between them that %s never renders (such as %c)", name, c))
				break
			}
		}
	}
	if n := len(fixes); n > 1 {
		fixes[n-1] = "or " + fixes[n-1]
	}
	return fmt.Sprintf("the %s part at col %d varies in length and nothing marks where one ends and the other begins, so two different values could render the same serial; %s",
		o.kind, o.col, strings.Join(fixes, ", "))
}

// fixedLen reports whether node i renders the same number of bytes in
// every serial. Custom parts say nothing about their length, so they
// count as varying.
func (t *Template) fixedLen(i int) bool {
	n := &t.nodes[i]
	if n.part == nil {
		return true
	}
	f, ok := n.part.(fixedLener)
	return ok && f.fixedLen()
}

// fixedLenHint says how a part of kind gets a fixed length.
func fixedLenHint(kind string) string {
	switch kind {
	case kindParam, kindSeq:
		return " (width=)"
	case kindDate:
		return " (MM, dd, HH, mm, ss, DDD rather than M, d, H, m, s, D)"
	}
	return ""
}

// periodZone is the zone a date must render in to show a counter's
// period: any zone ("") for seconds and minutes, which line up in every
// zone, else the counter's own.
func periodZone(period string, loc *time.Location) string {
	if period == "second" || period == "minute" || loc == nil {
		return ""
	}
	return loc.String()
}

// digitSet is the bytes a number renders.
var digitSet = func() *[256]bool {
	var s [256]bool
	for c := '0'; c <= '9'; c++ {
		s[c] = true
	}
	return &s
}()

func (p *seqPart) fixedLen() bool { return p.width > 0 }

func (p *seqPart) chars() *[256]bool {
	if p.width == 0 || isDigit(p.pad) {
		return digitSet
	}
	s := *digitSet
	s[p.pad] = true
	return &s
}

func (p *datePart) fixedLen() bool {
	return !slices.ContainsFunc(p.ops, func(op dateOp) bool {
		switch op.code {
		case opLit, opYear, opYear2, opFrac:
			return false
		case opYearDay:
			return op.width < 3
		}
		return op.width < 2
	})
}

func (p *datePart) chars() *[256]bool {
	s := *digitSet
	for _, op := range p.ops {
		for i := 0; i < len(op.lit); i++ {
			s[op.lit[i]] = true
		}
	}
	return &s
}

func (p *paramPart) fixedLen() bool    { return p.width > 0 }
func (p *checksumPart) fixedLen() bool { return true }
func (p *randomPart) fixedLen() bool   { return true }
