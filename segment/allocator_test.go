package segment

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/fakeclock"
	"github.com/idforge/idforge/store/memstore"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// testStore wraps memstore with the failures a real store shows: errors,
// slowness, a gate that holds claims, and a max_id that goes backwards.
type testStore struct {
	*memstore.Store
	fail    atomic.Pointer[error]
	delay   atomic.Int64 // nanoseconds added to each claim
	gate    chan struct{}
	regress atomic.Int64 // subtracted from the next claim's range
	stored  atomic.Int64 // when set, the stored step claims report (an operator changed it)
	mu      sync.Mutex
	steps   []int64
}

func newTestStore(t testing.TB, key string, start, step int64) *testStore {
	t.Helper()
	s := &testStore{Store: memstore.New()}
	err := s.CreateKey(context.Background(), idforge.Key{Name: key, Strategy: idforge.StrategySegment, Step: step, MaxID: start})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (s *testStore) setFail(err error) {
	if err == nil {
		s.fail.Store(nil)
		return
	}
	s.fail.Store(&err)
}

func (s *testStore) ClaimSegment(ctx context.Context, key string, step int64) (idforge.Segment, error) {
	s.mu.Lock()
	s.steps = append(s.steps, step)
	gate := s.gate
	s.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return idforge.Segment{}, ctx.Err()
		}
	}
	if d := time.Duration(s.delay.Load()); d > 0 {
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return idforge.Segment{}, ctx.Err()
		}
	}
	if e := s.fail.Load(); e != nil {
		return idforge.Segment{}, *e
	}
	seg, err := s.Store.ClaimSegment(ctx, key, step)
	if r := s.regress.Swap(0); r > 0 && err == nil {
		seg.Start -= r
		seg.End -= r
	}
	if st := s.stored.Load(); st > 0 && err == nil {
		seg.Step = st
	}
	return seg, err
}

func (s *testStore) claimSteps() []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int64(nil), s.steps...)
}

func (s *testStore) setGate(ch chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gate = ch
}

func newAllocator(t testing.TB, st idforge.SegmentStore, key string, set Settings) *Allocator {
	t.Helper()
	if set.Logger == nil {
		set.Logger = quiet
	}
	a := New(st, key, set)
	t.Cleanup(func() { a.Close() })
	return a
}

func mustNext(t *testing.T, a *Allocator) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	v, err := a.Next(ctx)
	if err != nil {
		t.Fatalf("Next: %v", err)
	}
	return v
}

func TestLeafSemantics(t *testing.T) {
	// A Leaf row (max_id=1, step=2000) issues 1..2000 first, then 2001...
	st := newTestStore(t, "leaf", 1, 2000)
	a := newAllocator(t, st, "leaf", Settings{TargetDuration: time.Nanosecond})
	for want := int64(1); want <= 4500; want++ {
		if got := mustNext(t, a); got != want {
			t.Fatalf("Next = %d, want %d", got, want)
		}
	}
	if steps := st.claimSteps(); steps[0] != 0 {
		t.Errorf("first claim asked for step %d, want 0 (the row's own step)", steps[0])
	}
}

func TestConcurrentCallersGetUniqueIncreasingIDs(t *testing.T) {
	const (
		workers = 16
		perWork = 20000
	)
	st := newTestStore(t, "order", 1, 50)
	a := newAllocator(t, st, "order", Settings{MaxStep: 400})
	ctx := context.Background()

	results := make([][]int64, workers)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			ids := make([]int64, 0, perWork)
			for len(ids) < perWork {
				if len(ids)%7 == 0 {
					batch, err := a.NextN(ctx, 1+len(ids)%13)
					if err != nil {
						errs <- err
						return
					}
					ids = append(ids, batch...)
					continue
				}
				v, err := a.Next(ctx)
				if err != nil {
					errs <- err
					return
				}
				ids = append(ids, v)
			}
			results[w] = ids
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	seen := make(map[int64]int, workers*perWork)
	for w, ids := range results {
		for i, v := range ids {
			if v <= 0 {
				t.Fatalf("worker %d got non-positive ID %d", w, v)
			}
			if i > 0 && v <= ids[i-1] {
				t.Fatalf("worker %d: ID %d after %d, want strictly increasing", w, v, ids[i-1])
			}
			if other, dup := seen[v]; dup {
				t.Fatalf("ID %d issued to workers %d and %d", v, other, w)
			}
			seen[v] = w
		}
	}
}

func TestNextNSpansSegments(t *testing.T) {
	st := newTestStore(t, "k", 1, 10)
	a := newAllocator(t, st, "k", Settings{MaxStep: 10})
	ids, err := a.NextN(context.Background(), 25)
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != 25 {
		t.Fatalf("got %d IDs, want 25", len(ids))
	}
	for i := 1; i < len(ids); i++ {
		if ids[i] <= ids[i-1] {
			t.Fatalf("IDs not increasing: %v", ids)
		}
	}
	for _, n := range []int{0, -1} {
		if _, err := a.NextN(context.Background(), n); !errors.Is(err, idforge.ErrInvalidCount) {
			t.Errorf("NextN(%d) error = %v, want ErrInvalidCount", n, err)
		}
	}
}

func TestDoubleBufferCallersNeverWaitOnStore(t *testing.T) {
	st := newTestStore(t, "k", 1, 1000)
	a := newAllocator(t, st, "k", Settings{MaxStep: 1000})
	first := mustNext(t, a) // the first claim goes through

	// From now on claims hang until the gate opens.
	gate := make(chan struct{})
	st.setGate(gate)
	// Everything left in the first segment must come out without waiting
	// for the (blocked) prefetch; a short deadline proves no caller waits.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for want := first + 1; want < first+1000; want++ {
		v, err := a.Next(ctx)
		if err != nil {
			t.Fatalf("Next at %d with the store blocked: %v", want, err)
		}
		if v != want {
			t.Fatalf("Next = %d, want %d", v, want)
		}
	}
	// The prefetch was started in the background and is held at the gate.
	waitFor(t, func() bool { return len(st.claimSteps()) == 2 })
	close(gate)
	// The prefetched segment follows on seamlessly.
	if v := mustNext(t, a); v != first+1000 {
		t.Fatalf("first ID of the next segment = %d, want %d", v, first+1000)
	}
}

func TestStoreOutage(t *testing.T) {
	st := newTestStore(t, "k", 1, 100)
	a := newAllocator(t, st, "k", Settings{MaxStep: 100, RetryMin: time.Millisecond, RetryMax: 5 * time.Millisecond})
	seen := map[int64]bool{}
	take := func() (int64, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		v, err := a.Next(ctx)
		if err == nil {
			if seen[v] {
				t.Fatalf("duplicate ID %d", v)
			}
			seen[v] = true
		}
		return v, err
	}
	if _, err := take(); err != nil {
		t.Fatal(err)
	}
	// Let the prefetch land, then take the store down.
	for a.Stats().Pending == (idforge.Segment{}) {
		if _, err := take(); err != nil {
			t.Fatal(err)
		}
	}
	down := errors.New("connection refused")
	st.setFail(down)

	// Everything buffered is still issued.
	buffered := a.Stats().Buffered
	for i := int64(0); i < buffered; i++ {
		if _, err := take(); err != nil {
			t.Fatalf("Next %d of %d buffered: %v", i, buffered, err)
		}
	}
	// Then a clear error, which names the store's failure.
	_, err := take()
	if !errors.Is(err, idforge.ErrUnavailable) || !errors.Is(err, down) {
		t.Fatalf("error after buffers ran out = %v, want ErrUnavailable wrapping the store error", err)
	}
	// Repeated calls fail fast and keep failing while the store is down.
	for range 100 {
		if _, err := take(); !errors.Is(err, idforge.ErrUnavailable) {
			t.Fatalf("error = %v, want ErrUnavailable", err)
		}
	}
	// The store comes back: issuing resumes by itself.
	st.setFail(nil)
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := take()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still failing 10 s after the store recovered: %v", err)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestSlowStoreTimesOut(t *testing.T) {
	st := newTestStore(t, "k", 1, 100)
	st.delay.Store(int64(time.Hour))
	a := newAllocator(t, st, "k", Settings{LoadTimeout: 20 * time.Millisecond})
	_, err := a.Next(context.Background())
	if !errors.Is(err, idforge.ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error = %v, want ErrUnavailable wrapping the claim's deadline", err)
	}
}

func TestCallerContextBoundsTheWait(t *testing.T) {
	st := newTestStore(t, "k", 1, 100)
	st.setGate(make(chan struct{})) // never opens
	a := newAllocator(t, st, "k", Settings{})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := a.Next(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error = %v, want the caller's deadline", err)
	}
}

func TestUnknownKey(t *testing.T) {
	st := newTestStore(t, "k", 1, 100)
	a := newAllocator(t, st, "nope", Settings{})
	for range 3 {
		if _, err := a.Next(context.Background()); !errors.Is(err, idforge.ErrUnknownKey) {
			t.Fatalf("error = %v, want ErrUnknownKey", err)
		}
	}
}

func TestSpaceExhausted(t *testing.T) {
	st := newTestStore(t, "k", math.MaxInt64-25, 10)
	a := newAllocator(t, st, "k", Settings{MaxStep: 10})
	var last int64
	for {
		v, err := a.Next(context.Background())
		if err != nil {
			if !errors.Is(err, idforge.ErrSpaceExhausted) {
				t.Fatalf("error = %v, want ErrSpaceExhausted", err)
			}
			break
		}
		if v <= last {
			t.Fatalf("ID %d after %d", v, last)
		}
		last = v
	}
	// Hammering the exhausted key never wraps into negative values.
	for range 1000 {
		if v, err := a.Next(context.Background()); err == nil {
			t.Fatalf("got ID %d from an exhausted key", v)
		}
	}
}

// A store whose max_id went backwards (a promoted replica that lacked the
// last claims, a restored backup) hands out a range below what this node
// holds: other nodes may hold what lies above it, so the key is refused,
// for good, with ErrStoreFailedOver, and no further claim is made. What
// was buffered before is still issued, and nothing twice.
func TestStoreGoingBackwardsIsRefused(t *testing.T) {
	st := newTestStore(t, "k", 1, 100)
	var claims, refused atomic.Int64
	a := newAllocator(t, st, "k", Settings{MaxStep: 100, RetryMin: time.Millisecond,
		OnClaim: func(_ string, _ time.Duration, err error) {
			claims.Add(1)
			if errors.Is(err, idforge.ErrStoreFailedOver) {
				refused.Add(1)
			}
		}})
	seen := map[int64]bool{}
	for range 150 {
		seen[mustNext(t, a)] = true
	}
	// The store loses its last 500 values: the next claim comes back
	// below what this node holds.
	st.regress.Store(500)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var lastErr error
	for range 1000 {
		v, err := a.Next(ctx)
		if err != nil {
			lastErr = err
			continue
		}
		if seen[v] {
			t.Fatalf("ID %d issued twice after the store went backwards", v)
		}
		seen[v] = true
	}
	if !errors.Is(lastErr, idforge.ErrStoreFailedOver) || idforge.ErrorCode(lastErr) != idforge.CodeStoreFailedOver {
		t.Fatalf("after the store went backwards: %v, want ErrStoreFailedOver", lastErr)
	}
	if refused.Load() != 1 {
		t.Fatalf("OnClaim saw %d refusals, want the one claim that came back below", refused.Load())
	}
	before := claims.Load()
	for range 10 {
		if _, err := a.Next(ctx); !errors.Is(err, idforge.ErrStoreFailedOver) {
			t.Fatalf("Next = %v, want ErrStoreFailedOver", err)
		}
	}
	if n := claims.Load() - before; n != 0 {
		t.Fatalf("%d claims after the refusal, want none", n)
	}
}

func TestAdaptiveStep(t *testing.T) {
	clk := fakeclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	st := newTestStore(t, "k", 1, 100)
	a := newAllocator(t, st, "k", Settings{Clock: clk, TargetDuration: 15 * time.Minute, MaxStep: 1_000_000})
	// 10 IDs per second: a 15-minute segment holds 9000.
	for range 3000 {
		mustNext(t, a)
		clk.Add(100 * time.Millisecond)
	}
	// Growth is capped at 4x per claim, so the claims go 100 (the row's
	// step), 400, 1600, 6400; the fifth is the first sized by the rate
	// alone. It is a prefetch, started in the background once the 6400
	// segment is 10% used, so wait for it rather than for any claim.
	waitFor(t, func() bool { return len(st.claimSteps()) >= 5 })
	steps := st.claimSteps()
	last := steps[len(steps)-1]
	if last < 8000 || last > 10000 {
		t.Fatalf("claim steps %v: last %d, want about 9000 (10/s for 15 min)", steps, last)
	}

	// A very slow key never claims less than the stored step.
	clk2 := fakeclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	st2 := newTestStore(t, "slow", 1, 100)
	b := newAllocator(t, st2, "slow", Settings{Clock: clk2})
	for range 250 {
		mustNext(t, b)
		clk2.Add(time.Hour)
	}
	for _, s := range st2.claimSteps()[1:] {
		if s != 100 {
			t.Fatalf("claim steps %v, want 100 after the first", st2.claimSteps())
		}
	}

	// A very fast key is capped at MaxStep.
	st3 := newTestStore(t, "fast", 1, 100)
	c := newAllocator(t, st3, "fast", Settings{MaxStep: 5000})
	for range 20000 {
		mustNext(t, c)
	}
	prev := int64(100)
	for _, s := range st3.claimSteps()[1:] {
		if s > 5000 {
			t.Fatalf("claim step %d above MaxStep 5000", s)
		}
		if s > 4*prev {
			t.Fatalf("claim steps %v: grew more than 4× at once", st3.claimSteps())
		}
		prev = s
	}
}

func TestClose(t *testing.T) {
	st := newTestStore(t, "k", 1, 100)
	a := newAllocator(t, st, "k", Settings{})
	mustNext(t, a)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := a.Next(context.Background()); !errors.Is(err, idforge.ErrClosed) {
		t.Fatalf("Next after Close: %v, want ErrClosed", err)
	}
	if _, err := a.NextN(context.Background(), 3); !errors.Is(err, idforge.ErrClosed) {
		t.Fatalf("NextN after Close: %v, want ErrClosed", err)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10 s")
		}
		time.Sleep(time.Millisecond)
	}
}

func ExampleAllocator() {
	store := memstore.New()
	ctx := context.Background()
	// A Leaf-style row: the first ID is 1, segments of 1000.
	err := store.CreateKey(ctx, idforge.Key{Name: "order", Strategy: idforge.StrategySegment, MaxID: 1, Step: 1000})
	if err != nil {
		panic(err)
	}
	ids := New(store, "order", Settings{})
	defer ids.Close()

	first, _ := ids.Next(ctx)
	batch, _ := ids.NextN(ctx, 3)
	fmt.Println(first, batch)
	// Output: 1 [2 3 4]
}

func TestTinySegments(t *testing.T) {
	// Segments of one value: every ID is its own claim and the double
	// buffer still keeps one claimed ahead.
	st := newTestStore(t, "k", 1, 1)
	a := newAllocator(t, st, "k", Settings{MaxStep: 1})
	ctx := context.Background()
	const workers, each = 8, 200
	errs := make(chan error, workers)
	got := make(chan int64, workers*each)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range each {
				v, err := a.Next(ctx)
				if err != nil {
					errs <- err
					return
				}
				got <- v
			}
		})
	}
	wg.Wait()
	close(errs)
	close(got)
	for err := range errs {
		t.Fatal(err)
	}
	seen := map[int64]bool{}
	for v := range got {
		if seen[v] {
			t.Fatalf("duplicate %d", v)
		}
		seen[v] = true
	}
	if len(seen) != workers*each {
		t.Fatalf("%d IDs, want %d", len(seen), workers*each)
	}
}

// A step an operator changed in the store reaches the allocator with the
// next claim's answer: later claims ask for at least the new step, with
// no refresh of the key.
func TestStoredStepLearnedFromClaims(t *testing.T) {
	st := newTestStore(t, "k", 1, 10)
	a := newAllocator(t, st, "k", Settings{MaxStep: 10})
	for range 30 {
		mustNext(t, a)
	}
	st.stored.Store(40)
	for range 200 {
		mustNext(t, a)
	}
	steps := st.claimSteps()
	if last := steps[len(steps)-1]; last != 40 {
		t.Fatalf("claim steps %v: the last asked for %d, want the new stored step 40", steps, last)
	}
}

func ExampleAllocator_NextInto() {
	store := memstore.New()
	ctx := context.Background()
	err := store.CreateKey(ctx, idforge.Key{Name: "order", Strategy: idforge.StrategySegment, MaxID: 1, Step: 1000})
	if err != nil {
		panic(err)
	}
	a := New(store, "order", Settings{})
	defer a.Close()
	// One slice, reused for every batch: nothing is allocated per batch.
	buf := make([]int64, 4)
	for range 2 {
		n, err := a.NextInto(ctx, buf)
		if err != nil {
			panic(err)
		}
		fmt.Println(buf[:n])
	}
	// Ranges cost the same whatever their length.
	ranges, err := a.AppendRangesBelow(ctx, nil, 1500, math.MaxInt64)
	if err != nil {
		panic(err)
	}
	for _, r := range ranges {
		fmt.Println(r.Start, r.Len())
	}
	// Output:
	// [1 2 3 4]
	// [5 6 7 8]
	// 9 1500
}

// A claim that hangs (a store that stopped answering) does not hold up
// Close: Close cancels the claim in flight, and the caller waiting on it
// hears that the Allocator closed.
func TestCloseCancelsTheClaimInFlight(t *testing.T) {
	st := newTestStore(t, "k", 1, 1000)
	st.setGate(make(chan struct{})) // never opens
	a := New(st, "k", Settings{Logger: quiet, LoadTimeout: time.Hour})
	failed := make(chan error, 1)
	go func() {
		_, err := a.Next(context.Background())
		failed <- err
	}()
	waitFor(t, func() bool { return len(st.claimSteps()) == 1 })
	closed := make(chan error, 1)
	go func() { closed <- a.Close() }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close still waits for a claim that hangs")
	}
	if err := <-failed; !errors.Is(err, idforge.ErrClosed) {
		t.Errorf("Next during Close: %v, want ErrClosed", err)
	}
}
