package snowflake

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/fakeclock"
	"github.com/idforge/idforge/internal/testsvc"
)

// TestConcurrentClockJumps races the lock-free fast path of Next and
// NextInto against the slow path (tick openings, NextN, the rest of a
// NextInto batch past its tick, Rebind) while the fake clock jumps
// forwards and backwards, by less than MaxBackwardWait (waited out) and by
// more (refused, or borrowed through): no ID is issued twice, each
// goroutine's IDs strictly increase, and every refusal is
// ErrClockMovedBackwards. A 4-bit sequence makes ticks run out and open
// all the time.
func TestConcurrentClockJumps(t *testing.T) {
	for _, c := range []struct {
		borrow time.Duration
		drift  bool
	}{{0, false}, {40 * time.Millisecond, false}, {40 * time.Millisecond, true}} {
		borrow := c.borrow
		t.Run(fmt.Sprintf("MaxBorrow=%v,Drift=%v", borrow, c.drift), func(t *testing.T) {
			const goroutines, calls = 8, 3000
			l := mustParse(t, "time:49,worker:10,sequence:4,unit=1ms,epoch=2024-01-01T00:00:00Z")
			clk := fakeclock.New(start)
			g := newGen(t, Settings{Layout: l, Worker: 1, Clock: clk, MaxBorrow: borrow, Drift: c.drift})

			var stop atomic.Bool
			var movers sync.WaitGroup
			movers.Add(2)
			go func() { // the clock: mostly forwards, sometimes back
				defer movers.Done()
				steps := []time.Duration{time.Millisecond, 2 * time.Millisecond, -2 * time.Millisecond, -30 * time.Millisecond, 35 * time.Millisecond, 0}
				for !stop.Load() {
					clk.Add(steps[rand.IntN(len(steps))])
					time.Sleep(50 * time.Microsecond)
				}
			}()
			go func() { // a lease lost and another worker ID obtained, again and again
				defer movers.Done()
				for w := int64(2); !stop.Load(); w = 3 - w {
					if err := g.Rebind(w, time.Time{}, nil); err != nil {
						t.Error(err)
						return
					}
					time.Sleep(300 * time.Microsecond)
				}
			}()

			// Refusals cost nothing, so on a busy machine the callers can
			// finish their calls before the clock goroutine has moved far
			// enough to let many IDs out; they go on past their calls until
			// enough IDs were issued for the race to mean something.
			const want = goroutines * calls / 10
			var issued atomic.Int64
			deadline := time.Now().Add(30 * time.Second)
			results := make([][]int64, goroutines)
			errs := make(chan error, goroutines)
			var wg sync.WaitGroup
			for i := range goroutines {
				wg.Add(1)
				go func() {
					defer wg.Done()
					var ids []int64
					buf := make([]int64, 40)
					for c := 0; c < calls || issued.Load() < want && time.Now().Before(deadline); c++ {
						var got []int64
						var err error
						switch {
						case c%50 == 49:
							got, err = g.NextN(context.Background(), 1+c%40)
						case c%5 == 2: // batches within a tick (lock-free) and across ticks
							var n int
							n, err = g.NextInto(context.Background(), buf[:1+c%37])
							got = buf[:n]
						default:
							var id int64
							if id, err = g.Next(context.Background()); err == nil {
								got = []int64{id}
							}
						}
						if err != nil {
							if !errors.Is(err, idforge.ErrClockMovedBackwards) {
								errs <- err
								return
							}
							continue
						}
						for _, id := range got {
							if len(ids) > 0 && id <= ids[len(ids)-1] {
								errs <- fmt.Errorf("goroutine %d: ID %d after %d", i, id, ids[len(ids)-1])
								return
							}
							ids = append(ids, id)
						}
						issued.Add(int64(len(got)))
					}
					results[i] = ids
				}()
			}
			wg.Wait()
			stop.Store(true)
			movers.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}

			seen := make(map[int64]bool)
			for _, ids := range results {
				for _, id := range ids {
					if seen[id] {
						t.Fatalf("ID %d issued twice", id)
					}
					seen[id] = true
				}
			}
			if len(seen) < want {
				t.Fatalf("only %d IDs issued in %d calls and 30 s", len(seen), goroutines*calls)
			}
			if n := g.Issued(); n < int64(len(seen)) { // a NextN refused midway issued IDs it did not return
				t.Errorf("Issued() = %d, but %d IDs were returned", n, len(seen))
			}
			t.Logf("%d IDs", len(seen))
		})
	}
}

// TestFastClockTracksWallClock issues IDs on the operating system's clock,
// where the fast path reads the monotonic clock instead of time.Now:
// every ID's tick must be one the wall clock read during the call (give or
// take anchorSlack), never a later one and not an older one.
func TestFastClockTracksWallClock(t *testing.T) {
	l := mustParse(t, "time:41,sequence:22,unit=1ms,epoch=2024-01-01T00:00:00Z")
	g := newGen(t, Settings{Layout: l})
	if !g.mono {
		t.Fatal("a generator on idforge.SystemClock does not read the clock itself")
	}
	for end := time.Now().Add(100 * time.Millisecond); time.Now().Before(end); {
		before := time.Now()
		id := mustNext(t, g)
		after := time.Now()
		p := mustExplain(t, l, id)
		if p.Time.After(after) || p.Time.Add(l.Unit).Before(before.Add(-anchorSlack)) {
			t.Fatalf("ID in the tick starting %s, issued between %s and %s",
				p.Time.Format(time.RFC3339Nano), before.UTC().Format(time.RFC3339Nano), after.UTC().Format(time.RFC3339Nano))
		}
	}
}

// BenchmarkNextVsNextN reports the process's CPU time per ID (cpu-ns/id)
// of Next, of NextN (a new slice per call) and of NextInto (one slice
// reused) in batches of 100 to 4096, on the system clock and a layout
// whose sequence (2^22 a millisecond) never makes a call wait: on a
// loaded machine CPU time moves less than wall time. NextInto should stay
// at least 10 times cheaper per ID than Next.
func BenchmarkNextVsNextN(b *testing.B) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		n    int
		into bool
	}{
		{"n=1", 1, false}, {"n=256", 256, false}, {"n=4096", 4096, false},
		{"into=100", 100, true}, {"into=256", 256, true}, {"into=4096", 4096, true},
	} {
		b.Run(tc.name, func(b *testing.B) {
			g := newBench(b, "time:41,sequence:22,unit=1ms,epoch=2024-01-01T00:00:00Z")
			dst := make([]int64, tc.n)
			cpu0 := testsvc.CPUTime()
			for b.Loop() {
				var err error
				switch {
				case tc.into:
					_, err = g.NextInto(ctx, dst)
				case tc.n == 1:
					_, err = g.Next(ctx)
				default:
					_, err = g.NextN(ctx, tc.n)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			if cpu := testsvc.CPUTime() - cpu0; cpu0 >= 0 {
				b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N*tc.n), "cpu-ns/id")
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*tc.n), "ns/id")
		})
	}
}

// TestCountCarriedIntoTheTick: callers that go on adding to a used-up tick
// (each takes nothing and goes to the slow path) can run seq's count past
// its field into the tick's bits, so that seq reads the next tick with a
// small count before any opening published that tick. The fast path must
// take nothing from such a value, and the next opening must count the
// next tick from 0, once: every ID stays distinct and Issued exact.
func TestCountCarriedIntoTheTick(t *testing.T) {
	l := mustParse(t, "time:49,worker:10,sequence:4,unit=1ms,epoch=2024-01-01T00:00:00Z")
	g, clk := newFake(t, l)
	seen := make(map[int64]bool)
	issue := func(n int) {
		for range n {
			id := mustNext(t, g)
			if seen[id] {
				t.Fatalf("ID %d issued twice", id)
			}
			seen[id] = true
		}
	}
	size := g.maxSeq + 1 // 16 numbers a tick
	issue(int(size))     // the tick is used up
	before := clk.Now()
	// Adds to the used-up tick carry into the tick's bits: seq now shows
	// the next tick, with 3 of its numbers seemingly taken.
	g.seq.Add(uint64(size + 3))
	if got, want := g.seq.Load(), uint64(g.last+1)<<g.tickShift|3; got != want {
		t.Fatalf("seq = %#x, want %#x (carried into the next tick)", got, want)
	}
	if _, k := g.take(1); k != 0 {
		t.Fatal("the fast path took a number from a carried count")
	}
	if !clk.Now().Equal(before) {
		t.Fatal("the clock moved; the test needs the fast path to read the used-up tick")
	}
	issue(int(2 * size)) // waits for the next tick, opened by the slow path from 0, and the one after
	if n := g.Issued(); n != 3*size {
		t.Errorf("Issued() = %d, want %d", n, 3*size)
	}
}
