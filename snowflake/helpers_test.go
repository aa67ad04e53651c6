package snowflake

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idforge/idforge/internal/fakeclock"
)

// start is a fake-clock instant half a millisecond into a tick of every
// preset (all epochs are whole milliseconds; the 10 ms and 1 s presets'
// epochs are whole seconds).
var start = time.Date(2024, 6, 1, 12, 0, 0, 500_000, time.UTC)

var discard = slog.New(slog.DiscardHandler)

func mustPreset(tb testing.TB, name string) Layout {
	tb.Helper()
	l, err := Preset(name)
	if err != nil {
		tb.Fatalf("Preset(%q): %v", name, err)
	}
	return l
}

func mustParse(tb testing.TB, spec string) Layout {
	tb.Helper()
	l, err := ParseLayout(spec)
	if err != nil {
		tb.Fatalf("ParseLayout(%q): %v", spec, err)
	}
	return l
}

// newGen builds a generator that logs nowhere unless s says otherwise and
// is closed when the test ends.
func newGen(tb testing.TB, s Settings) *Generator {
	tb.Helper()
	if s.Logger == nil {
		s.Logger = discard
	}
	g, err := New(s)
	if err != nil {
		tb.Fatalf("New: %v", err)
	}
	tb.Cleanup(func() { g.Close() })
	return g
}

// newFake returns a generator of layout on a fake clock reading start.
func newFake(tb testing.TB, l Layout) (*Generator, *fakeclock.Clock) {
	tb.Helper()
	clk := fakeclock.New(start)
	return newGen(tb, Settings{Layout: l, Worker: 1, Clock: clk}), clk
}

func mustNext(tb testing.TB, g *Generator) int64 {
	tb.Helper()
	id, err := g.Next(context.Background())
	if err != nil {
		tb.Fatalf("Next: %v", err)
	}
	return id
}

func mustExplain(tb testing.TB, l Layout, id int64) Parts {
	tb.Helper()
	p, err := l.Explain(id)
	if err != nil {
		tb.Fatalf("Explain(%d): %v", id, err)
	}
	return p
}

// wantErr checks that err wraps want (or is nil when want is nil) and
// that its message contains every one of msgs.
func wantErr(tb testing.TB, err, want error, msgs ...string) {
	tb.Helper()
	if want == nil {
		if err != nil {
			tb.Fatalf("unexpected error: %v", err)
		}
		return
	}
	if !errors.Is(err, want) {
		tb.Fatalf("error %v, want one wrapping %v", err, want)
	}
	for _, m := range msgs {
		if !strings.Contains(err.Error(), m) {
			tb.Errorf("error %q does not mention %q", err, m)
		}
	}
}

// memFence is an in-memory Fence that records every Store.
type memFence struct {
	mu       sync.Mutex
	t        time.Time
	stores   int
	storeErr error
	loadErr  error
}

func (f *memFence) Load() (time.Time, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.t, f.loadErr
}

func (f *memFence) Store(t time.Time) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.storeErr != nil {
		return f.storeErr
	}
	f.t = t
	f.stores++
	return nil
}

func (f *memFence) get() (time.Time, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.t, f.stores
}

func (f *memFence) failWith(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.storeErr = err
}
