package serial

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/fakeclock"
)

// gen is an in-memory idforge.Generator counting up from its start value;
// safe for concurrent use.
type gen struct {
	last  atomic.Int64
	calls atomic.Int64
}

func newGen(first int64) *gen {
	g := &gen{}
	g.last.Store(first - 1)
	return g
}

func (g *gen) Next(context.Context) (int64, error) {
	g.calls.Add(1)
	return g.last.Add(1), nil
}

// batchGen is a gen that is also an idforge.BatchGenerator.
type batchGen struct {
	gen
	batches atomic.Int64
}

func (g *batchGen) NextN(_ context.Context, n int) ([]int64, error) {
	g.batches.Add(1)
	end := g.last.Add(int64(n))
	out := make([]int64, n)
	for i := range out {
		out[i] = end - int64(n) + 1 + int64(i)
	}
	return out, nil
}

// errGen always fails.
type errGen struct{ err error }

func (g errGen) Next(context.Context) (int64, error) { return 0, g.err }

// counter is an in-memory idforge.PeriodCounter: it counts from 1 within
// periods of length per (cut in loc when per is a day), moves to the next
// period when cap numbers were issued in one (cap 0: no cap), and never
// counts in a period before the latest one it counted in (the clock may
// step back). Safe for concurrent use.
type counter struct {
	per    time.Duration
	loc    *time.Location
	cap    int64
	mu     sync.Mutex
	period time.Time
	n      int64
	calls  int
}

func newCounter(per time.Duration, loc *time.Location) *counter {
	return &counter{per: per, loc: loc}
}

func (c *counter) start(at time.Time) time.Time {
	if c.per == 24*time.Hour {
		y, m, d := at.In(c.loc).Date()
		return time.Date(y, m, d, 0, 0, 0, 0, c.loc)
	}
	return at.Truncate(c.per)
}

func (c *counter) Next(_ context.Context, at time.Time) (int64, time.Time, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls++
	p := c.start(at)
	if p.Before(c.period) {
		p = c.period // the clock went back: keep counting in the latest period
	}
	if !p.Equal(c.period) {
		c.period, c.n = p, 0
	}
	if c.cap > 0 && c.n == c.cap { // full: wait for the next period
		c.period, c.n = c.start(c.period.Add(c.per)), 0
	}
	c.n++
	return c.n, c.period, nil
}

// CountsPer says which calendar period the counter counts in, as
// sequence.Counter does, so that templates can prove their dates show it.
func (c *counter) CountsPer() (string, *time.Location) {
	switch c.per {
	case time.Second:
		return "second", c.loc
	case time.Minute:
		return "minute", c.loc
	case time.Hour:
		return "hour", c.loc
	case 24 * time.Hour:
		return "day", c.loc
	}
	return c.per.String(), c.loc
}

// silentCounter is a counter that does not say its period: no template
// can prove that its dates tell the periods apart.
type silentCounter struct{ c *counter }

func (s silentCounter) Next(ctx context.Context, at time.Time) (int64, time.Time, error) {
	return s.c.Next(ctx, at)
}

var _ idforge.PeriodCounter = (*counter)(nil)
var _ idforge.PeriodReporter = (*counter)(nil)
var _ idforge.BatchGenerator = (*batchGen)(nil)

// mustParse parses or fails the test.
func mustParse(tb testing.TB, text string, opts Options) *Template {
	tb.Helper()
	tp, err := Parse(context.Background(), text, opts)
	if err != nil {
		tb.Fatalf("Parse(%q): %v", text, err)
	}
	return tp
}

// counterSuffix makes any template provably unique: a number of fixed
// width at the end can always be read back out of a serial. Tests of the
// other parts parse their templates with it (parseCounted) and cut it off
// the serials again (nextCounted).
const (
	counterSuffix    = "#@{seq:test-counter,width=3}"
	counterSuffixLen = len("#001")
)

// parseCounted parses text followed by counterSuffix, with a fresh
// generator for the suffix's number added to opts.Resolver.
func parseCounted(tb testing.TB, text string, opts Options) *Template {
	tb.Helper()
	next := opts.Resolver
	g := newGen(1)
	opts.Resolver = ResolverFunc(func(ctx context.Context, name string) (Source, error) {
		if name == "test-counter" {
			return Source{Generator: g}, nil
		}
		if next == nil {
			return Source{}, idforge.ErrUnknownKey
		}
		return next.Resolve(ctx, name)
	})
	return mustParse(tb, text+counterSuffix, opts)
}

// nextCounted renders one serial of a template parsed by parseCounted,
// without the suffix.
func nextCounted(tb testing.TB, tp *Template, params map[string]string) string {
	tb.Helper()
	s := mustNext(tb, tp, params)
	return s[:len(s)-counterSuffixLen]
}

// mustNext renders one serial or fails the test.
func mustNext(tb testing.TB, tp *Template, params map[string]string) string {
	tb.Helper()
	s, err := tp.Next(context.Background(), params)
	if err != nil {
		tb.Fatalf("Next(%q, %v): %v", tp, params, err)
	}
	return s
}

// clockAt returns a fake clock reading the given UTC time.
func clockAt(year int, month time.Month, day, hour, min, sec int) *fakeclock.Clock {
	return fakeclock.New(time.Date(year, month, day, hour, min, sec, 0, time.UTC))
}

// wantErr fails unless err wraps target and its message contains every
// fragment.
func wantErr(tb testing.TB, err, target error, fragments ...string) {
	tb.Helper()
	if err == nil {
		tb.Fatalf("no error, want one wrapping %v", target)
	}
	if target != nil && !errors.Is(err, target) {
		tb.Fatalf("error %q does not wrap %v", err, target)
	}
	for _, f := range fragments {
		if !strings.Contains(err.Error(), f) {
			tb.Fatalf("error %q does not mention %q", err, f)
		}
	}
}
