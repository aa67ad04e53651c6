package client

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/issuer"
)

// cacheOf returns the cache of key in c, a cached client.
func cacheOf(t *testing.T, c Client, key string) *keyCache {
	t.Helper()
	kc, ok := (*c.(*cached).keys.Load())[key]
	if !ok {
		t.Fatalf("no cache for %q", key)
	}
	return kc
}

func cacheCounts(kc *keyCache) (fetches, waits int64) {
	kc.mu.Lock()
	defer kc.mu.Unlock()
	return kc.fetches, kc.waits
}

// Most IDs need no call to the server: about one call per batch, and no
// ID twice across concurrent callers.
func TestRangeCacheCalls(t *testing.T) {
	const batch, goroutines, each = 100, 8, 500
	for _, m := range remoteModes() {
		t.Run(m.name, func(t *testing.T) {
			n := newNode(t, newStore(t), 1, 1000)
			c := m.new(t, []*node{n}, WithRangeCache(batch, 0.2))
			defer c.Close()
			ctx := testCtx(t)
			var (
				mu   sync.Mutex
				all  []int64
				errs = make(chan error, goroutines)
				wg   sync.WaitGroup
			)
			for g := range goroutines {
				wg.Go(func() {
					var mine []int64
					for i := 0; i < each; {
						if g%2 == 0 && i%10 == 0 {
							ids, err := c.NextN(ctx, "order", 10)
							if err != nil {
								errs <- err
								return
							}
							if !slices.IsSorted(ids) {
								errs <- errors.New("NextN from the cache not increasing")
							}
							mine = append(mine, ids...)
							i += 10
							continue
						}
						id, err := c.Next(ctx, "order")
						if err != nil {
							errs <- err
							return
						}
						mine = append(mine, id)
						i++
					}
					mu.Lock()
					all = append(all, mine...)
					mu.Unlock()
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			if len(all) != goroutines*each {
				t.Fatalf("%d IDs, want %d", len(all), goroutines*each)
			}
			checkUnique(t, all)
			// Every fetch but the ones still running at the end served a
			// whole batch.
			calls := m.idCalls(n)
			if min, max := int64(goroutines*each/batch), int64(goroutines*each/batch+2); calls < min || calls > max {
				t.Fatalf("%d calls for %d IDs in batches of %d, want %d..%d", calls, len(all), batch, min, max)
			}
			t.Logf("%d IDs, %d calls that issue IDs", len(all), calls)
		})
	}
}

// With a slow server the next block is fetched before the cache runs
// dry: no caller waits while IDs remain, only the very first call.
func TestRangeCacheRefillsBeforeEmpty(t *testing.T) {
	const batch, goroutines, each = 400, 4, 300
	for _, m := range remoteModes() {
		t.Run(m.name, func(t *testing.T) {
			n := newNode(t, newStore(t), 1, 1000)
			c := m.new(t, []*node{n}, WithRangeCache(batch, 0.5))
			defer c.Close()
			ctx := testCtx(t)
			if _, err := c.Next(ctx, "order"); err != nil { // the first call waits
				t.Fatal(err)
			}
			n.delay.Store(int64(5 * time.Millisecond))
			// 4 callers taking an ID every ~1 ms: the 200 IDs left when a
			// refill starts last ~50 ms, ten times the server's delay (room
			// for a loaded machine; without the early refill every batch
			// would make callers wait).
			var (
				wg      sync.WaitGroup
				errs    = make(chan error, goroutines)
				mu      sync.Mutex
				all     []int64
				slowest time.Duration
			)
			for range goroutines {
				wg.Go(func() {
					var mine []int64
					var worst time.Duration
					for range each {
						start := time.Now()
						id, err := c.Next(ctx, "order")
						if err != nil {
							errs <- err
							return
						}
						worst = max(worst, time.Since(start))
						mine = append(mine, id)
						time.Sleep(time.Millisecond)
					}
					mu.Lock()
					all = append(all, mine...)
					slowest = max(slowest, worst)
					mu.Unlock()
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			checkUnique(t, all)
			fetches, waits := cacheCounts(cacheOf(t, c, "order"))
			if waits != 1 {
				t.Fatalf("%d calls waited for a fetch (slowest call %s); want only the first", waits, slowest)
			}
			if want := int64(1 + goroutines*each/batch); fetches < want {
				t.Fatalf("%d fetches, want at least %d", fetches, want)
			}
			t.Logf("%d fetches, slowest call %s with a server delay of 5ms", fetches, slowest)
		})
	}
}

// Snowflake keys go to the server every time: a cached snowflake ID would
// carry the time it was fetched, not the time it was used.
func TestRangeCacheSkipsSnowflakeKeys(t *testing.T) {
	for _, m := range remoteModes() {
		t.Run(m.name, func(t *testing.T) {
			n := newNode(t, newStore(t), 1, 1000)
			c := m.new(t, []*node{n}, WithRangeCache(100, 0.2))
			defer c.Close()
			ctx := testCtx(t)
			for range 5 {
				if _, err := c.Next(ctx, "msg"); err != nil {
					t.Fatal(err)
				}
			}
			if calls := m.idCalls(n); calls != 5 {
				t.Fatalf("%d calls for 5 snowflake IDs, want 5", calls)
			}
		})
	}
}

// Segment keys in global order go to the server every time: a cached ID
// would be handed out after other clients got higher ones.
func TestRangeCacheSkipsGlobalOrderKeys(t *testing.T) {
	for _, m := range remoteModes() {
		t.Run(m.name, func(t *testing.T) {
			n := newNode(t, newStore(t), 1, 1000)
			ctx := testCtx(t)
			k := issuer.WithDefaults(idforge.Key{Name: "tx", Order: idforge.OrderGlobal})
			if err := n.iss.CreateKey(ctx, k); err != nil {
				t.Fatal(err)
			}
			c := m.new(t, []*node{n}, WithRangeCache(100, 0.2))
			defer c.Close()
			for want := int64(1); want <= 5; want++ {
				if id, err := c.Next(ctx, "tx"); err != nil || id != want {
					t.Fatalf("Next = %d, %v; want %d", id, err, want)
				}
			}
			if calls := m.idCalls(n); calls != 5 {
				t.Fatalf("%d calls for 5 IDs of a key in global order, want 5", calls)
			}
		})
	}
}

// NextN of a batch or more bypasses the cache; NextN that outgrows what
// is cached waits for the next block and keeps order.
func TestRangeCacheNextN(t *testing.T) {
	n := newNode(t, newStore(t), 1, 1000)
	c := modes[1].new(t, []*node{n}, WithRangeCache(10, 0.2))
	defer c.Close()
	ctx := testCtx(t)
	var all []int64
	for _, k := range []int{3, 9, 9, 10, 25, 1} {
		ids, err := c.NextN(ctx, "order", k)
		if err != nil || len(ids) != k {
			t.Fatalf("NextN(%d) = %v, %v", k, ids, err)
		}
		all = append(all, ids...)
	}
	checkUnique(t, all)
	// Within the cache, order is kept across blocks.
	if !slices.IsSorted(all[:21]) {
		t.Fatalf("IDs from the cache out of order: %v", all[:21])
	}
}

// A failing store surfaces once the cache is empty, and the cache recovers
// with the store. IDs cached before the failure are handed out first.
func TestRangeCacheOutage(t *testing.T) {
	st := newStore(t)
	ctx := testCtx(t)
	if err := st.CreateKey(ctx, idforge.Key{Name: "tiny", Strategy: idforge.StrategySegment, Step: 10, MaxID: 1}); err != nil {
		t.Fatal(err)
	}
	n := newNode(t, st, 1, 10)
	c := modes[2].new(t, []*node{n}, WithRangeCache(10, 0.2), WithRetries(0))
	defer c.Close()
	if _, err := c.Next(ctx, "tiny"); err != nil {
		t.Fatal(err)
	}
	st.Fail(errors.New("down"))
	var got int
	var err error
	for range 1000 {
		if _, err = c.Next(ctx, "tiny"); err != nil {
			break
		}
		got++
	}
	if !errors.Is(err, idforge.ErrUnavailable) {
		t.Fatalf("after %d IDs: %v, want ErrUnavailable", got, err)
	}
	if got < 9 {
		t.Fatalf("only %d IDs after the store failed; the cache and the node's buffers hold more", got)
	}
	st.Fail(nil)
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := c.Next(ctx, "tiny"); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no recovery after the store came back")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Close ends fetches in flight and refuses further calls.
func TestRangeCacheClose(t *testing.T) {
	n := newNode(t, newStore(t), 1, 1000)
	c := modes[1].new(t, []*node{n}, WithRangeCache(100, 0.2))
	ctx := testCtx(t)
	if _, err := c.Next(ctx, "order"); err != nil {
		t.Fatal(err)
	}
	// The refill's fetch is held until the test ends: Close must return
	// without it.
	n.delay.Store(int64(time.Hour))
	t.Cleanup(func() { n.delay.Store(0) })
	for range 85 { // starts the refill
		if _, err := c.Next(ctx, "order"); err != nil {
			t.Fatal(err)
		}
	}
	closed := make(chan error, 1)
	go func() { closed <- c.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Close waits for the fetch in flight")
	}
	if _, err := c.NextN(ctx, "order", 2); !errors.Is(err, idforge.ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
}

// A client issuing 1,000,000 IDs through a cache of 10,000 makes about
// 100 calls; two clients on one server never share an ID.
func TestRangeCacheMillion(t *testing.T) {
	if testing.Short() {
		t.Skip("a million IDs")
	}
	const total, batch = 1_000_000, 10_000
	for _, m := range remoteModes() {
		t.Run(m.name, func(t *testing.T) {
			n := newNode(t, newStore(t), 1, 1_000_000)
			a := m.new(t, []*node{n}, WithRangeCache(batch, 0.2))
			b := m.new(t, []*node{n}, WithRangeCache(batch, 0.2))
			defer a.Close()
			defer b.Close()
			// A million calls under -race on a loaded machine take far
			// longer than testCtx's 20 s; the deadline only guards a hang.
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			issue := func(c Client, count int) ([]int64, error) {
				ids := make([]int64, 0, count)
				for range count {
					id, err := c.Next(ctx, "order")
					if err != nil {
						return nil, err
					}
					ids = append(ids, id)
				}
				return ids, nil
			}
			var (
				fromB []int64
				errB  error
				wg    sync.WaitGroup
			)
			wg.Go(func() { fromB, errB = issue(b, 100_000) })
			fromA, err := issue(a, total)
			wg.Wait()
			if err != nil || errB != nil {
				t.Fatal(err, errB)
			}
			calls := m.idCalls(n)
			want := int64((total + 100_000) / batch)
			if calls < want || calls > want+4 {
				t.Fatalf("%d calls for %d IDs in blocks of %d, want about %d", calls, total+100_000, batch, want)
			}
			checkUnique(t, append(fromA, fromB...))
			t.Logf("%d + %d IDs, %d calls", len(fromA), len(fromB), calls)
		})
	}
}
