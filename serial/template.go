package serial

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/idforge/idforge"
)

var (
	_ Resolver = Sources(nil)
	_ Resolver = ResolverFunc(nil)
	_ Kind     = KindFunc(nil)
	_ Part     = (*datePart)(nil)
	_ Part     = (*seqPart)(nil)
	_ Part     = (*paramPart)(nil)
	_ Part     = (*checksumPart)(nil)
	_ Part     = (*randomPart)(nil)
)

// Source is what a seq expression draws its numbers from: exactly one of
// Generator (a segment or snowflake key, a Redis INCR, …) and Counter (a
// counter per second or per day). No type can be both: their Next
// methods differ.
type Source struct {
	Generator idforge.Generator
	Counter   idforge.PeriodCounter
}

// Resolver finds the number source a seq expression names. Parse calls it
// once per seq expression, with Parse's context: it may look the name up
// in a store.
type Resolver interface {
	// Resolve returns the Source for name, or an error; an unknown name
	// is an error wrapping idforge.ErrUnknownKey.
	Resolve(ctx context.Context, name string) (Source, error)
}

// ResolverFunc adapts a function to the Resolver interface.
type ResolverFunc func(ctx context.Context, name string) (Source, error)

// Resolve calls f(ctx, name).
func (f ResolverFunc) Resolve(ctx context.Context, name string) (Source, error) { return f(ctx, name) }

// Sources is a Resolver over a fixed map from name to Source.
type Sources map[string]Source

// Resolve returns s[name], or an error wrapping idforge.ErrUnknownKey.
func (s Sources) Resolve(_ context.Context, name string) (Source, error) {
	if v, ok := s[name]; ok {
		return v, nil
	}
	return Source{}, fmt.Errorf("%w: %q", idforge.ErrUnknownKey, name)
}

// Options configure Parse. The zero value is usable for templates without
// seq expressions.
type Options struct {
	// Location is the time zone of date expressions without tz=. Nil
	// means UTC.
	Location *time.Location
	// Clock is read once per evaluation. Nil means idforge.SystemClock.
	Clock idforge.Clock
	// Resolver finds the sources of seq expressions. A template with a
	// seq expression and no Resolver is refused.
	Resolver Resolver
	// MaxLen, when positive, refuses templates whose serials could be
	// longer than MaxLen bytes (a database column's width, say).
	MaxLen int
}

// MaxTextLen is the longest template text Parse accepts, in bytes. It
// bounds the work of parsing a template that arrives over the network.
const MaxTextLen = 4096

// maxTemplateLen bounds Template.MaxLen, whatever the parts claim.
const maxTemplateLen = 1 << 20

// Template is a parsed serial-number template. It is immutable and safe
// for concurrent use. Parse proved that its serials are unique as long as
// the counter the proof rests on keeps its promise (a key never hands out
// a number twice, a per-period counter never within a period).
type Template struct {
	text       string
	loc        *time.Location
	clock      idforge.Clock
	nodes      []node // text order
	order      []int  // evaluation order: indexes of the nodes with a part
	late       int    // the index in order where the date-dependent stage begins
	maxLen     int
	staticLen  int // bytes of static text
	params     []string
	paramNodes []int
	batch      bool // some seq source is an idforge.BatchGenerator
	uniqueBy   int  // the node of the counter the uniqueness proof rests on
	paramSums  []paramSum
	pool       sync.Pool
}

// node is one piece of a template: static text (part nil) or a part.
type node struct {
	static   string
	col      int
	kind     string
	arg      string
	opts     []Option // as written, as= included
	part     Part
	builtin  bool
	max      int
	stage    int      // 0 params, 1 sources, 2 the rest
	names    []string // what references may call it
	explicit string   // the as= name, if any
	refs     []ref    // resolved references, as the part declared them
	deps     []dep    // the nodes it must follow
}

type ref struct {
	name string
	node int // -1 for "all"
}

type dep struct {
	node int
	col  int // where the reference is written
}

// Stages of evaluation: parameters are checked before any source is
// asked for a number, and sources are asked before anything that renders
// time, because a PeriodCounter decides the time dates render.
const (
	stageParams = iota
	stageSources
	stageRest
)

// Parse compiles a template (see the package documentation for the
// syntax). It refuses a template that cannot prove its serials never
// repeat (see Uniqueness in the package documentation). Every error it
// returns is a *SyntaxError naming the column of the problem and wrapping
// idforge.ErrInvalidArgument; when a seq name is unknown to the Resolver
// it also wraps the Resolver's error (and so idforge.ErrUnknownKey). ctx
// bounds the Resolver's lookups.
func Parse(ctx context.Context, text string, opts Options) (*Template, error) {
	if text == "" {
		return nil, errAt(1, "empty template")
	}
	if len(text) > MaxTextLen {
		return nil, errAt(MaxTextLen+1, "a template is at most %d bytes", MaxTextLen)
	}
	t := &Template{text: text, loc: opts.Location, clock: opts.Clock}
	if t.loc == nil {
		t.loc = time.UTC
	}
	if t.clock == nil {
		t.clock = idforge.SystemClock
	}
	items, err := lex(text)
	if err != nil {
		return nil, err
	}
	for _, it := range items {
		if it.expr == nil {
			t.nodes = append(t.nodes, node{static: it.static, col: it.col, kind: "text", max: len(it.static)})
			continue
		}
		n, err := t.compile(ctx, it, &opts)
		if err != nil {
			return nil, err
		}
		t.nodes = append(t.nodes, n)
	}
	if err := t.link(); err != nil {
		return nil, err
	}
	if err := t.linkBy(); err != nil {
		return nil, err
	}
	if err := t.checkPeriods(); err != nil {
		return nil, err
	}
	if err := t.sort(); err != nil {
		return nil, err
	}
	if err := t.digitsBefore(); err != nil {
		return nil, err
	}
	if err := t.measure(opts.MaxLen); err != nil {
		return nil, err
	}
	if err := t.checkUnique(); err != nil {
		return nil, err
	}
	t.pool.New = func() any {
		return &Eval{t: t, spans: make([]span, len(t.nodes)), buf: make([]byte, 0, min(t.maxLen, 1024))}
	}
	return t, nil
}

// compile turns one expression into a node.
func (t *Template) compile(ctx context.Context, it item, opts *Options) (node, error) {
	e := *it.expr
	n := node{col: e.Col, kind: e.Kind, arg: e.Arg, opts: it.opts, stage: stageRest, builtin: true}
	var err error
	switch e.Kind {
	case kindDate:
		n.part, err = compileDate(e, t.loc)
	case kindSeq:
		var sp *seqPart
		sp, err = compileSeq(ctx, e, opts.Resolver)
		if err == nil {
			n.part, n.stage = sp, stageSources
			t.batch = t.batch || sp.batch != nil || sp.bounded != nil || sp.by != ""
		}
	case kindParam:
		n.part, err = compileParam(e)
		n.stage = stageParams
	case kindChecksum:
		n.part, err = compileChecksum(e)
	case kindRandom:
		n.part, err = compileRandom(e)
	default:
		n.builtin = false
		n.part, err = t.compileCustom(e)
	}
	if err != nil {
		return n, err
	}
	n.max = n.part.MaxLen()
	if n.max < 0 || n.max > maxTemplateLen {
		return n, errAt(e.Col, "kind %q: MaxLen %d out of range [0, %d]", e.Kind, n.max, maxTemplateLen)
	}
	if it.as.Name != "" {
		if !validName(it.as.Value) || it.as.Value == "all" {
			return n, errAt(it.as.ValueCol, "as=%s: a name is 1 to %d letters, digits or . _ : - and not \"all\"", it.as.Value, idforge.MaxKeyLen)
		}
		n.explicit = it.as.Value
	}
	return n, nil
}

// compileCustom compiles an expression of a registered kind.
func (t *Template) compileCustom(e Expr) (Part, error) {
	k, ok := kinds.Get(e.Kind)
	if !ok {
		return nil, errAt(skipBlanks(t.text, e.Col+1)+1, "unknown kind %q (kinds: %s)", e.Kind, strings.Join(Kinds(), ", "))
	}
	p, err := k.Compile(e)
	if err != nil {
		var se *SyntaxError
		if errors.As(err, &se) && se.Col >= 1 && se.Col <= len(t.text)+1 {
			return nil, se
		}
		return nil, &SyntaxError{Col: e.Col, Msg: fmt.Sprintf("kind %q", e.Kind), Err: err}
	}
	if p == nil {
		return nil, errAt(e.Col, "kind %q compiled to a nil Part", e.Kind)
	}
	return p, nil
}

// link names the parts and resolves their references.
func (t *Template) link() error {
	perKind := map[string]int{}
	for _, n := range t.nodes {
		if n.part != nil {
			perKind[n.kind]++
		}
	}
	index := map[string][]int{}
	for i := range t.nodes {
		n := &t.nodes[i]
		if n.part == nil {
			continue
		}
		add := func(name string) {
			if name != "" && !slices.Contains(n.names, name) {
				n.names = append(n.names, name)
				index[name] = append(index[name], i)
			}
		}
		add(n.explicit)
		if a, ok := n.part.(interface{ argName() string }); ok {
			add(a.argName())
		}
		if perKind[n.kind] == 1 {
			add(n.kind)
		} else if !slices.Contains(n.names, n.kind) {
			// Not a name of the part, but a reference to it is
			// ambiguous rather than unknown.
			index[n.kind] = append(index[n.kind], i)
		}
	}
	// An as= name must be unique. Report a clash at the later as=, or at
	// the only one.
	for i, n := range t.nodes {
		if n.explicit == "" {
			continue
		}
		other := -1
		for _, j := range index[n.explicit] {
			if j < i || j > i && t.nodes[j].explicit != n.explicit {
				other = j
				break
			}
		}
		if other < 0 {
			continue
		}
		col := n.col
		for _, o := range n.opts {
			if o.Name == "as" {
				col = o.ValueCol
			}
		}
		return errAt(col, "as=%s: the %s part at col %d has that name too", n.explicit, t.nodes[other].kind, t.nodes[other].col)
	}
	for i := range t.nodes {
		n := &t.nodes[i]
		if n.part == nil {
			continue
		}
		var specs []refSpec
		if r, ok := n.part.(interface{ refSpecs() []refSpec }); ok {
			specs = r.refSpecs()
		} else if r, ok := n.part.(Referrer); ok {
			for _, name := range r.Refs() {
				specs = append(specs, refSpec{name: name, col: n.col})
			}
		}
		for _, s := range specs {
			if s.name == "all" {
				if i == 0 {
					return errAt(s.col, "%s refers to all the text before it, and there is none", n.kind)
				}
				n.refs = append(n.refs, ref{name: s.name, node: -1})
				for j := range i {
					if t.nodes[j].part != nil {
						n.deps = append(n.deps, dep{node: j, col: s.col})
					}
				}
				continue
			}
			owners := index[s.name]
			switch {
			case len(owners) == 0:
				return errAt(s.col, "no part is named %q%s", s.name, t.nameHint())
			case len(owners) > 1:
				return errAt(s.col, "%q names the parts at cols %d and %d; name one with as=", s.name, t.nodes[owners[0]].col, t.nodes[owners[1]].col)
			case owners[0] == i:
				return errAt(s.col, "%s refers to itself", n.kind)
			}
			if d, ok := t.nodes[owners[0]].part.(interface{ digitsOnly() bool }); ok && n.kind == kindChecksum && !d.digitsOnly() {
				o := &t.nodes[owners[0]]
				return errAt(s.col, "of=%s: the %s part at col %d can render other characters than digits%s", s.name, o.kind, o.col, digitsHint(o.kind))
			}
			n.refs = append(n.refs, ref{name: s.name, node: owners[0]})
			n.deps = append(n.deps, dep{node: owners[0], col: s.col})
		}
	}
	return nil
}

// digitsHint tells how to make a part of kind render digits only.
func digitsHint(kind string) string {
	switch kind {
	case kindParam, kindRandom:
		return "; add chars=digits"
	case kindDate:
		return "; leave literal text out of the layout"
	}
	return ""
}

// nameHint lists the names references can use.
func (t *Template) nameHint() string {
	var names []string
	for _, n := range t.nodes {
		names = append(names, n.names...)
	}
	if len(names) == 0 {
		return ""
	}
	slices.Sort(names)
	return " (names: " + strings.Join(slices.Compact(names), ", ") + ")"
}

// sort fixes the evaluation order: parameters, then sources, both in text
// order, then the other parts, each after the parts it depends on and
// otherwise in text order.
func (t *Template) sort() error {
	for _, stage := range []int{stageParams, stageSources} {
		for i, n := range t.nodes {
			if n.part != nil && n.stage == stage {
				t.order = append(t.order, i)
				if stage == stageParams {
					t.paramNodes = append(t.paramNodes, i)
					name := n.part.(*paramPart).name
					if !slices.Contains(t.params, name) {
						t.params = append(t.params, name)
					}
				}
			}
		}
	}
	t.late = len(t.order)
	done := make([]bool, len(t.nodes))
	for _, i := range t.order {
		done[i] = true
	}
	// Kahn's algorithm, taking the ready part first in the text.
	waiting := make([]int, len(t.nodes))      // per node: deps not yet ordered
	dependents := make([][]int, len(t.nodes)) // per node: who waits for it
	var ready []int                           // ascending
	for i, n := range t.nodes {
		if n.part == nil || done[i] {
			continue
		}
		for _, d := range n.deps {
			if !done[d.node] {
				waiting[i]++
				dependents[d.node] = append(dependents[d.node], i)
			}
		}
		if waiting[i] == 0 {
			ready = append(ready, i)
		}
	}
	for len(ready) > 0 {
		i := ready[0]
		ready = ready[1:]
		t.order = append(t.order, i)
		done[i] = true
		for _, j := range dependents[i] {
			if waiting[j]--; waiting[j] == 0 {
				at, _ := slices.BinarySearch(ready, j)
				ready = slices.Insert(ready, at, j)
			}
		}
	}
	for i, n := range t.nodes {
		if n.part != nil && !done[i] {
			return t.cycle(i, done)
		}
	}
	return nil
}

// cycle reports the reference cycle reachable from node start, which
// could not be ordered.
func (t *Template) cycle(start int, done []bool) error {
	seen := map[int]int{} // node → position in path
	var path []int
	var col int
	for i := start; ; {
		if at, ok := seen[i]; ok {
			path = append(path[at:], i)
			break
		}
		seen[i] = len(path)
		path = append(path, i)
		for _, d := range t.nodes[i].deps {
			if !done[d.node] {
				if i == start {
					col = d.col
				}
				i = d.node
				break
			}
		}
	}
	var names []string
	for _, i := range path {
		n := t.nodes[i]
		name := fmt.Sprintf("%s@col%d", n.kind, n.col)
		if len(n.names) > 0 {
			name = n.names[0]
		}
		names = append(names, name)
	}
	return errAt(col, "reference cycle: %s", strings.Join(names, " → "))
}

// measure computes MaxLen and applies the Options.MaxLen limit.
func (t *Template) measure(limit int) error {
	for _, n := range t.nodes {
		t.maxLen += n.max
		if n.part == nil {
			t.staticLen += n.max
		}
		if t.maxLen > maxTemplateLen {
			return errAt(n.col, "the template could be longer than %d bytes", maxTemplateLen)
		}
	}
	if limit <= 0 || t.maxLen <= limit {
		return nil
	}
	sum := 0
	for _, n := range t.nodes {
		if sum += n.max; sum > limit {
			return errAt(n.col, "serials could be %d bytes long, more than the maximum of %d", t.maxLen, limit)
		}
	}
	panic("unreachable")
}

// String returns the template's text.
func (t *Template) String() string { return t.text }

// MaxLen returns the most bytes a serial of t can have. When every part
// has a fixed width (seq and param with width=, dates of padded fields
// such as yyyyMMdd, checksums, random) every serial has exactly this
// length.
func (t *Template) MaxLen() int { return t.maxLen }

// Params returns the names of the request parameters t needs, in the
// order they first appear.
func (t *Template) Params() []string { return slices.Clone(t.params) }

// Next renders one serial. It reads the clock once, checks every
// parameter before asking any source for a number, then asks the sources
// and renders the other parts in dependency order. A bad or missing
// parameter is an error wrapping idforge.ErrInvalidArgument; a number too
// wide for its width= wraps idforge.ErrSpaceExhausted; a source's error
// is returned wrapped.
func (t *Template) Next(ctx context.Context, params map[string]string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if len(t.paramSums) > 0 {
		// eval checks each value before drawing, but not what a checksum
		// needs of them.
		if err := t.checkParams(params); err != nil {
			return "", err
		}
	}
	ev := t.pool.Get().(*Eval)
	ev.params = params
	s, err := t.eval(ctx, ev)
	ev.params = nil
	t.pool.Put(ev)
	return s, err
}

// NextN renders up to n serials (n ≥ 1, else an error wrapping
// idforge.ErrInvalidCount) with the same parameters. It checks the
// parameters before drawing any number, fetches the numbers of each seq
// source that is an idforge.BatchGenerator (or a BoundedGenerator) in one
// call, and reads the clock once per serial.
//
// It returns fewer than n serials only when the number space runs out
// within the batch: a seq's width= has no room for the next number, or
// its source is exhausted (errors wrapping idforge.ErrSpaceExhausted).
// The serials rendered before that point are returned without an error;
// when not even the first can be rendered, the error is returned. A
// BoundedGenerator source is asked only for numbers its width can show,
// so the numbers too wide stay unused; from any other source the number
// found too wide is drawn, and lost (a gap, never a duplicate). On any
// other error NextN returns no serials, and numbers already drawn are
// lost.
func (t *Template) NextN(ctx context.Context, n int, params map[string]string) ([]string, error) {
	if n < 1 {
		return nil, fmt.Errorf("%w: serial: n=%d, want at least 1", idforge.ErrInvalidCount, n)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := t.checkParams(params); err != nil {
		return nil, err
	}
	ev := t.pool.Get().(*Eval)
	defer func() {
		ev.params, ev.pre, ev.k = nil, nil, 0
		t.pool.Put(ev)
	}()
	ev.params = params
	if t.batch && n > 1 {
		var err error
		if n, err = t.prefetch(ctx, ev, n); err != nil {
			return nil, err
		}
	}
	out := make([]string, 0, n)
	for k := range n {
		ev.k = k
		s, err := t.eval(ctx, ev)
		if err != nil {
			if k > 0 && errors.Is(err, idforge.ErrSpaceExhausted) {
				break // the space ran out: serve what fits
			}
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// prefetch draws the numbers of up to n serials from the seq sources
// that hand out batches, into ev.pre, and returns how many serials they
// cover. The bounded sources go first, each asked for as many as the ones
// before it gave: they may cut the batch short, and when one has nothing
// left it takes nothing, so an error costs the fewest numbers. The other
// batch sources then draw exactly that many.
func (t *Template) prefetch(ctx context.Context, ev *Eval, n int) (int, error) {
	ev.pre = make([][]int64, len(t.nodes))
	for _, bounded := range []bool{true, false} {
		for _, i := range t.order[:t.late] {
			sp, ok := t.nodes[i].part.(*seqPart)
			if !ok {
				continue
			}
			ev.cur = i
			src, err := sp.source(ctx, ev)
			if err != nil {
				return 0, err
			}
			if bounded && src.bounded == nil || !bounded && (src.bounded != nil || src.batch == nil) {
				continue
			}
			var vals []int64
			if bounded {
				vals, err = src.bounded.NextNBelow(ctx, n, sp.below())
			} else {
				vals, err = src.batch.NextN(ctx, n)
			}
			if err != nil {
				return 0, sp.sourceErr(src, err)
			}
			if len(vals) == 0 || len(vals) > n || !bounded && len(vals) != n {
				return 0, fmt.Errorf("serial: seq %q: asked for %d numbers, got %d", sp.name, n, len(vals))
			}
			n = len(vals)
			ev.pre[i] = vals
		}
	}
	return n, nil
}

// eval renders one serial into a new string.
func (t *Template) eval(ctx context.Context, ev *Eval) (string, error) {
	ev.now = t.clock.Now()
	ev.at, ev.latest = ev.now, time.Time{}
	ev.buf = ev.buf[:0]
	for j, i := range t.order {
		if j == t.late && ev.latest.After(ev.now) {
			ev.at = ev.latest
		}
		n := &t.nodes[i]
		ev.cur = i
		start := len(ev.buf)
		buf, err := n.part.Append(ctx, ev.buf, ev)
		if err != nil {
			if n.builtin {
				return "", err
			}
			return "", fmt.Errorf("serial: %s at col %d: %w", n.kind, n.col, err)
		}
		if len(buf) < start {
			return "", fmt.Errorf("serial: %s at col %d: Append dropped what was before it", n.kind, n.col)
		}
		if len(buf)-start > n.max {
			return "", fmt.Errorf("serial: %s at col %d: rendered %d bytes, more than its MaxLen %d", n.kind, n.col, len(buf)-start, n.max)
		}
		ev.buf = buf
		ev.spans[i] = span{start, len(buf)}
	}
	var b strings.Builder
	b.Grow(t.staticLen + len(ev.buf))
	for i := range t.nodes {
		n := &t.nodes[i]
		if n.part == nil {
			b.WriteString(n.static)
		} else {
			s := ev.spans[i]
			b.Write(ev.buf[s.start:s.end])
		}
	}
	return b.String(), nil
}
