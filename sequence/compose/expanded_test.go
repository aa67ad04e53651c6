package compose_test

import (
	"context"
	"errors"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/testsvc"
	"github.com/idforge/idforge/sequence"
	"github.com/idforge/idforge/sequence/compose"
)

func newExpanded(tb testing.TB, inner idforge.Generator, opts compose.ExpandedOptions) *compose.Expanded {
	tb.Helper()
	if opts.Logger == nil {
		opts.Logger = quiet
	}
	e, err := compose.NewExpanded(inner, opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { e.Close() })
	return e
}

func TestNewExpandedInvalid(t *testing.T) {
	tests := []struct {
		name  string
		inner idforge.Generator
		opts  compose.ExpandedOptions
	}{
		{"nil inner", nil, compose.ExpandedOptions{}},
		{"negative bits", newCounter(0), compose.ExpandedOptions{MemoryBits: -1}},
		{"too many bits", newCounter(0), compose.ExpandedOptions{MemoryBits: compose.MaxMemoryBits + 1}},
		{"negative ahead", newCounter(0), compose.ExpandedOptions{Ahead: -time.Second}},
		{"queue too long", newCounter(0), compose.ExpandedOptions{MaxQueued: compose.MaxQueuedLimit + 1}},
		{"negative fetchers", newCounter(0), compose.ExpandedOptions{Fetchers: -1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := compose.NewExpanded(tt.inner, tt.opts); !errors.Is(err, idforge.ErrInvalidArgument) {
				t.Fatalf("NewExpanded: %v, want ErrInvalidArgument", err)
			}
		})
	}
}

// With m = 3 the inner source is called once per 8 IDs, plus the blocks
// the prefetcher keeps ready: exactly, once the Expanded is closed,
// inner calls = blocks installed + blocks queued, and blocks installed =
// ⌈IDs / 8⌉ (every installed block but the last is used up, and the last
// has given at least one ID). Many goroutines, Next and NextN mixed, no
// duplicate, and every ID is v << 3 | k for a value v the inner source
// returned.
func TestExpandedCountsInnerCalls(t *testing.T) {
	for _, prefetch := range []bool{true, false} {
		name := map[bool]string{true: "prefetch", false: "no prefetch"}[prefetch]
		t.Run(name, func(t *testing.T) {
			inner := newCounter(0)
			e := newExpanded(t, inner, compose.ExpandedOptions{MemoryBits: 3, NoPrefetch: !prefetch})
			const workers, per = 8, 3000
			ctx := context.Background()
			results := make(chan []int64, workers)
			errs := make(chan error, workers)
			var wg sync.WaitGroup
			for w := range workers {
				wg.Go(func() {
					var ids []int64
					defer func() { results <- ids }()
					for len(ids) < per {
						if w%2 == 1 && len(ids)%10 == 0 {
							batch, err := e.NextN(ctx, 7)
							if err != nil {
								errs <- err
								return
							}
							ids = append(ids, batch...)
							continue
						}
						id, err := e.Next(ctx)
						if err != nil {
							errs <- err
							return
						}
						ids = append(ids, id)
					}
				})
			}
			wg.Wait()
			close(results)
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			var ids []int64
			for r := range results {
				ids = append(ids, r...)
			}
			unique(t, ids)
			e.Close()

			st := e.Stats()
			calls := uint64(inner.calls.Load())
			if calls != st.InnerCalls || st.FetchErrors != 0 {
				t.Errorf("inner source called %d times; stats say %d calls, %d errors", calls, st.InnerCalls, st.FetchErrors)
			}
			if st.Fetched != st.Installed+uint64(st.Queued)+st.Dropped {
				t.Errorf("fetched %d blocks, installed %d, queued %d, dropped %d: some unaccounted for", st.Fetched, st.Installed, st.Queued, st.Dropped)
			}
			if want := uint64((len(ids) + 7) / 8); st.Installed != want {
				t.Errorf("%d blocks installed for %d IDs, want %d", st.Installed, len(ids), want)
			}
			t.Logf("%d IDs, %d inner calls (%d queued at close), %d waits", len(ids), calls, st.Queued, st.Waits)
			if !prefetch && st.Waits < st.Installed {
				t.Errorf("without prefetch: %d waits for %d blocks; every block is waited for", st.Waits, st.Installed)
			}
			top := inner.n.Load()
			for _, id := range ids {
				if v := id >> 3; v < 1 || v > top {
					t.Fatalf("ID %d comes from value %d, which the inner source never returned (it reached %d)", id, v, top)
				}
			}
		})
	}
}

// Values that do not fit, or are not positive, are refused with a clear
// error; the largest that fits is used.
func TestExpandedOutOfRange(t *testing.T) {
	limit := int64(math.MaxInt64 >> 3)
	e := newExpanded(t, newCounter(limit-1), compose.ExpandedOptions{MemoryBits: 3, NoPrefetch: true})
	ctx := context.Background()
	ids, err := e.NextN(ctx, 8)
	if err != nil {
		t.Fatal(err)
	}
	if ids[0] != limit<<3 || ids[7] != math.MaxInt64 {
		t.Errorf("last block: %d … %d, want %d … %d", ids[0], ids[7], limit<<3, int64(math.MaxInt64))
	}
	_, err = e.Next(ctx)
	if !errors.Is(err, compose.ErrOutOfRange) || !errors.Is(err, idforge.ErrSpaceExhausted) {
		t.Errorf("value past the limit: %v, want ErrOutOfRange and ErrSpaceExhausted", err)
	}
	z := newExpanded(t, newCounter(-1), compose.ExpandedOptions{NoPrefetch: true})
	if _, err := z.Next(ctx); !errors.Is(err, compose.ErrOutOfRange) {
		t.Errorf("value 0: %v, want ErrOutOfRange", err)
	}
}

// When no block is ready, the inner source's error reaches the caller at
// once (no hang); once it recovers, IDs flow again.
func TestExpandedInnerError(t *testing.T) {
	inner := newCounter(0)
	inner.fail.Store(true)
	e := newExpanded(t, inner, compose.ExpandedOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := e.Next(ctx); !errors.Is(err, idforge.ErrUnavailable) {
		t.Fatalf("Next: %v, want the inner source's ErrUnavailable", err)
	}
	if ctx.Err() != nil {
		t.Fatal("Next waited for the context instead of failing")
	}
	inner.fail.Store(false)
	if _, err := e.Next(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestExpandedClose(t *testing.T) {
	inner := newCounter(0)
	e, err := compose.NewExpanded(inner, compose.ExpandedOptions{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for range 100 {
		if _, err := e.Next(ctx); err != nil {
			t.Fatal(err)
		}
	}
	e.Close()
	e.Close()
	if _, err := e.Next(ctx); !errors.Is(err, idforge.ErrClosed) {
		t.Errorf("Next after Close: %v", err)
	}
	if _, err := e.NextN(ctx, 3); !errors.Is(err, idforge.ErrClosed) {
		t.Errorf("NextN after Close: %v", err)
	}
	if _, err := e.NextN(ctx, 0); !errors.Is(err, idforge.ErrInvalidCount) {
		t.Errorf("NextN(0): %v", err)
	}
	// The prefetcher is gone: nothing calls the inner source any more.
	calls := inner.calls.Load()
	time.Sleep(50 * time.Millisecond)
	if got := inner.calls.Load(); got != calls {
		t.Errorf("inner source called %d more times after Close", got-calls)
	}
}

// The prefetcher keeps up with a slow inner source (5 ms a call, so 1600
// IDs/s one call at a time with m = 3) consumed at about 400 IDs/s: after
// a warm-up of a quarter of a second it keeps a block ready, so that no
// call waits. The test waits for a block to be ready before each call
// rather than bound how soon one is (a busy machine may delay a fetch):
// without a prefetcher none ever would be.
func TestExpandedPrefetchKeepsUp(t *testing.T) {
	inner := newCounter(0)
	inner.delay.Store(int64(5 * time.Millisecond))
	e := newExpanded(t, inner, compose.ExpandedOptions{MemoryBits: 3})
	ctx := context.Background()
	const interval = 2500 * time.Microsecond // 400 IDs/s
	tick := time.NewTicker(interval)
	defer tick.Stop()
	var ids []int64
	var warm compose.ExpandedStats
	start := time.Now()
	for time.Since(start) < 1500*time.Millisecond {
		<-tick.C
		if warm.Installed != 0 {
			waitFor(t, "a block ready", func() bool { return e.Stats().Queued > 0 })
		}
		id, err := e.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
		if warm.Installed == 0 && time.Since(start) >= 250*time.Millisecond {
			warm = e.Stats()
		}
	}
	unique(t, ids)
	st := e.Stats()
	t.Logf("%d IDs; at warm-up %+v; at the end %+v", len(ids), warm, st)
	if st.Waits != warm.Waits {
		t.Errorf("%d calls waited after warm-up (%d blocks installed meanwhile)", st.Waits-warm.Waits, st.Installed-warm.Installed)
	}
	if st.Rate <= 0 {
		t.Errorf("no consumption rate measured: %+v", st)
	}
	// For comparison, without the prefetcher every block is waited for.
	np := newExpanded(t, inner, compose.ExpandedOptions{MemoryBits: 3, NoPrefetch: true})
	for range 80 {
		if _, err := np.Next(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if st := np.Stats(); st.Waits != 10 {
		t.Errorf("without prefetch: %d waits for 80 IDs, want 10", st.Waits)
	}
}

// A "process" (an Expanded over its own Redis source) is dropped without
// Close, as a crash would leave it; a second one over the same Redis key
// issues no ID the first issued: the inner counter never repeats a
// value, and the first's unused blocks are a gap.
func TestExpandedRestartRedis(t *testing.T) {
	srv := testsvc.StartRedisServer(t)
	ctx := context.Background()
	open := func() *compose.Expanded {
		src, err := sequence.Open(ctx, sourceURL(srv.URL(), "orders"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { src.Close() })
		return newExpanded(t, src, compose.ExpandedOptions{MemoryBits: 3})
	}
	first := open()
	var ids []int64
	for range 1000 {
		id, err := first.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	// first is abandoned here (closed only at the end of the test, like
	// a crashed process's resources); its prefetcher may still hold blocks.
	second := open()
	for range 1000 {
		id, err := second.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	batch, err := second.NextN(ctx, 100)
	if err != nil {
		t.Fatal(err)
	}
	ids = append(ids, batch...)
	unique(t, ids)
	t.Logf("first: %+v; second: %+v", first.Stats(), second.Stats())
}

// Callers waiting for the same missing block all get the inner source's
// error at once; none waits for its context.
func TestExpandedWaitersShareError(t *testing.T) {
	inner := newCounter(0)
	inner.fail.Store(true)
	inner.delay.Store(int64(20 * time.Millisecond))
	e := newExpanded(t, inner, compose.ExpandedOptions{NoPrefetch: true})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			_, err := e.Next(ctx)
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; !errors.Is(err, idforge.ErrUnavailable) {
			t.Errorf("Next: %v, want the inner source's ErrUnavailable", err)
		}
	}
	if ctx.Err() != nil {
		t.Error("a caller waited for its context")
	}
}

// The set-up of JD's serial-number platform: an Expanded over a Balanced
// of four sources, one of which fails under load. Callers see no error
// and no duplicate.
func TestExpandedOverBalanced(t *testing.T) {
	cs := []*counter{newCounter(0), newCounter(0), newCounter(0), newCounter(0)}
	bal, err := compose.NewBalanced(gens(cs...), compose.BalancedOptions{RescueAfter: 50 * time.Millisecond, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	e := newExpanded(t, bal, compose.ExpandedOptions{MemoryBits: 3})
	l := startLoad(e, 4, nil)
	waitFor(t, "IDs", func() bool { return l.issued.Load() > 10000 })
	cs[1].fail.Store(true)
	waitFor(t, "source 1 ejected", func() bool { return bal.Stats()[1].Ejections > 0 })
	n := l.issued.Load()
	waitFor(t, "IDs without source 1", func() bool { return l.issued.Load() > n+10000 })
	cs[1].fail.Store(false)
	calls := cs[1].calls.Load()
	waitFor(t, "source 1 back", func() bool { return cs[1].calls.Load() > calls+10 })
	unique(t, l.finish(t))
}
