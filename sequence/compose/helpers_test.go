package compose_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idforge/idforge"
)

// quiet discards the log lines of the compositions under test.
var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// counter is an in-memory source: start+1, start+2, … It counts its
// calls and can be made to fail, or to take a while.
type counter struct {
	n     atomic.Int64
	calls atomic.Int64
	delay atomic.Int64 // per call, ns
	fail  atomic.Bool
}

func newCounter(start int64) *counter {
	c := &counter{}
	c.n.Store(start)
	return c
}

var errFake = errors.New("fake source: down")

func (c *counter) Next(ctx context.Context) (int64, error) {
	c.calls.Add(1)
	if d := time.Duration(c.delay.Load()); d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return 0, ctx.Err()
		}
	}
	if c.fail.Load() {
		return 0, fmt.Errorf("%w: %w", idforge.ErrUnavailable, errFake)
	}
	return c.n.Add(1), nil
}

// load calls Next from workers goroutines until finish, recording every
// value; errors travel back over a channel.
type load struct {
	stop   chan struct{}
	wg     sync.WaitGroup
	vals   chan []int64
	errs   chan error
	issued atomic.Int64
}

// startLoad starts the goroutines; onValue, when set, sees every value as
// it is issued (from the workers' goroutines).
func startLoad(gen idforge.Generator, workers int, onValue func(int64)) *load {
	l := &load{stop: make(chan struct{}), vals: make(chan []int64, workers), errs: make(chan error, workers)}
	ctx := context.Background()
	for w := range workers {
		l.wg.Go(func() {
			var vals []int64
			defer func() { l.vals <- vals }()
			for {
				select {
				case <-l.stop:
					return
				default:
				}
				cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
				v, err := gen.Next(cctx)
				cancel()
				if err != nil {
					l.errs <- fmt.Errorf("worker %d, after %d values: %w", w, len(vals), err)
					return
				}
				vals = append(vals, v)
				l.issued.Add(1)
				if onValue != nil {
					onValue(v)
				}
			}
		})
	}
	return l
}

// finish stops the load, fails tb with the workers' errors and returns
// every value issued.
func (l *load) finish(tb testing.TB) []int64 {
	tb.Helper()
	close(l.stop)
	l.wg.Wait()
	close(l.vals)
	close(l.errs)
	for err := range l.errs {
		tb.Error(err)
	}
	var all []int64
	for v := range l.vals {
		all = append(all, v...)
	}
	return all
}

// waitFor polls cond every few milliseconds until it holds, failing tb
// with what after a deadline generous enough for a busy machine: a test
// waits for a condition, it never bounds how long one takes.
func waitFor(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	const timeout = 2 * time.Minute
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// unique fails tb for each value issued more than once or below 1.
func unique(tb testing.TB, vals []int64) {
	tb.Helper()
	seen := make(map[int64]struct{}, len(vals))
	dups := 0
	for _, v := range vals {
		if v < 1 {
			tb.Errorf("value %d is below 1", v)
		}
		if _, dup := seen[v]; dup {
			dups++
			if dups <= 10 {
				tb.Errorf("value %d issued more than once", v)
			}
		}
		seen[v] = struct{}{}
	}
	if dups > 0 {
		tb.Errorf("%d duplicates among %d values", dups, len(vals))
	}
}
