package segment

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/fakeclock"
)

func storedMax(t *testing.T, st *testStore, key string) int64 {
	t.Helper()
	k, err := st.Key(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	return k.MaxID
}

func TestCloseHandsBackTheUnusedRange(t *testing.T) {
	for _, issue := range []int{1, 5, 9, 10, 11, 50, 99, 100, 101, 150, 250} {
		st := newTestStore(t, "k", 1, 10)
		a := newAllocator(t, st, "k", Settings{MaxStep: 100})
		var last int64
		for range issue {
			last = mustNext(t, a)
		}
		idle(t, a) // a prefetch, if one started, has landed
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
		if got := storedMax(t, st, "k"); got != last+1 {
			t.Fatalf("after issuing %d IDs up to %d, max_id = %d; want %d (no gap)", issue, last, got, last+1)
		}
		b := newAllocator(t, st, "k", Settings{})
		if next := mustNext(t, b); next != last+1 {
			t.Fatalf("restart issued %d, want %d", next, last+1)
		}
	}
}

func TestCloseRefusesHandBackAfterAnotherClaim(t *testing.T) {
	st := newTestStore(t, "k", 1, 100)
	a := newAllocator(t, st, "k", Settings{MaxStep: 100})
	for range 30 {
		mustNext(t, a)
	}
	waitFor(t, func() bool { return a.Stats().Pending != (idforge.Segment{}) })
	// Another node claims after this one.
	other, err := st.ClaimSegment(context.Background(), "k", 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if got := storedMax(t, st, "k"); got != other.End {
		t.Fatalf("max_id = %d after a refused hand-back, want %d untouched", got, other.End)
	}
}

// idle waits until no claim is in flight.
func idle(t *testing.T, a *Allocator) {
	t.Helper()
	waitFor(t, func() bool {
		a.mu.Lock()
		defer a.mu.Unlock()
		return a.att == nil
	})
}

// Callers racing Close never get a value that Close hands back: after the
// restart, no ID issued before reappears.
func TestCloseRacingCallersNoDuplicates(t *testing.T) {
	for round := range 50 {
		st := newTestStore(t, "k", 1, 7)
		a := newAllocator(t, st, "k", Settings{MaxStep: 7})
		var (
			mu   sync.Mutex
			seen = map[int64]bool{}
			wg   sync.WaitGroup
		)
		for w := range 4 {
			wg.Go(func() {
				for i := 0; ; i++ {
					var ids []int64
					var err error
					if (w+i)%3 == 0 {
						ids, err = a.NextN(context.Background(), 3)
					} else {
						var id int64
						id, err = a.Next(context.Background())
						ids = []int64{id}
					}
					if err != nil {
						return
					}
					mu.Lock()
					for _, id := range ids {
						seen[id] = true
					}
					mu.Unlock()
				}
			})
		}
		time.Sleep(time.Duration(round%5) * 100 * time.Microsecond)
		a.Close()
		wg.Wait()

		b := newAllocator(t, st, "k", Settings{MaxStep: 7})
		ids, err := b.NextN(context.Background(), 50)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			if seen[id] {
				t.Fatalf("round %d: ID %d issued before Close and again after the restart", round, id)
			}
		}
	}
}

func TestWaitsCountOnlyEmptyBuffers(t *testing.T) {
	st := newTestStore(t, "k", 1, 1000)
	st.delay.Store(int64(20 * time.Millisecond)) // a slow database
	a := newAllocator(t, st, "k", Settings{MaxStep: 1000})
	mustNext(t, a)
	if w := a.Stats().Waits; w != 1 {
		t.Fatalf("waits after the first call = %d, want 1", w)
	}
	// A steady rate slower than one prefetch per 900 IDs: nobody waits.
	for range 3000 {
		mustNext(t, a)
		time.Sleep(50 * time.Microsecond)
	}
	if w := a.Stats().Waits; w != 1 {
		t.Fatalf("waits = %d at a steady rate with a 20 ms store, want still 1", w)
	}
}

func TestSurviveOutageBudget(t *testing.T) {
	clk := fakeclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	st := newTestStore(t, "k", 1, 100)
	a := newAllocator(t, st, "k", Settings{Clock: clk, TargetDuration: time.Minute, SurviveOutage: time.Hour, MaxStep: 1 << 30})
	// 10 IDs/s: a 1-minute segment would be 600; surviving an hour at the
	// peak needs 36000. Claims grow at most 4× each, so it takes a few.
	for range 20000 {
		mustNext(t, a)
		clk.Add(100 * time.Millisecond)
	}
	idle(t, a)
	steps := st.claimSteps()
	if last := steps[len(steps)-1]; last < 30000 || last > 40000 {
		t.Fatalf("claim steps %v: want about 36000 (10/s for an hour)", steps)
	}
	st2 := a.Stats()
	if st2.Rate < 8 || st2.Rate > 12 || st2.BufferedFor < 55*time.Minute {
		t.Fatalf("stats: rate %.1f/s, buffered for %v; want ~10/s and over an hour", st2.Rate, st2.BufferedFor)
	}
}

func TestCloseWithoutReturnerAbandons(t *testing.T) {
	st := newTestStore(t, "k", 1, 10)
	a := newAllocator(t, noReturn{st}, "k", Settings{})
	mustNext(t, a)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if got := storedMax(t, st, "k"); got != 11 {
		t.Fatalf("max_id = %d, want 11: a store without ReturnSegment keeps its claims", got)
	}
	if _, err := a.Next(context.Background()); !errors.Is(err, idforge.ErrClosed) {
		t.Fatalf("Next after Close: %v", err)
	}
}

// noReturn hides the store's ReturnSegment.
type noReturn struct{ st *testStore }

func (n noReturn) ClaimSegment(ctx context.Context, key string, step int64) (idforge.Segment, error) {
	return n.st.ClaimSegment(ctx, key, step)
}
