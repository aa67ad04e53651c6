package compose_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/sequence/compose"
)

func gens(cs ...*counter) []idforge.Generator {
	out := make([]idforge.Generator, len(cs))
	for i, c := range cs {
		out[i] = c
	}
	return out
}

func TestNewBalancedInvalid(t *testing.T) {
	four := gens(newCounter(0), newCounter(0), newCounter(0), newCounter(0))
	tests := []struct {
		name    string
		sources []idforge.Generator
		opts    compose.BalancedOptions
	}{
		{"none", nil, compose.BalancedOptions{}},
		{"three", four[:3], compose.BalancedOptions{}},
		{"nil source", []idforge.Generator{newCounter(0), nil}, compose.BalancedOptions{}},
		{"too many", make([]idforge.Generator, 2*compose.MaxSources), compose.BalancedOptions{}},
		{"negative rescue", four, compose.BalancedOptions{RescueAfter: -time.Second}},
		{"negative slow count", four, compose.BalancedOptions{SlowCount: -1}},
		{"names", four, compose.BalancedOptions{Names: []string{"a"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := compose.NewBalanced(tt.sources, tt.opts)
			if !errors.Is(err, idforge.ErrInvalidArgument) {
				t.Fatalf("NewBalanced: %v, want ErrInvalidArgument", err)
			}
		})
	}
	if _, err := compose.NewBalanced(four[:1], compose.BalancedOptions{}); err != nil {
		t.Errorf("one source: %v", err)
	}
}

// Round robin over admitted sources spreads calls evenly, and every ID
// splits into its source's value and index.
func TestBalancedRoundRobin(t *testing.T) {
	cs := []*counter{newCounter(0), newCounter(100), newCounter(200), newCounter(300)}
	b, err := compose.NewBalanced(gens(cs...), compose.BalancedOptions{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var ids []int64
	for range 4000 {
		id, err := b.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	unique(t, ids)
	for i, c := range cs {
		if got := c.calls.Load(); got != 1000 {
			t.Errorf("source %d called %d times, want 1000", i, got)
		}
	}
	if b.Bits() != 2 {
		t.Errorf("Bits = %d, want 2", b.Bits())
	}
	for _, id := range ids {
		v, i := b.Split(id)
		if v <= int64(100*i) || v > int64(100*i+1000) {
			t.Fatalf("ID %d splits into value %d of source %d, not one of that source's", id, v, i)
		}
	}
}

// A failing source is ejected without failing a caller, re-admitted after
// RescueAfter, and its values appear again.
func TestBalancedFailover(t *testing.T) {
	cs := []*counter{newCounter(0), newCounter(0), newCounter(0), newCounter(0)}
	b, err := compose.NewBalanced(gens(cs...), compose.BalancedOptions{RescueAfter: 100 * time.Millisecond, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	var fromTwo atomic.Int64
	l := startLoad(b, 4, func(v int64) {
		if v&3 == 2 {
			fromTwo.Add(1)
		}
	})
	waitFor(t, "values", func() bool { return l.issued.Load() > 1000 })
	cs[2].fail.Store(true)
	waitFor(t, "source 2 ejected", func() bool { return b.Stats()[2].State == compose.Ejected })
	st := b.Stats()[2]
	if st.Errors == 0 || st.Ejections == 0 || !strings.Contains(st.LastError, "fake source: down") {
		t.Errorf("source 2 after failing: %+v", st)
	}
	if st.EjectedUntil.IsZero() {
		t.Error("ejected source has no EjectedUntil")
	}
	cs[2].fail.Store(false)
	before := fromTwo.Load()
	waitFor(t, "values from source 2 again", func() bool { return fromTwo.Load() > before+100 })
	unique(t, l.finish(t))
	if st := b.Stats()[2]; st.State != compose.Admitted {
		t.Errorf("source 2 after recovering: %+v", st)
	}
}

// A source whose values no longer fit is skipped for good; the others
// carry on. So is one that answers 0.
func TestBalancedExhausted(t *testing.T) {
	limit := int64(math.MaxInt64 >> 2) // the largest value that fits with 4 sources
	cs := []*counter{newCounter(0), newCounter(limit - 3), newCounter(-1), newCounter(1 << 40)}
	b, err := compose.NewBalanced(gens(cs...), compose.BalancedOptions{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var ids []int64
	for range 1000 {
		id, err := b.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	unique(t, ids)
	st := b.Stats()
	for _, i := range []int{1, 2} {
		if st[i].State != compose.Exhausted {
			t.Errorf("source %d: %+v, want exhausted", i, st[i])
		}
	}
	if st[1].Calls != 4 || cs[1].calls.Load() != 4 {
		t.Errorf("source 1 called %d times (stats %d), want 4: three values that fit, one that does not", cs[1].calls.Load(), st[1].Calls)
	}
	if st[2].Calls != 1 {
		t.Errorf("source 2 (answering 0) called %d times, want 1", st[2].Calls)
	}
	n := 0
	for _, id := range ids {
		if v, i := b.Split(id); i == 1 {
			n++
			if v > limit {
				t.Errorf("ID %d carries value %d of source 1, above %d", id, v, limit)
			}
		}
	}
	if n != 3 {
		t.Errorf("%d IDs from source 1, want 3", n)
	}
	// Everything exhausted: ErrSpaceExhausted, not a retry later.
	one, _ := compose.NewBalanced(gens(newCounter(math.MaxInt64)), compose.BalancedOptions{Logger: quiet}) // wraps to below 1
	if _, err := one.Next(ctx); !errors.Is(err, idforge.ErrSpaceExhausted) {
		t.Errorf("only source exhausted: %v, want ErrSpaceExhausted", err)
	}
}

// With every source ejected, Next fails at once, without calling any
// source, with an error naming each source's state.
func TestBalancedAllEjected(t *testing.T) {
	cs := []*counter{newCounter(0), newCounter(0), newCounter(0), newCounter(0)}
	for _, c := range cs {
		c.fail.Store(true)
	}
	b, err := compose.NewBalanced(gens(cs...), compose.BalancedOptions{
		RescueAfter: time.Hour, Logger: quiet, Names: []string{"a", "b", "c", "d"},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	_, err = b.Next(ctx)
	if !errors.Is(err, idforge.ErrUnavailable) {
		t.Fatalf("first call: %v, want ErrUnavailable", err)
	}
	for i, c := range cs {
		if c.calls.Load() != 1 {
			t.Errorf("source %d called %d times by the first call, want 1", i, c.calls.Load())
		}
	}
	_, err = b.Next(ctx)
	if !errors.Is(err, idforge.ErrUnavailable) {
		t.Fatalf("second call: %v, want ErrUnavailable", err)
	}
	for i, c := range cs {
		if c.calls.Load() != 1 {
			t.Errorf("source %d called again while ejected", i)
		}
	}
	msg := err.Error()
	for _, want := range []string{"0 (a): ejected until", "3 (d): ejected until", "fake source: down"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not say %q", msg, want)
		}
	}
}

// A caller whose context ends is not the source's fault: nothing is
// ejected.
func TestBalancedCallerContext(t *testing.T) {
	c := newCounter(0)
	c.delay.Store(int64(time.Second))
	b, err := compose.NewBalanced(gens(newCounter(0), c), compose.BalancedOptions{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	// The first call goes to source 0, the second to the slow source 1.
	if _, err := b.Next(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Next(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Next: %v, want the context's deadline", err)
	}
	if st := b.Stats()[1]; st.State != compose.Admitted || st.Errors != 0 {
		t.Errorf("source 1 after the caller gave up: %+v", st)
	}
}

// CallTimeout turns a hanging source into an error of that source: the
// caller is served by the next one.
func TestBalancedCallTimeout(t *testing.T) {
	hung := newCounter(0)
	hung.delay.Store(int64(time.Hour))
	b, err := compose.NewBalanced(gens(hung, newCounter(0)), compose.BalancedOptions{CallTimeout: 20 * time.Millisecond, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for range 4 {
		id, err := b.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, i := b.Split(id); i != 1 {
			t.Errorf("ID %d from source %d", id, i)
		}
	}
	if st := b.Stats()[0]; st.State != compose.Ejected || hung.calls.Load() != 1 {
		t.Errorf("hanging source: %+v, called %d times", st, hung.calls.Load())
	}
}

func TestBalancedClose(t *testing.T) {
	b, err := compose.NewBalanced(gens(newCounter(0)), compose.BalancedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Next(context.Background()); !errors.Is(err, idforge.ErrClosed) {
		t.Errorf("Next after Close: %v", err)
	}
}

func TestOpenBalancedInvalid(t *testing.T) {
	ctx := context.Background()
	if _, err := compose.OpenBalanced(ctx, []string{"nosuch://x", "nosuch://y"}, compose.BalancedOptions{}); !errors.Is(err, idforge.ErrInvalidArgument) {
		t.Errorf("unknown scheme: %v", err)
	}
	if _, err := compose.OpenBalanced(ctx, []string{"a", "b", "c"}, compose.BalancedOptions{}); !errors.Is(err, idforge.ErrInvalidArgument) {
		t.Errorf("three URLs: %v", err)
	}
}

func TestSourceStateString(t *testing.T) {
	for s, want := range map[compose.SourceState]string{compose.Admitted: "admitted", compose.Ejected: "ejected", compose.Exhausted: "exhausted", 7: "SourceState(7)"} {
		if s.String() != want {
			t.Errorf("%d: %q, want %q", int(s), s.String(), want)
		}
	}
}
