package sequence_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/fakeclock"
	"github.com/idforge/idforge/sequence"
	"github.com/idforge/idforge/sequence/internal/seqtest"
)

// memStore is an in-memory CounterStore for the core's own tests; the
// backends run the same suite against their real services.
type memStore struct {
	mu     sync.Mutex
	counts map[string]int64 // name/stamp → count
	marks  map[string]sequence.Mark
	fail   error
	// lie makes Count answer the floor itself: a broken store.
	lie bool
}

func newMemStore() *memStore {
	return &memStore{counts: map[string]int64{}, marks: map[string]sequence.Mark{}}
}

func (s *memStore) Count(_ context.Context, req sequence.CountRequest) (sequence.CountResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return sequence.CountResult{}, s.fail
	}
	if s.lie {
		return sequence.CountResult{Stamp: req.Floor.Stamp, N: req.Floor.N}, nil
	}
	m := s.marks[req.Name]
	if m.Less(req.Floor) {
		m = req.Floor
	}
	target := max(req.Stamp, m.Stamp)
	key := fmt.Sprint(req.Name, "/", target)
	cur := s.counts[key]
	if target == m.Stamp && cur < m.N {
		cur = m.N
	}
	if req.Cap > 0 && cur >= req.Cap {
		return sequence.CountResult{Stamp: target, Full: true}, nil
	}
	s.counts[key] = cur + 1
	s.marks[req.Name] = sequence.Mark{Stamp: target, N: cur + 1}
	return sequence.CountResult{Stamp: target, N: cur + 1}, nil
}

func (s *memStore) LoadMark(_ context.Context, name string) (sequence.Mark, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.marks[name], s.fail
}

func TestCounterSuiteInMemory(t *testing.T) {
	st := newMemStore()
	seqtest.CounterSuite(t, func(testing.TB) sequence.CounterStore { return st }, func(_ testing.TB, name string) {
		st.mu.Lock()
		defer st.mu.Unlock()
		delete(st.marks, name)
		for k := range st.counts {
			if strings.HasPrefix(k, name+"/") {
				delete(st.counts, k)
			}
		}
	})
}

func TestNewCounterErrors(t *testing.T) {
	ctx := context.Background()
	st := newMemStore()
	for _, tc := range []struct {
		name string
		s    sequence.CounterSettings
		want error
	}{
		{"no name", sequence.CounterSettings{Period: sequence.Day}, idforge.ErrInvalidKey},
		{"bad name", sequence.CounterSettings{Name: "a/b", Period: sequence.Day}, idforge.ErrInvalidKey},
		{"no period", sequence.CounterSettings{Name: "a"}, idforge.ErrInvalidArgument},
		{"negative cap", sequence.CounterSettings{Name: "a", Period: sequence.Day, Cap: -1}, idforge.ErrInvalidArgument},
		{"huge cap", sequence.CounterSettings{Name: "a", Period: sequence.Day, Cap: sequence.MaxCap + 1}, idforge.ErrInvalidArgument},
		{"bad over-cap", sequence.CounterSettings{Name: "a", Period: sequence.Day, OverCap: 7}, idforge.ErrInvalidArgument},
		{"negative ahead", sequence.CounterSettings{Name: "a", Period: sequence.Day, FileAhead: -1}, idforge.ErrInvalidArgument},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := sequence.NewCounter(ctx, st, tc.s); !errors.Is(err, tc.want) {
				t.Fatalf("NewCounter: %v, want %v", err, tc.want)
			}
		})
	}
}

func TestCorruptMarkFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "counter-a.mark"), []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := sequence.NewCounter(context.Background(), newMemStore(), sequence.CounterSettings{Name: "a", Period: sequence.Day, Dir: dir})
	if err == nil || !strings.Contains(err.Error(), "corrupt") {
		t.Fatalf("NewCounter over a corrupt file: %v", err)
	}
}

// TestFileAhead: the file is written before a number it does not cover
// is returned, FileAhead numbers at a time and never past the cap.
func TestFileAhead(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	clock := fakeclock.New(seqtest.T0)
	c, err := sequence.NewCounter(ctx, newMemStore(), sequence.CounterSettings{Name: "a", Period: sequence.Second,
		Dir: dir, FileAhead: 4, Cap: 6, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	read := func() string {
		b, err := os.ReadFile(filepath.Join(dir, "counter-a.mark"))
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(b))
	}
	for i, want := range []string{"20250413120000 4", "20250413120000 4", "20250413120000 4", "20250413120000 4", "20250413120000 6", "20250413120000 6", "20250413120001 4"} {
		if _, _, err := c.Next(ctx, time.Time{}); err != nil {
			t.Fatal(err)
		}
		if got := read(); got != want {
			t.Fatalf("after number %d the file holds %q, want %q", i+1, got, want)
		}
	}
	c.Close()
	if got := read(); got != "20250413120001 1" {
		t.Fatalf("after Close the file holds %q, want the exact mark", got)
	}
}

// TestStoreBreaksContract: a store answering at or below the mark is not
// believed.
func TestStoreBreaksContract(t *testing.T) {
	ctx := context.Background()
	st := newMemStore()
	c, err := sequence.NewCounter(ctx, st, sequence.CounterSettings{Name: "a", Period: sequence.Second})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Next(ctx, seqtest.T0); err != nil {
		t.Fatal(err)
	}
	st.lie = true
	if _, _, err := c.Next(ctx, seqtest.T0); !errors.Is(err, sequence.ErrCounterLost) {
		t.Fatalf("a store repeating the mark: %v, want ErrCounterLost", err)
	}
	st.lie = false
	st.fail = errors.New("connection refused")
	if _, _, err := c.Next(ctx, seqtest.T0); !errors.Is(err, idforge.ErrUnavailable) {
		t.Fatalf("a failing store: %v, want ErrUnavailable", err)
	}
	if _, _, err := c.Next(ctx, time.Date(999, 1, 1, 0, 0, 0, 0, time.UTC)); !errors.Is(err, idforge.ErrInvalidArgument) {
		t.Fatalf("year 999: %v, want ErrInvalidArgument", err)
	}
}

// TestWaitHonoursCancel: a counter waiting for the next period stops when
// the caller cancels.
func TestWaitHonoursCancel(t *testing.T) {
	clock := fakeclock.New(seqtest.T0)
	c, err := sequence.NewCounter(context.Background(), newMemStore(), sequence.CounterSettings{Name: "a", Period: sequence.Month, Cap: 1, Clock: &stuckClock{clock}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if _, _, err := c.Next(ctx, time.Time{}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, _, err := c.Next(ctx, time.Time{})
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, sequence.ErrCapReached) || !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled wait: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the wait ignored the cancellation")
	}
}

// stuckClock's Sleep really sleeps a little and does not advance time.
type stuckClock struct{ *fakeclock.Clock }

func (stuckClock) Sleep(time.Duration) { time.Sleep(time.Millisecond) }

// A counter's members count apart from it and from each other, in its
// store, period and zone, restarting every period; each value has one
// member, with its mark file beside the counter's, and Close closes them.
func TestCounterMember(t *testing.T) {
	ctx := context.Background()
	clk := fakeclock.New(time.Date(2025, 4, 13, 10, 0, 0, 0, time.UTC))
	dir := t.TempDir()
	c, err := sequence.NewCounter(ctx, newMemStore(), sequence.CounterSettings{Name: "daily", Period: sequence.Day, Dir: dir, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	next := func(ctr idforge.PeriodCounter) int64 {
		t.Helper()
		n, _, err := ctr.Next(ctx, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	a, err := c.Member(ctx, "6541")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := c.Member(ctx, "6542")
	again, _ := c.Member(ctx, "6541")
	if again != a {
		t.Fatal("a second Member for the same value is another counter")
	}
	if got := []int64{next(c), next(a), next(a), next(b)}; fmt.Sprint(got) != "[1 1 2 1]" {
		t.Fatalf("counter, member 6541 twice, member 6542 = %v; want [1 1 2 1]: each counts apart", got)
	}
	if p, loc := a.(idforge.PeriodReporter).CountsPer(); p != "day" || loc != time.UTC {
		t.Fatalf("member counts per %s in %v; want the counter's day in UTC", p, loc)
	}
	clk.Add(24 * time.Hour)
	if n := next(a); n != 1 {
		t.Fatalf("member 6541 the next day = %d; want 1: it restarts every period", n)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "daily", "counter-daily-6541.mark")); err != nil {
		t.Fatalf("member's mark file: %v", err)
	}
	if _, _, err := a.Next(ctx, time.Time{}); !errors.Is(err, idforge.ErrClosed) {
		t.Fatalf("member after the counter closed: %v; want ErrClosed", err)
	}
	if _, err := c.Member(ctx, "6543"); !errors.Is(err, idforge.ErrClosed) {
		t.Fatalf("Member after Close: %v; want ErrClosed", err)
	}
}
