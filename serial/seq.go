package serial

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"

	"github.com/idforge/idforge"
)

const kindSeq = "seq"

// maxInt64Digits is the width of the largest int64, 9223372036854775807.
const maxInt64Digits = 19

// BoundedGenerator is implemented by a source that can hand out numbers
// below a limit without taking any at or above it; segment.Allocator (a
// segment key) is one. A seq part with width=N draws from such a source
// with the limit 10^N, so that a number too wide for the width is never
// drawn: it stays for other users of the source, and an answer that is
// an error uses up no number. Without width=, batches are drawn from it
// under math.MaxInt64, so that one crossing the end of the source's
// numbers gets those before the end instead of failing whole.
type BoundedGenerator interface {
	// NextNBelow returns between 1 and n numbers, all below limit, in
	// the order the source hands them out; fewer than n only when the
	// next number would be limit or more. When the next number is limit
	// or more it takes none and returns an error wrapping
	// idforge.ErrSpaceExhausted.
	NextNBelow(ctx context.Context, n int, limit int64) ([]int64, error)
}

// Creator is implemented by a Resolver that can create a source on
// first use, for seq parts with by=: @{seq:jobs,by=unit} draws from the
// source NAME-VALUE (jobs-6541 for unit=6541), which Create returns,
// creating it when it does not exist yet. Only names the template's
// limits allow reach Create (see "Counters chosen by a parameter").
type Creator interface {
	Create(ctx context.Context, name string) (Source, error)
}

// A CounterSet is a PeriodCounter that counts apart, the way it counts
// (the same store, period and time zone), for any value: with such a
// counter NAME, @{seq:NAME,by=PARAM} counts per period for each value of
// PARAM in the counter's member for it. sequence.Counter is one.
type CounterSet interface {
	idforge.PeriodCounter
	// Member returns the counter of value, the same one every time.
	Member(ctx context.Context, value string) (idforge.PeriodCounter, error)
}

// seqSrc is what a seq part draws from.
type seqSrc struct {
	gen     idforge.Generator
	batch   idforge.BatchGenerator // gen, when it is one
	bounded BoundedGenerator       // gen, when it is one: batches take only numbers below limit, or what int64 holds
	ctr     idforge.PeriodCounter
}

// seqPart renders @{seq:NAME,width=N,pad=C}: a number from a Generator or
// a PeriodCounter; with by=PARAM, from the Generator NAME-VALUE chosen by
// the parameter's value.
type seqPart struct {
	col  int
	name string
	seqSrc
	limit int64 // 10^width: the smallest number too wide; 0 when width leaves every int64 room
	width int   // 0: as many digits as the number has
	pad   byte  // fills up to width

	by       string     // the parameter that picks the source; "" for one source
	byCol    int        // where by= is
	byParam  *paramPart // the param part of by, linked after compiling
	creator  Creator    // makes NAME-VALUE a generator, when NAME is no CounterSet
	resolver Resolver
	bySrc    sync.Map // value → *seqSrc
}

func compileSeq(ctx context.Context, e Expr, r Resolver) (*seqPart, error) {
	if err := e.OnlyOptions("width", "pad", "by"); err != nil {
		return nil, err
	}
	if !validName(e.Arg) {
		if e.Arg == "" {
			return nil, errAt(e.ArgCol, "seq needs a generator name, e.g. @{seq:order}")
		}
		return nil, errAt(e.ArgCol, "seq:%s: a name is 1 to %d letters, digits or . _ : -", e.Arg, idforge.MaxKeyLen)
	}
	p := &seqPart{col: e.Col, name: e.Arg, pad: '0'}
	var err error
	if p.width, p.pad, err = widthPad(e); err != nil {
		return nil, err
	}
	if p.width > 0 && p.width < maxInt64Digits {
		p.limit = 1
		for range p.width {
			p.limit *= 10
		}
	}
	if p.pad != '0' && isDigit(p.pad) {
		o, _ := e.Option("pad")
		return nil, errAt(o.ValueCol, "pad=%c: a number padded with a digit other than 0 is ambiguous (width=3,pad=%c renders %c and %c%c alike); pad with 0 or a character that is not a digit", p.pad, p.pad, p.pad, p.pad, p.pad)
	}
	if r == nil {
		return nil, errAt(e.ArgCol, "seq:%s: no Resolver to find generators with", e.Arg)
	}
	if o, ok := e.Option("by"); ok {
		if !validName(o.Value) {
			return nil, errAt(o.ValueCol, "by=%s: a parameter name is 1 to %d letters, digits or . _ : -", o.Value, idforge.MaxKeyLen)
		}
		p.by, p.byCol, p.resolver = o.Value, o.Col, r
		// On a per-period counter NAME, by= counts per period for each
		// value in NAME's members (its ctr is NAME, whose period the
		// checks read); on anything else, in generators NAME-VALUE.
		base, err := r.Resolve(ctx, e.Arg)
		switch {
		case err == nil && base.Counter != nil:
			if _, ok := base.Counter.(CounterSet); !ok {
				return nil, errAt(o.Col, "seq:%s,by=%s: %s counts per period but cannot count apart for each value of %s (it implements no serial.CounterSet)", e.Arg, o.Value, e.Arg, o.Value)
			}
			p.ctr = base.Counter
			return p, nil
		case err != nil && !errors.Is(err, idforge.ErrUnknownKey):
			return nil, &SyntaxError{Col: e.ArgCol, Msg: fmt.Sprintf("seq:%s", e.Arg), Err: err}
		}
		var ok bool
		if p.creator, ok = r.(Creator); !ok {
			return nil, errAt(o.Col, "seq:%s,by=%s: the Resolver cannot create sources (it implements no serial.Creator)", e.Arg, o.Value)
		}
		return p, nil
	}
	src, err := r.Resolve(ctx, e.Arg)
	if err != nil {
		return nil, &SyntaxError{Col: e.ArgCol, Msg: fmt.Sprintf("seq:%s", e.Arg), Err: err}
	}
	switch {
	case src.Generator != nil && src.Counter != nil:
		return nil, errAt(e.ArgCol, "seq:%s: the Resolver returned both a Generator and a PeriodCounter, want one", e.Arg)
	case src.Counter != nil:
		p.ctr = src.Counter
	case src.Generator != nil:
		p.gen = src.Generator
		p.batch, _ = src.Generator.(idforge.BatchGenerator)
		p.bounded, _ = src.Generator.(BoundedGenerator)
	default:
		return nil, errAt(e.ArgCol, "seq:%s: the Resolver returned <nil>, want an idforge.Generator or idforge.PeriodCounter", e.Arg)
	}
	return p, nil
}

// widthPad reads the width= and pad= options shared by seq and param:
// pad needs a width.
func widthPad(e Expr) (int, byte, error) {
	width, pad := 0, byte('0')
	w, hasW := e.Option("width")
	if hasW {
		var err error
		if width, err = parseWidth(w, 1); err != nil {
			return 0, 0, err
		}
	}
	if o, ok := e.Option("pad"); ok {
		if !hasW {
			return 0, 0, errAt(o.Col, "pad= needs width=")
		}
		var err error
		if pad, err = parsePad(o); err != nil {
			return 0, 0, err
		}
	}
	return width, pad, nil
}

func (p *seqPart) argName() string { return p.name }

// digitsOnly reports whether the part renders only digits.
func (p *seqPart) digitsOnly() bool { return isDigit(p.pad) }

func (p *seqPart) MaxLen() int {
	if p.width > 0 {
		return p.width
	}
	return maxInt64Digits
}

// linkBy finds the param part of every seq part with by= and checks the
// limits that keep the sources it creates within bounds: the parameter
// must be in the template (its chars= and width= or max= check every
// value before a source is chosen), and NAME-VALUE must be a valid key
// name for every value it allows.
func (t *Template) linkBy() error {
	for _, n := range t.nodes {
		sp, ok := n.part.(*seqPart)
		if !ok || sp.by == "" {
			continue
		}
		for _, o := range t.nodes {
			if pp, ok := o.part.(*paramPart); ok && pp.name == sp.by {
				sp.byParam = pp
				break
			}
		}
		if sp.byParam == nil {
			return errAt(sp.byCol, "seq:%s,by=%s: the template has no @{param:%s}: the parameter that picks the counter must be shown in the serial (and is checked by it)", sp.name, sp.by, sp.by)
		}
		if pp := sp.byParam; pp.pad != 0 {
			return errAt(sp.byCol, "seq:%s,by=%s: param:%s pads with %c, which its values may hold too (width=%d,pad=%c renders %c and %c%c alike), so two values could share a counter's number in one serial; drop pad=", sp.name, sp.by, sp.by, pp.pad, pp.width, pp.pad, pp.pad, pp.pad, pp.pad)
		}
		if l := len(sp.name) + 1 + sp.byParam.max; l > idforge.MaxKeyLen {
			return errAt(sp.byCol, "seq:%s,by=%s: counter names %s-VALUE would be up to %d characters, at most %d allowed; lower the parameter's max= or width=", sp.name, sp.by, sp.name, l, idforge.MaxKeyLen)
		}
		for _, c := range sp.byParam.set.alphabet {
			if !validName(string(c)) {
				return errAt(sp.byCol, "seq:%s,by=%s: chars=%s allows %q, which a counter name cannot hold", sp.name, sp.by, sp.byParam.set.name, c)
			}
		}
	}
	return nil
}

// source returns what the part draws from for this evaluation: its one
// source, or, with by=, the source of the parameter's value (created on
// first use; the parameters were checked before).
func (p *seqPart) source(ctx context.Context, ev *Eval) (*seqSrc, error) {
	if p.by == "" {
		return &p.seqSrc, nil
	}
	v := ev.params[p.by]
	if s, ok := p.bySrc.Load(v); ok {
		return s.(*seqSrc), nil
	}
	name := p.name + "-" + v
	if set, ok := p.ctr.(CounterSet); ok {
		// A name that is a source already may hold numbers of serials
		// already issued (an earlier idforge counted each value of such
		// a template in a key NAME-VALUE that never restarts): counting
		// the value afresh could repeat them.
		if _, err := p.resolver.Resolve(ctx, name); !errors.Is(err, idforge.ErrUnknownKey) {
			return nil, fmt.Errorf("%w: serial: seq %s,by=%s counts per period for each value, in %q, but %q already names a key, source or counter (an earlier idforge counted each value there without restarting), whose numbers may be in serials already issued; define the serial with a new counter name",
				idforge.ErrUnsafeChange, p.name, p.by, name, name)
		}
		ctr, err := set.Member(ctx, v)
		if err != nil {
			return nil, fmt.Errorf("serial: seq %q: %w", name, err)
		}
		actual, _ := p.bySrc.LoadOrStore(v, &seqSrc{ctr: ctr})
		return actual.(*seqSrc), nil
	}
	src, err := p.creator.Create(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("serial: seq %q: %w", name, err)
	}
	if src.Generator == nil || src.Counter != nil {
		return nil, fmt.Errorf("%w: serial: seq %q (by=%s) must be a generator such as a key, not a per-period counter", idforge.ErrInvalidArgument, name, p.by)
	}
	s := &seqSrc{gen: src.Generator}
	s.batch, _ = src.Generator.(idforge.BatchGenerator)
	s.bounded, _ = src.Generator.(BoundedGenerator)
	actual, _ := p.bySrc.LoadOrStore(v, s)
	return actual.(*seqSrc), nil
}

func (p *seqPart) Append(ctx context.Context, dst []byte, ev *Eval) ([]byte, error) {
	var v int64
	var err error
	var src *seqSrc
	if ev.pre == nil || ev.pre[ev.cur] == nil {
		if src, err = p.source(ctx, ev); err != nil {
			return dst, err
		}
	}
	switch {
	case ev.pre != nil && ev.pre[ev.cur] != nil:
		v = ev.pre[ev.cur][ev.k]
	case src.ctr != nil:
		var period = ev.now
		v, period, err = src.ctr.Next(ctx, ev.now)
		ev.notePeriod(period)
	case src.bounded != nil && p.limit > 0:
		var vals []int64
		vals, err = src.bounded.NextNBelow(ctx, 1, p.limit)
		if err == nil && len(vals) != 1 {
			err = fmt.Errorf("NextNBelow(1) returned %d numbers", len(vals))
		}
		if err == nil {
			v = vals[0]
		}
	default:
		v, err = src.gen.Next(ctx)
	}
	if err != nil {
		return dst, p.sourceErr(src, err)
	}
	if v < 0 {
		return dst, fmt.Errorf("serial: seq %q: negative number %d", p.name, v)
	}
	n := digits(v)
	if p.width > 0 && n > p.width {
		return dst, p.tooWide(fmt.Sprintf("the next, %d, has more digits", v))
	}
	return appendPadded(dst, v, p.width, p.pad), nil
}

// sourceErr wraps an error of the part's source. A bounded source that
// has no number left below the width's limit is out of room for this
// part: the error says so, in the width's terms.
func (p *seqPart) sourceErr(src *seqSrc, err error) error {
	if src != nil && src.bounded != nil && p.limit > 0 && errors.Is(err, idforge.ErrSpaceExhausted) {
		return p.tooWide(fmt.Sprintf("the source has no number left below %d", p.limit))
	}
	return fmt.Errorf("serial: seq %q: %w", p.name, err)
}

// tooWide is the error for a part whose source has no more numbers its
// width can show; it wraps idforge.ErrSpaceExhausted.
func (p *seqPart) tooWide(detail string) error {
	return fmt.Errorf("%w: serial: seq %q: width=%d shows numbers up to %s, and %s", idforge.ErrSpaceExhausted, p.name, p.width, strings.Repeat("9", p.width), detail)
}

// below is the limit a batch from a bounded source is drawn under: 10^width,
// or, without a width, math.MaxInt64, which no key issues (its IDs end at
// idforge.MaxSegmentID), so that a batch crossing the end of the key's
// space gets the numbers before it rather than failing whole.
func (p *seqPart) below() int64 {
	if p.limit > 0 {
		return p.limit
	}
	return math.MaxInt64
}

// digits returns the number of decimal digits of v ≥ 0.
func digits(v int64) int {
	n := 1
	for v >= 10 {
		v /= 10
		n++
	}
	return n
}

// checkPeriods refuses a template whose per-period counter restarts in
// periods its dates do not show: QJ@{seq:daily} would issue QJ1 again
// every day, and a per-day count in UTC under an Asia/Shanghai date
// restarts at 08:00 in the middle of the shown day. Periods of an hour
// and longer must be shown in the counter's own time zone; seconds and
// minutes line up in every zone.
func (t *Template) checkPeriods() error {
	for _, n := range t.nodes {
		sp, ok := n.part.(*seqPart)
		if !ok || sp.ctr == nil {
			continue
		}
		pr, ok := sp.ctr.(idforge.PeriodReporter)
		if !ok {
			continue
		}
		period, loc := pr.CountsPer()
		if _, known := periodFields[period]; !known {
			continue
		}
		zone := periodZone(period, loc)
		if shows(t.nodes, period, zone, nil) {
			continue
		}
		in := ""
		if zone != "" {
			in = " in " + zone
		}
		return errAt(n.col, "seq:%s counts per %s%s, but no date in the template shows the %s%s: the same serial would be issued again in a later %s (add e.g. @{date:%s%s})",
			sp.name, period, in, period, in, period, layoutFor(period), t.tzOption(zone))
	}
	return nil
}

func layoutFor(period string) string {
	return map[string]string{"month": "yyyyMM", "day": "yyyyMMdd", "hour": "yyyyMMddHH",
		"minute": "yyyyMMddHHmm", "second": "yyyyMMddHHmmss"}[period]
}

// tzOption is the tz= option a date needs to render in zone.
func (t *Template) tzOption(zone string) string {
	if zone == "" || zone == t.loc.String() {
		return ""
	}
	return ",tz=" + zone
}
