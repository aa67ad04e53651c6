package segment

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/fakeclock"
	"github.com/idforge/idforge/store/memstore"
)

// latencyStore is a memstore whose claims take a set time on a fake
// clock: a claim is held until the test has moved the clock past its due
// time and releases it, so how long a claim takes against how fast IDs
// are drawn is the same in every run, whatever the machine's load.
type latencyStore struct {
	*memstore.Store
	clock   *fakeclock.Clock
	latency atomic.Int64 // of the next claims, in ns of the fake clock
	claims  chan *heldClaim
}

type heldClaim struct {
	due     time.Time
	release chan struct{}
}

func (s *latencyStore) ClaimSegment(ctx context.Context, key string, step int64) (idforge.Segment, error) {
	c := &heldClaim{due: s.clock.Now().Add(time.Duration(s.latency.Load())), release: make(chan struct{})}
	s.claims <- c
	select {
	case <-c.release:
	case <-ctx.Done():
		return idforge.Segment{}, ctx.Err()
	}
	return s.Store.ClaimSegment(ctx, key, step)
}

// TestNoWaitsAfterColdStart draws 10,000 IDs every 100 µs of the fake
// clock (100 M IDs/s) from a key whose stored step is 1000, with claims
// that take 5 ms and, in the second half, 20 ms. Callers wait only while
// the step grows at the cold start and at the first claim slower than any
// seen before; from then on the step and the prefetch point follow the
// rate and the slowest claim, and no caller waits.
func TestNoWaitsAfterColdStart(t *testing.T) {
	const (
		batch = 10_000
		every = 100 * time.Microsecond // 100 M IDs/s
	)
	clk := fakeclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	st := &latencyStore{Store: memstore.New(), clock: clk, claims: make(chan *heldClaim, 1)}
	st.latency.Store(int64(5 * time.Millisecond))
	if err := st.CreateKey(context.Background(), idforge.Key{Name: "k", Strategy: idforge.StrategySegment, Step: 1000, MaxID: 1}); err != nil {
		t.Fatal(err)
	}
	accepted := make(chan struct{}, 1)
	a := newAllocator(t, st, "k", Settings{Clock: clk, TargetDuration: 20 * time.Millisecond, LoadTimeout: time.Minute,
		OnClaim: func(_ string, _ time.Duration, err error) {
			if err != nil && !errors.Is(err, context.Canceled) { // Close cancels the last claim
				t.Errorf("claim: %v", err)
			}
			accepted <- struct{}{}
		}})
	ctx := context.Background()

	var held *heldClaim
	locked := func(f func() bool) bool { a.mu.Lock(); defer a.mu.Unlock(); return f() }
	// release lets the held claim finish and waits until it is accepted.
	release := func() {
		close(held.release)
		<-accepted
		held = nil
	}
	// settle finishes every claim due by now, in order.
	settle := func() {
		for {
			if held == nil {
				if !locked(func() bool { return a.att != nil }) {
					return
				}
				held = <-st.claims // a claim was started: it reads the clock first
			}
			if clk.Now().Before(held.due) {
				return
			}
			release()
		}
	}
	buf := make([]int64, batch)
	// wait draws a batch the buffers cannot cover: the caller waits on
	// the store, so the clock runs on to each claim's due time.
	wait := func() {
		done := make(chan error, 1)
		waits := a.Stats().Waits
		go func() { _, err := a.NextInto(ctx, buf); done <- err }()
		for {
			// Let the caller reach a wait (it counts it) or finish before
			// a claim is released here: releasing one moves the clock to
			// its due time, which is right only while a caller waits for
			// it. (Taking a prefetch's claim before a finished caller's
			// answer moved the clock for nobody, on a busy machine.)
			for locked(func() bool { return a.waits == waits }) {
				select {
				case err := <-done:
					if err != nil {
						t.Fatal(err)
					}
					return
				default:
					runtime.Gosched()
				}
			}
			waits = a.Stats().Waits
			if held == nil {
				held = <-st.claims
			}
			if d := held.due.Sub(clk.Now()); d > 0 {
				clk.Add(d)
			}
			release()
		}
	}

	start := clk.Now()
	var waitsAt []time.Duration // fake time of each wait since the start
	var slower time.Duration    // when claims became slower
	last := int64(0)
	for k := range 6_000 {
		if k == 3_000 {
			st.latency.Store(int64(20 * time.Millisecond))
			slower = clk.Now().Sub(start)
		}
		if locked(func() bool { return a.bufferedLocked() < batch }) {
			waitsAt = append(waitsAt, clk.Now().Sub(start))
			wait()
		} else if _, err := a.NextInto(ctx, buf); err != nil {
			t.Fatal(err)
		}
		if buf[0] <= last || buf[batch-1] != buf[0]+batch-1 && buf[batch-1] <= buf[0] {
			t.Fatalf("batch %d: IDs %d..%d after %d", k, buf[0], buf[batch-1], last)
		}
		last = buf[batch-1]
		settle()
		clk.Add(every)
		settle()
	}
	s := a.Stats()
	t.Logf("waits at %v (claims slower from %v); %d claims, last step %d; the allocator counted %d waits", waitsAt, slower, s.Loads, s.Step, s.Waits)
	// The cold start: the first 100 ms. The claims of the first 60 ms
	// after the store turned four times slower were sized for the old
	// latency: callers may wait for those (two of them do, at about +31
	// and +53 ms), never after the sizing has learned the new one.
	for _, at := range waitsAt {
		if at > 100*time.Millisecond && (at < slower || at > slower+60*time.Millisecond) {
			t.Errorf("a caller waited on the store at %v, after the cold start", at)
		}
	}
}
