package client

import (
	"context"
	"maps"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/closeonce"
)

// refetchPause is how long a failed background fetch keeps the next one
// from starting while IDs are still cached; an empty cache fetches at
// once.
const refetchPause = 100 * time.Millisecond

// cached is a remote client with a range cache per segment key (see
// WithRangeCache). NextStrings, NextSerial and Explain are the embedded
// remote's, uncached: a serial renders its template at the server, and a
// string ID is a UUID, a ULID or a format only the server knows.
type cached struct {
	*remote
	batch int // IDs per fetch
	low   int // a fetch starts when this many cached IDs are left

	// keys maps key names to caches. It is copied on write (a key is
	// added once), so the hot path is an atomic load and a map lookup.
	keys   atomic.Pointer[map[string]*keyCache]
	keysMu sync.Mutex // serialises writers of keys

	ctx    context.Context // of the background fetches; ends with Close
	cancel context.CancelFunc
	mu     sync.RWMutex // guards closing against wg.Add
	done   bool
	wg     sync.WaitGroup
}

var _ Client = (*cached)(nil)

func newCached(r *remote, batch int, refillAt float64) *cached {
	c := &cached{remote: r, batch: batch, low: int(math.Ceil(refillAt * float64(batch)))}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.keys.Store(&map[string]*keyCache{})
	return c
}

// entry returns key's cache, adding an undecided one when there is none.
func (c *cached) entry(key string) *keyCache {
	if kc, ok := (*c.keys.Load())[key]; ok {
		return kc
	}
	c.keysMu.Lock()
	defer c.keysMu.Unlock()
	m := *c.keys.Load()
	if kc, ok := m[key]; ok {
		return kc
	}
	next := maps.Clone(m)
	kc := &keyCache{}
	next[key] = kc
	c.keys.Store(&next)
	return kc
}

// forget drops kc, key's cache, so that a key whose lookup failed (an
// unknown key, say) leaves nothing behind.
func (c *cached) forget(key string, kc *keyCache) {
	c.keysMu.Lock()
	defer c.keysMu.Unlock()
	m := *c.keys.Load()
	if m[key] != kc {
		return
	}
	next := maps.Clone(m)
	delete(next, key)
	c.keys.Store(&next)
}

// keyCache holds one key's cached IDs: the block being handed out and the
// one fetched ahead, in the order the server issued them. Handing out an
// ID from the current block is one atomic add; everything else happens
// under mu.
type keyCache struct {
	decideMu sync.Mutex
	decided  atomic.Bool
	direct   bool // not a segment key: every call goes to the server

	cur  atomic.Pointer[block] // the block being handed out; nil before the first
	busy atomic.Bool           // a fetch runs or a block waits in ahead (mirrors mu's state)

	mu       sync.Mutex
	ahead    *block // the next block, fetched in the background
	fetching *fetch // the fetch running, nil when none
	failedAt time.Time

	// For tests: blocks fetched, and calls that found the cache empty
	// and had to wait for a fetch.
	fetches, waits int64
}

// block is a run of IDs the server issued, handed out in order.
type block struct {
	ids []int64
	pos atomic.Int64 // index of the next ID to hand out; may pass len(ids)
}

// claim takes up to n IDs; they are the caller's alone. It returns nil
// when the block is used up. The result shares the block's array.
func (b *block) claim(n int) []int64 {
	end := b.pos.Add(int64(n))
	start, l := end-int64(n), int64(len(b.ids))
	if start >= l {
		return nil
	}
	return b.ids[start:min(end, l)]
}

// left returns the number of IDs not handed out yet.
func (b *block) left() int {
	if b == nil {
		return 0
	}
	return max(len(b.ids)-int(b.pos.Load()), 0)
}

// fetch is one background fetch of a block.
type fetch struct {
	done chan struct{}
	err  error // set before done is closed
}

// cacheFor returns key's cache, nil when key is not cached.
func (c *cached) cacheFor(ctx context.Context, key string) (*keyCache, error) {
	kc := c.entry(key)
	if !kc.decided.Load() {
		kc.decideMu.Lock()
		defer kc.decideMu.Unlock()
		if !kc.decided.Load() {
			k, err := c.remote.key(ctx, key)
			if err != nil {
				c.forget(key, kc)
				return nil, err
			}
			// IDs of a key in global order, cached here, would be handed
			// out after other clients got higher ones.
			kc.direct = k.Strategy != idforge.StrategySegment || k.Order == idforge.OrderGlobal
			kc.decided.Store(true)
		}
	}
	if kc.direct {
		return nil, nil
	}
	return kc, nil
}

// setBusyLocked publishes whether a block is on its way or waiting.
// Called with kc.mu held after fetching or ahead changed.
func (kc *keyCache) setBusyLocked() {
	kc.busy.Store(kc.fetching != nil || kc.ahead != nil)
}

// startFetchLocked starts fetching a block for key in the background;
// nil after Close. Called with kc.mu held.
func (c *cached) startFetchLocked(kc *keyCache, key string) *fetch {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.done {
		return nil
	}
	f := &fetch{done: make(chan struct{})}
	kc.fetching = f
	kc.setBusyLocked()
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		ids, err := c.remote.block(c.ctx, key, c.batch)
		kc.mu.Lock()
		kc.fetches++
		kc.fetching = nil
		if err != nil {
			kc.failedAt = time.Now()
		} else if nb := (&block{ids: ids}); kc.cur.Load().left() == 0 {
			// Nobody can take from a used-up block any more: replace it.
			kc.cur.Store(nb)
		} else {
			kc.ahead = nb
		}
		kc.setBusyLocked()
		f.err = err
		kc.mu.Unlock()
		close(f.done)
	}()
	return f
}

// refillLocked starts the next fetch when the cache runs low. Called with
// kc.mu held.
func (c *cached) refillLocked(kc *keyCache, key string) {
	if kc.fetching == nil && kc.ahead == nil && kc.cur.Load().left() <= c.low &&
		(kc.failedAt.IsZero() || time.Since(kc.failedAt) >= refetchPause) {
		c.startFetchLocked(kc, key)
	}
}

// claimed is called after IDs were taken from b on the fast path: when
// the block runs low and nothing is on its way, it starts a fetch.
func (c *cached) claimed(kc *keyCache, key string, b *block) {
	if !kc.busy.Load() && b.left() <= c.low {
		kc.mu.Lock()
		c.refillLocked(kc, key)
		kc.mu.Unlock()
	}
}

// slow completes out to n IDs from the blocks, waiting for fetches while
// the cache is empty. On failure, what out holds goes back to the cache.
func (c *cached) slow(ctx context.Context, kc *keyCache, key string, out []int64, n int) ([]int64, error) {
	kc.mu.Lock()
	defer kc.mu.Unlock()
	for waited := false; ; waited = true {
		for len(out) < n {
			if got := kc.cur.Load(); got != nil {
				if ids := got.claim(n - len(out)); ids != nil {
					out = append(out, ids...)
					continue
				}
			}
			if kc.ahead == nil {
				break
			}
			kc.cur.Store(kc.ahead)
			kc.ahead = nil
			kc.setBusyLocked()
		}
		if len(out) == n {
			c.refillLocked(kc, key)
			return out, nil
		}
		if !waited {
			kc.waits++
		}
		if err := c.wait(ctx, kc, key); err != nil && kc.cur.Load().left() == 0 && kc.ahead == nil {
			if len(out) > 0 {
				// Taken but handed to no caller: put back, not lost.
				kc.cur.Store(&block{ids: out})
			}
			return nil, err
		}
	}
}

// wait waits for a block after the cache ran dry, starting the fetch if
// none runs. It returns the fetch's error when it failed, ctx's when ctx
// ends first. Called with kc.mu held; returns with it held.
func (c *cached) wait(ctx context.Context, kc *keyCache, key string) error {
	f := kc.fetching
	if f == nil {
		if f = c.startFetchLocked(kc, key); f == nil {
			return errClosed
		}
	}
	kc.mu.Unlock()
	defer kc.mu.Lock()
	select {
	case <-f.done:
		return f.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c *cached) Next(ctx context.Context, key string) (int64, error) {
	if c.closed.Load() {
		return 0, errClosed
	}
	kc, err := c.lookup(ctx, key)
	if kc == nil || err != nil {
		if err != nil {
			return 0, err
		}
		return c.remote.Next(ctx, key)
	}
	if b := kc.cur.Load(); b != nil {
		if ids := b.claim(1); ids != nil {
			c.claimed(kc, key, b)
			return ids[0], nil
		}
	}
	ids, err := c.slow(ctx, kc, key, make([]int64, 0, 1), 1)
	if err != nil {
		return 0, err
	}
	return ids[0], nil
}

func (c *cached) NextN(ctx context.Context, key string, n int) ([]int64, error) {
	if c.closed.Load() {
		return nil, errClosed
	}
	if err := checkCount(n); err != nil {
		return nil, err
	}
	kc, err := c.lookup(ctx, key)
	if err != nil {
		return nil, err
	}
	if kc == nil || n >= c.batch {
		return c.remote.NextN(ctx, key, n)
	}
	out := make([]int64, 0, n)
	if b := kc.cur.Load(); b != nil {
		if ids := b.claim(n); ids != nil {
			out = append(out, ids...)
			if len(out) == n {
				c.claimed(kc, key, b)
				return out, nil
			}
		}
	}
	return c.slow(ctx, kc, key, out, n)
}

// lookup checks key and returns its cache, nil when it is not cached.
func (c *cached) lookup(ctx context.Context, key string) (*keyCache, error) {
	if kc, ok := (*c.keys.Load())[key]; ok && kc.decided.Load() {
		if kc.direct {
			return nil, nil
		}
		return kc, nil
	}
	if err := idforge.ValidateKeyName(key); err != nil {
		return nil, err
	}
	return c.cacheFor(ctx, key)
}

func (c *cached) Key(key string) idforge.BatchGenerator { return keyGen{c, key} }

// Close stops the background fetches, drops the cached IDs (gaps) and
// closes the connections.
func (c *cached) Close() error {
	if !closeonce.First(&c.mu, &c.done) {
		return nil
	}
	c.cancel()
	c.wg.Wait()
	return c.remote.Close()
}
