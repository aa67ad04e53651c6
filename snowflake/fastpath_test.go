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
)

// TestConcurrentClockJumps races the lock-free fast path of Next against
// the slow path (tick openings, NextN, Rebind) while the fake clock jumps
// forwards and backwards, by less than MaxBackwardWait (waited out) and by
// more (refused, or borrowed through): no ID is issued twice, each
// goroutine's IDs strictly increase, and every refusal is
// ErrClockMovedBackwards. A 4-bit sequence makes ticks run out and open
// all the time.
func TestConcurrentClockJumps(t *testing.T) {
	for _, borrow := range []time.Duration{0, 40 * time.Millisecond} {
		t.Run(fmt.Sprintf("MaxBorrow=%v", borrow), func(t *testing.T) {
			const goroutines, calls = 8, 3000
			l := mustParse(t, "time:49,worker:10,sequence:4,unit=1ms,epoch=2024-01-01T00:00:00Z")
			clk := fakeclock.New(start)
			g := newGen(t, Settings{Layout: l, Worker: 1, Clock: clk, MaxBorrow: borrow})

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

			results := make([][]int64, goroutines)
			errs := make(chan error, goroutines)
			var wg sync.WaitGroup
			for i := range goroutines {
				wg.Add(1)
				go func() {
					defer wg.Done()
					var ids []int64
					for c := range calls {
						var got []int64
						var err error
						if c%50 == 49 {
							got, err = g.NextN(context.Background(), 1+c%40)
						} else {
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
			if len(seen) < goroutines*calls/10 {
				t.Fatalf("only %d IDs issued in %d calls", len(seen), goroutines*calls)
			}
			if n := g.Issued(); n < int64(len(seen)) { // a NextN refused midway issued IDs it did not return
				t.Errorf("Issued() = %d, but %d IDs were returned", n, len(seen))
			}
			t.Logf("%d IDs", len(seen))
		})
	}
}
