package segment

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/idforge/idforge"
)

func TestKeyBoundsReplaceSettings(t *testing.T) {
	// A slow key claims the key's own minimum, not the stored step.
	st := newTestStore(t, "slow", 1, 100)
	a := newAllocator(t, st, "slow", Settings{MinStep: 50})
	a.SetBounds(30, 0)
	for range 250 {
		mustNext(t, a)
	}
	steps := st.claimSteps()
	for _, s := range steps[1:] {
		if s < 30 {
			t.Fatalf("claim steps %v: below the key's minimum 30", steps)
		}
	}
	// A fast key is capped at the key's own maximum.
	st2 := newTestStore(t, "fast", 1, 100)
	b := newAllocator(t, st2, "fast", Settings{MaxStep: 5000})
	b.SetBounds(0, 300)
	for range 5000 {
		mustNext(t, b)
	}
	for _, s := range st2.claimSteps()[1:] {
		if s > 300 {
			t.Fatalf("claim steps %v: above the key's maximum 300", st2.claimSteps())
		}
	}
	// Clearing the bounds falls back to Settings.
	b.SetBounds(0, 0)
	b.mu.Lock()
	minStep, maxStep := b.boundsLocked()
	b.mu.Unlock()
	if minStep != 100 || maxStep != 5000 {
		t.Fatalf("bounds without the key's own = %d, %d, want the stored step 100 and Settings' 5000", minStep, maxStep)
	}
}

func TestRetireDropsBuffersAndKeepsMax(t *testing.T) {
	st := newTestStore(t, "k", 1, 100)
	a := newAllocator(t, st, "k", Settings{})
	mustNext(t, a)
	before, _ := st.Key(context.Background(), "k")
	retired := fmt.Errorf("%w: key %q", idforge.ErrRetired, "k")
	a.Retire(retired)
	if _, err := a.Next(context.Background()); !errors.Is(err, idforge.ErrRetired) {
		t.Fatalf("Next after Retire: %v, want ErrRetired", err)
	}
	if _, err := a.NextN(context.Background(), 3); !errors.Is(err, idforge.ErrRetired) {
		t.Fatalf("NextN after Retire: %v, want ErrRetired", err)
	}
	if err := a.Close(); err != nil {
		t.Fatalf("Close after Retire: %v", err)
	}
	after, _ := st.Key(context.Background(), "k")
	if after.MaxID < before.MaxID {
		t.Fatalf("max_id went from %d down to %d: a retired key's buffered values were handed back", before.MaxID, after.MaxID)
	}
}

func TestCheckRetiresBeforeClaiming(t *testing.T) {
	st := newTestStore(t, "k", 1, 10)
	var gone atomic.Bool
	a := newAllocator(t, st, "k", Settings{Check: func(ctx context.Context, key string) error {
		if gone.Load() {
			return fmt.Errorf("%w: key %q", idforge.ErrRetired, key)
		}
		return nil
	}})
	mustNext(t, a)
	claims := st.Claims()
	gone.Store(true)
	var err error
	for range 100 {
		if _, err = a.Next(context.Background()); err != nil {
			break
		}
	}
	if !errors.Is(err, idforge.ErrRetired) {
		t.Fatalf("Next once the key is retired: %v, want ErrRetired", err)
	}
	if _, err := a.Next(context.Background()); !errors.Is(err, idforge.ErrRetired) {
		t.Fatalf("Next after: %v, want ErrRetired", err)
	}
	// The prefetch that was due may have claimed before the check saw the
	// retirement; nothing after it.
	if got := st.Claims(); got > claims+1 {
		t.Fatalf("%d claims after the key was retired, want at most the one in flight", got-claims)
	}
}
