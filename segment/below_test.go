package segment

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/idforge/idforge"
)

// NextNBelow serves what fits below the limit, then refuses without
// taking anything: the IDs at and above the limit are still there for
// Next. This is what lets a serial with width=6 stop at 999,999 without
// wasting an ID on an error.
func TestNextNBelowTakesNothingAtTheLimit(t *testing.T) {
	ctx := context.Background()
	st := newTestStore(t, "k", 999_998, 10)
	a := newAllocator(t, st, "k", Settings{MaxStep: 10})

	got, err := a.NextNBelow(ctx, 5, 1_000_000)
	if err != nil || !slices.Equal(got, []int64{999_998, 999_999}) {
		t.Fatalf("NextNBelow(5, 1e6) = %v, %v; want the two IDs that fit", got, err)
	}
	for range 3 {
		if got, err := a.NextNBelow(ctx, 5, 1_000_000); !errors.Is(err, idforge.ErrSpaceExhausted) || got != nil {
			t.Fatalf("at the limit: %v, %v; want ErrSpaceExhausted and nothing", got, err)
		}
	}
	// Nothing was taken by the refusals.
	if v := mustNext(t, a); v != 1_000_000 {
		t.Fatalf("Next after the refusals = %d, want 1000000", v)
	}
	if _, err := a.NextNBelow(ctx, 0, 10); !errors.Is(err, idforge.ErrInvalidCount) {
		t.Fatalf("NextNBelow(0) = %v, want ErrInvalidCount", err)
	}
}

// A batch under the limit crosses segments as NextN does, and stops at
// the limit in a later segment.
func TestNextNBelowSpansSegments(t *testing.T) {
	ctx := context.Background()
	st := newTestStore(t, "k", 1, 10)
	a := newAllocator(t, st, "k", Settings{MaxStep: 10})
	got, err := a.NextNBelow(ctx, 100, 36)
	if err != nil || len(got) != 35 || got[0] != 1 || got[34] != 35 {
		t.Fatalf("NextNBelow(100, 36) = %v, %v; want 1..35", got, err)
	}
	if got, err := a.NextNBelow(ctx, 1, 36); !errors.Is(err, idforge.ErrSpaceExhausted) {
		t.Fatalf("past the limit: %v, %v", got, err)
	}
	if v := mustNext(t, a); v != 36 {
		t.Fatalf("Next = %d, want 36", v)
	}
}

// Callers racing on NextNBelow and Next never get an ID twice, and
// NextNBelow never hands out one at or above the limit.
func TestNextNBelowRacingNext(t *testing.T) {
	ctx := context.Background()
	st := newTestStore(t, "k", 1, 50)
	a := newAllocator(t, st, "k", Settings{MaxStep: 50})
	const limit = 3000
	var (
		mu   sync.Mutex
		seen = map[int64]bool{}
		wg   sync.WaitGroup
		errs = make(chan error, 8)
	)
	record := func(ids ...int64) error {
		mu.Lock()
		defer mu.Unlock()
		for _, id := range ids {
			if seen[id] {
				return errors.New("ID issued twice")
			}
			seen[id] = true
		}
		return nil
	}
	for w := range 8 {
		wg.Go(func() {
			for range 400 {
				var ids []int64
				var err error
				if w%2 == 0 {
					ids, err = a.NextNBelow(ctx, 3, limit)
					if errors.Is(err, idforge.ErrSpaceExhausted) {
						continue
					}
					for _, id := range ids {
						if id >= limit {
							err = errors.New("NextNBelow returned an ID at or above the limit")
						}
					}
				} else {
					var id int64
					id, err = a.Next(ctx)
					ids = []int64{id}
				}
				if err == nil {
					err = record(ids...)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// An empty dst is refused before anything is taken, on the fast path
// (a segment buffered) as on the slow one (none yet).
func TestNextIntoEmptyTakesNothing(t *testing.T) {
	st := newTestStore(t, "k", 1, 10)
	a := newAllocator(t, st, "k", Settings{})
	ctx := context.Background()
	for _, want := range []int64{1, 2} {
		if _, err := a.NextInto(ctx, nil); !errors.Is(err, idforge.ErrInvalidCount) {
			t.Fatalf("NextInto(nil) = %v, want ErrInvalidCount", err)
		}
		if got := mustNext(t, a); got != want {
			t.Fatalf("Next = %d after an empty NextInto, want %d", got, want)
		}
	}
}
