package segment

import (
	"context"
	"errors"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/e2e"
)

func newGlobal(t *testing.T, st idforge.SegmentStore) *Allocator {
	t.Helper()
	return newAllocator(t, st, "k", Settings{Global: true, LoadTimeout: 10 * time.Second})
}

// Calls that arrive while a claim is in flight share the next claim, of
// exactly what they asked for together, each getting its own consecutive
// part; nothing is buffered, so the claim after that starts where the
// last one ended.
func TestGlobalCoalescesCallsDuringAClaim(t *testing.T) {
	st := newTestStore(t, "k", 1, 1000)
	a := newGlobal(t, st)
	gate := make(chan struct{})
	st.setGate(gate)
	ctx := context.Background()
	first := make(chan int64, 1)
	go func() {
		v, err := a.Next(ctx)
		if err != nil {
			t.Error(err)
		}
		first <- v
	}()
	waitFor(t, func() bool { return len(st.claimSteps()) == 1 })

	const callers = 8
	var (
		wg  sync.WaitGroup
		mu  sync.Mutex
		got [][]int64
	)
	for range callers {
		wg.Go(func() {
			ids, err := a.NextN(ctx, 3)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			got = append(got, ids)
			mu.Unlock()
		})
	}
	waitFor(t, func() bool { return a.Stats().Waits == callers+1 })
	st.setGate(nil)
	close(gate)
	wg.Wait()
	if v := <-first; v != 1 {
		t.Fatalf("the first call got %d, want 1", v)
	}
	if steps := st.claimSteps(); !slices.Equal(steps, []int64{1, 3 * callers}) {
		t.Fatalf("claims of %v, want [1 %d]: one claim for the calls that waited together", steps, 3*callers)
	}
	var all []int64
	for _, ids := range got {
		if len(ids) != 3 || ids[1] != ids[0]+1 || ids[2] != ids[0]+2 {
			t.Fatalf("a call got %v, want three consecutive IDs", ids)
		}
		all = append(all, ids...)
	}
	slices.Sort(all)
	for k, v := range all {
		if v != int64(2+k) {
			t.Fatalf("the calls got %v, want 2..%d each once", all, 1+3*callers)
		}
	}
	if v := mustNext(t, a); v != 2+3*callers {
		t.Fatalf("next call got %d, want %d: a key in global order keeps nothing", v, 2+3*callers)
	}
	if st := a.Stats(); st.Buffered != 0 || st.Loads != 3 || st.ClaimedUpTo != 3+3*callers {
		t.Fatalf("stats %+v", st)
	}
}

// Many callers on several Allocators of one key (nodes sharing a store)
// with claims of varying speed: over the whole history, every call's IDs
// are above those of every call that returned before it began, and no ID
// is issued twice.
func TestGlobalOrderIsLinearizable(t *testing.T) {
	st := newTestStore(t, "k", 1, 1000)
	st.delay.Store(int64(200 * time.Microsecond))
	nodes := []*Allocator{newGlobal(t, st), newGlobal(t, st), newGlobal(t, st)}
	var h e2e.History
	ctx, stop := context.WithTimeout(context.Background(), 2*time.Second)
	defer stop()
	var wg sync.WaitGroup
	for c := range 12 {
		wg.Go(func() {
			for k := 0; ctx.Err() == nil; k++ {
				a := nodes[(c+k)%len(nodes)]
				began := time.Now()
				var ids []int64
				var err error
				switch k % 3 {
				case 0:
					var v int64
					v, err = a.Next(ctx)
					ids = []int64{v}
				case 1:
					ids, err = a.NextN(ctx, 1+k%7)
				default:
					var r []idforge.Segment
					r, err = a.AppendRangesBelow(ctx, nil, int64(1+k%5), math.MaxInt64)
					for _, s := range r {
						for v := s.Start; v < s.End; v++ {
							ids = append(ids, v)
						}
					}
				}
				if err != nil {
					if ctx.Err() == nil {
						t.Error(err)
					}
					return
				}
				h.Add(began, time.Now(), ids)
			}
		})
	}
	wg.Wait()
	ops, ids := h.Len()
	if ops < 100 {
		t.Fatalf("only %d calls in 2 s", ops)
	}
	if err := h.Check(); err != nil {
		t.Fatal(err)
	}
	claims := len(st.claimSteps())
	t.Logf("%d calls, %d IDs, %d claims (%.1f calls a claim)", ops, ids, claims, float64(ops)/float64(claims))
}

// A call whose context ends while its claim is in flight gets the
// context's error, and the values claimed for it go to nobody: the calls
// after it get higher ones.
func TestGlobalLostAnswerIsAGap(t *testing.T) {
	st := newTestStore(t, "k", 1, 1000)
	a := newGlobal(t, st)
	gate := make(chan struct{})
	st.setGate(gate)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := a.NextN(ctx, 5)
		done <- err
	}()
	waitFor(t, func() bool { return len(st.claimSteps()) == 1 })
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("NextN = %v, want context.Canceled", err)
	}
	st.setGate(nil)
	close(gate) // the claim of [1, 6) lands after its caller left
	if v := mustNext(t, a); v != 6 {
		t.Fatalf("the next call got %d, want 6: [1, 6) was claimed for a call that left", v)
	}
}

// A failing store fails the calls of the batch with ErrUnavailable at
// once, keeps nothing, and the first call after it recovers gets IDs
// above everything claimed before.
func TestGlobalStoreFailure(t *testing.T) {
	st := newTestStore(t, "k", 1, 1000)
	a := newGlobal(t, st)
	if v := mustNext(t, a); v != 1 {
		t.Fatalf("got %d", v)
	}
	st.setFail(errors.New("connection refused"))
	ctx := context.Background()
	for range 3 {
		if _, err := a.Next(ctx); !errors.Is(err, idforge.ErrUnavailable) {
			t.Fatalf("Next with the store down = %v, want ErrUnavailable", err)
		}
	}
	if s := a.Stats(); s.Failures != 3 || s.LastFailure == "" {
		t.Fatalf("stats %+v, want 3 failures", s)
	}
	st.setFail(nil)
	if v := mustNext(t, a); v != 2 {
		t.Fatalf("got %d after the store recovered, want 2", v)
	}
	if s := a.Stats(); s.Failures != 0 {
		t.Fatalf("failures %d after a success", s.Failures)
	}
}

// A store whose max_id went backwards is refused, as in node order.
func TestGlobalStoreGoingBackwards(t *testing.T) {
	st := newTestStore(t, "k", 1, 1000)
	a := newGlobal(t, st)
	mustNext(t, a)
	mustNext(t, a)
	st.regress.Store(2)
	if _, err := a.Next(context.Background()); !errors.Is(err, idforge.ErrStoreFailedOver) {
		t.Fatalf("Next = %v, want ErrStoreFailedOver", err)
	}
	if _, err := a.Next(context.Background()); !errors.Is(err, idforge.ErrStoreFailedOver) {
		t.Fatalf("Next after = %v, want ErrStoreFailedOver", err)
	}
}

// Close fails the calls waiting for a claim with ErrClosed and hands
// nothing back: max_id stays above every value claimed.
func TestGlobalClose(t *testing.T) {
	st := newTestStore(t, "k", 1, 1000)
	a := newGlobal(t, st)
	mustNext(t, a)
	gate := make(chan struct{})
	st.setGate(gate)
	done := make(chan error, 2)
	for range 2 {
		go func() {
			_, err := a.Next(context.Background())
			done <- err
		}()
	}
	waitFor(t, func() bool { return a.Stats().Waits == 3 })
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := <-done; !errors.Is(err, idforge.ErrClosed) {
			t.Fatalf("a waiting call got %v, want ErrClosed", err)
		}
	}
	if _, err := a.Next(context.Background()); !errors.Is(err, idforge.ErrClosed) {
		t.Fatalf("Next after Close = %v", err)
	}
	if m := storedMax(t, st, "k"); m < 2 {
		t.Fatalf("max_id %d after Close: went back below what was handed out", m)
	}
}

// A retired key (Settings.Check) retires the Allocator.
func TestGlobalRetired(t *testing.T) {
	st := newTestStore(t, "k", 1, 1000)
	retired := errors.New("retired")
	a := newAllocator(t, st, "k", Settings{Global: true, Check: func(context.Context, string) error {
		return errors.Join(idforge.ErrRetired, retired)
	}})
	if _, err := a.Next(context.Background()); !errors.Is(err, retired) {
		t.Fatalf("Next = %v", err)
	}
	if _, err := a.NextN(context.Background(), 2); !errors.Is(err, retired) {
		t.Fatalf("NextN after = %v", err)
	}
}

// NextNBelow stops at the limit; a call whose part lies past it answers
// ErrSpaceExhausted.
func TestGlobalBelowLimit(t *testing.T) {
	st := newTestStore(t, "k", 1, 1000)
	a := newGlobal(t, st)
	ctx := context.Background()
	ids, err := a.NextNBelow(ctx, 5, 4)
	if err != nil || !slices.Equal(ids, []int64{1, 2, 3}) {
		t.Fatalf("NextNBelow(5, 4) = %v, %v", ids, err)
	}
	if _, err := a.NextNBelow(ctx, 1, 4); !errors.Is(err, idforge.ErrSpaceExhausted) {
		t.Fatalf("NextNBelow past the limit = %v", err)
	}
	dst := make([]int64, 4)
	if n, err := a.NextIntoBelow(ctx, dst, math.MaxInt64); err != nil || n != 4 || dst[0] != 7 {
		t.Fatalf("NextIntoBelow = %d %v %v", n, dst, err)
	}
	if n, err := a.NextInto(ctx, dst); err != nil || n != 4 || dst[0] != 11 {
		t.Fatalf("NextInto = %d %v %v", n, dst, err)
	}
}
