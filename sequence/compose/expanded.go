package compose

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/cacheline"
	"github.com/idforge/idforge/internal/closeonce"
	"github.com/idforge/idforge/sequence"
)

// Defaults and limits of ExpandedOptions.
const (
	// DefaultMemoryBits is JD's memoryBitLength: 8 IDs per value of
	// the inner source.
	DefaultMemoryBits = 3
	// MaxMemoryBits bounds MemoryBits: 2^32 IDs per inner value, all lost
	// at once by a crash, is already more than anyone should want.
	MaxMemoryBits = 32
	// DefaultAhead is how far ahead the prefetcher keeps blocks ready. JD's
	// sample configuration (reserveTimeInMilliseconds) keeps 10 ms with a 20 ms
	// loop; this prefetcher is woken by consumption, and 100 ms also
	// rides out the inner source's latency spikes.
	DefaultAhead = 100 * time.Millisecond
	// DefaultMaxQueued bounds the blocks kept ready (JD's platform gives
	// no bound): at most (1 + 1024) × 2^m IDs are lost by a crash.
	DefaultMaxQueued = 1024
	// MaxQueuedLimit is the largest MaxQueued accepted.
	MaxQueuedLimit = 1 << 20
	// DefaultFetchers is how many inner calls the prefetcher may have in
	// flight at once. JD's asynchronous task runs in "a thread
	// (pool)" of unstated size; 4 lets it keep up with an inner source
	// whose latency is several times the time a block lasts.
	DefaultFetchers = 4
	// MaxBatch is the largest n Expanded.NextN accepts.
	MaxBatch = 1 << 20
)

// ExpandedOptions tune an Expanded. The zero value of every field selects
// the default documented on it.
type ExpandedOptions struct {
	// MemoryBits is m: each value v of the inner source gives the 2^m IDs
	// v << m | 0 … v << m | 2^m−1 (JD's memoryBitLength). From 1 to
	// MaxMemoryBits; default DefaultMemoryBits (3). Every Expanded over the
	// same inner counter must use the same m (see the package
	// documentation).
	MemoryBits int
	// Ahead is how long the blocks kept ready should last at the measured
	// rate, on top of the inner source's measured latency. Default
	// DefaultAhead (100 ms).
	Ahead time.Duration
	// MaxQueued bounds the blocks kept ready, 1 to MaxQueuedLimit.
	// Default DefaultMaxQueued (1024).
	MaxQueued int
	// Fetchers bounds the prefetcher's concurrent calls of the inner
	// source, 1 to 1024. Default DefaultFetchers (4).
	Fetchers int
	// NoPrefetch turns the prefetcher off (JD's enableAsync=false):
	// a caller that finds the current block used up fetches the next one
	// itself.
	NoPrefetch bool
	// Logger receives the prefetcher's failures and recoveries. Default
	// slog.Default().
	Logger *slog.Logger
}

func (o ExpandedOptions) withDefaults() (ExpandedOptions, error) {
	o.MemoryBits = cmp.Or(o.MemoryBits, DefaultMemoryBits)
	o.Ahead = cmp.Or(o.Ahead, DefaultAhead)
	o.MaxQueued = cmp.Or(o.MaxQueued, DefaultMaxQueued)
	o.Fetchers = cmp.Or(o.Fetchers, DefaultFetchers)
	o.Logger = cmp.Or(o.Logger, slog.Default())
	switch {
	case o.MemoryBits < 1 || o.MemoryBits > MaxMemoryBits:
		return o, fmt.Errorf("%w: compose: expanded: %d memory bits; want 1 to %d", idforge.ErrInvalidArgument, o.MemoryBits, MaxMemoryBits)
	case o.Ahead < 0:
		return o, fmt.Errorf("%w: compose: expanded: negative ahead %v", idforge.ErrInvalidArgument, o.Ahead)
	case o.MaxQueued < 1 || o.MaxQueued > MaxQueuedLimit:
		return o, fmt.Errorf("%w: compose: expanded: max queued %d; want 1 to %d", idforge.ErrInvalidArgument, o.MaxQueued, MaxQueuedLimit)
	case o.Fetchers < 1 || o.Fetchers > 1024:
		return o, fmt.Errorf("%w: compose: expanded: %d fetchers; want 1 to 1024", idforge.ErrInvalidArgument, o.Fetchers)
	}
	return o, nil
}

// ExpandedStats describes an Expanded, for metrics. Counters run from its
// creation.
type ExpandedStats struct {
	// MemoryBits is m.
	MemoryBits int
	// InnerCalls counts calls of the inner source, successful or not.
	InnerCalls uint64
	// Fetched counts the values (blocks) the inner source supplied.
	Fetched uint64
	// FetchErrors counts failed inner calls, values out of range included.
	FetchErrors uint64
	// Installed counts blocks taken into use. Every installed block but
	// the current one has had all its 2^m IDs handed out (except those of
	// a NextN that failed part-way).
	Installed uint64
	// Queued is the number of blocks ready now.
	Queued int
	// Dropped counts blocks fetched by a caller while Close ran: never
	// used. Fetched = Installed + Queued + Dropped once the Expanded is
	// closed.
	Dropped uint64
	// Target is how many blocks the prefetcher aims to keep ready.
	Target int
	// Waits counts calls that found no block ready and waited for the
	// inner source (fetched it themselves, or waited for the caller that
	// did).
	Waits uint64
	// Rate is the consumption rate the prefetcher measured, in IDs per
	// second.
	Rate float64
	// FetchLatency is the prefetcher's average inner call duration.
	FetchLatency time.Duration
}

// block is one value v of the inner source, handed out as
// base | 0 … base | size-1, base = v << m. next is the index of the next
// ID; it runs past size once the block is used up. Blocks are never
// reused, so a caller holding a stale one at worst finds it used up.
type block struct {
	next atomic.Int64
	base int64
	_    [48]byte // one block per cache line
}

// Expanded hands out 2^m IDs from memory for each value of an inner
// generator (the QueuedSequenceGen of JD's (京东) logistics serial-number
// platform), with a background prefetcher
// that keeps blocks ready for the next Ahead at the measured rate. It
// implements idforge.BatchGenerator; IDs are unique, not ordered. It is
// safe for concurrent use.
type Expanded struct {
	// cur is the block being handed out: the whole hot path is a load of
	// cur and an atomic add on its next.
	cur atomic.Pointer[block]
	_   [cacheline.Size - 8]byte

	inner idforge.Generator
	opts  ExpandedOptions
	bits  uint
	size  int64 // 2^m
	limit int64 // largest inner value that fits: MaxInt64 >> m
	dead  *block

	// mu guards what follows; it is held for a few instructions only,
	// never across a call of the inner source.
	mu       sync.Mutex
	more     sync.Cond // wakes the fetch workers
	queue    []int64   // ring of values fetched ahead, FIFO
	head, n  int       // queue[head] is the oldest of n values
	inflight int       // workers' fetches in flight
	// A caller fetches the next block itself when none is ready; the
	// callers that need one meanwhile wait for it on directDone, made by
	// the first of them, and share its error.
	directing  bool
	directDone chan struct{}
	directSeq  uint64    // direct fetches completed
	directErr  error     // the error of the latest one
	target     int       // blocks the workers keep ready
	retryAt    time.Time // workers back off until then after a failure
	backoff    time.Duration
	failures   int     // consecutive failed worker fetches
	latency    float64 // workers' average fetch time, seconds
	rate       float64 // measured consumption, blocks per second
	closed     bool

	innerCalls, fetched, fetchErrs atomic.Uint64
	installed, dropped, waits      atomic.Uint64
	failing                        atomic.Bool // the latest inner call failed
	lastErr                        sequence.LastError

	cancel context.CancelFunc
	stop   chan struct{}
	wg     sync.WaitGroup
}

var (
	_ idforge.BatchGenerator  = (*Expanded)(nil)
	_ sequence.Source         = (*Expanded)(nil)
	_ sequence.StatusReporter = (*Expanded)(nil)
)

// NewExpanded returns an Expanded over inner and, unless
// opts.NoPrefetch is set, starts its prefetcher (opts.Fetchers fetch
// workers and a goroutine that measures the rate), which fetches a first
// block at once. The caller keeps owning inner: Close stops the
// prefetcher but does not close inner.
//
// It returns an error wrapping idforge.ErrInvalidArgument when inner is
// nil or an option is out of range.
func NewExpanded(inner idforge.Generator, opts ExpandedOptions) (*Expanded, error) {
	if inner == nil {
		return nil, fmt.Errorf("%w: compose: expanded: nil inner source", idforge.ErrInvalidArgument)
	}
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	e := &Expanded{
		inner:  inner,
		opts:   opts,
		bits:   uint(opts.MemoryBits),
		size:   1 << opts.MemoryBits,
		limit:  math.MaxInt64 >> opts.MemoryBits,
		target: 1,
		stop:   make(chan struct{}),
	}
	e.more.L = &e.mu
	empty := &block{}
	empty.next.Store(e.size)
	e.cur.Store(empty)
	e.dead = &block{}
	e.dead.next.Store(e.size)
	if !opts.NoPrefetch {
		e.queue = make([]int64, opts.MaxQueued)
		ctx, cancel := context.WithCancel(context.Background())
		e.cancel = cancel
		e.wg.Add(1 + opts.Fetchers)
		go e.measure()
		for range opts.Fetchers {
			go e.fetchAhead(ctx)
		}
	}
	return e, nil
}

// Bits returns m, the number of low bits filled from memory.
func (e *Expanded) Bits() uint { return e.bits }

// Next returns the next ID of the current block, switching to the next
// block (one ready, or one fetched from the inner source) when it is
// used up. It returns the inner source's error (wrapped) when no block is
// ready and the inner source fails, an error wrapping ErrOutOfRange and
// idforge.ErrSpaceExhausted when the inner value is below 1 or does not
// fit, ctx's error when ctx ends while waiting, and idforge.ErrClosed
// after Close.
func (e *Expanded) Next(ctx context.Context) (int64, error) {
	for {
		b := e.cur.Load()
		if k := b.next.Add(1) - 1; k < e.size {
			return b.base | k, nil
		}
		if err := e.refill(ctx, b); err != nil {
			return 0, err
		}
	}
}

// NextN returns n IDs, taken in runs from the current block and the
// following ones; they are unique but not sorted across blocks. It
// returns an error wrapping idforge.ErrInvalidCount when n is below 1 or
// above MaxBatch, and otherwise fails as Next does; on error it returns no
// IDs (those it had taken are left as a gap).
func (e *Expanded) NextN(ctx context.Context, n int) ([]int64, error) {
	if n < 1 || n > MaxBatch {
		return nil, fmt.Errorf("%w: %d IDs asked for, want 1 to %d", idforge.ErrInvalidCount, n, MaxBatch)
	}
	out := make([]int64, 0, n)
	for len(out) < n {
		b := e.cur.Load()
		want := int64(n - len(out))
		k := b.next.Add(want) - want
		if k < e.size {
			for j := k; j < min(k+want, e.size); j++ {
				out = append(out, b.base|j)
			}
			continue
		}
		if err := e.refill(ctx, b); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// refill replaces the used-up block old with the next one: the oldest
// ready, else one the caller fetches from the inner source itself. While
// a caller fetches, the others that need a block wait for it (or leave
// when their ctx ends) and share its error.
func (e *Expanded) refill(ctx context.Context, old *block) error {
	waited := false
	e.mu.Lock()
	for {
		switch {
		case e.cur.Load() != old:
			e.mu.Unlock()
			return nil // another caller refilled meanwhile
		case e.closed:
			e.mu.Unlock()
			return fmt.Errorf("compose: expanded: %w", idforge.ErrClosed)
		case e.n > 0:
			v := e.queue[e.head]
			e.head = (e.head + 1) % len(e.queue)
			e.n--
			e.install(v)
			if e.n+e.inflight <= e.target/2 {
				// Wake a worker at half the target rather than at every
				// block: fewer wake-ups, the same refill.
				e.more.Signal()
			}
			e.mu.Unlock()
			return nil
		case !e.directing:
			return e.fetchDirect(ctx, old, waited)
		}
		if e.directDone == nil {
			e.directDone = make(chan struct{})
		}
		done, seq := e.directDone, e.directSeq
		e.mu.Unlock()
		if !waited {
			waited = true
			e.waits.Add(1)
		}
		select {
		case <-done:
		case <-ctx.Done():
			return fmt.Errorf("compose: expanded: waiting for the inner source: %w", ctx.Err())
		}
		e.mu.Lock()
		if err := e.directErr; err != nil && e.directSeq > seq && e.cur.Load() == old && e.n == 0 && !e.closed {
			e.mu.Unlock()
			return err
		}
	}
}

// fetchDirect fetches the next block for a caller of refill, who holds mu
// and found nothing ready. It releases mu.
func (e *Expanded) fetchDirect(ctx context.Context, old *block, waited bool) error {
	e.directing = true
	e.mu.Unlock()
	if !waited {
		e.waits.Add(1)
	}
	v, err := e.fetch(ctx)
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case err != nil:
	case e.closed:
		e.dropped.Add(1)
		err = fmt.Errorf("compose: expanded: %w", idforge.ErrClosed)
	case e.cur.Load() != old && e.n+e.inflight < len(e.queue):
		// A worker's block came first and was installed: keep this one.
		e.queue[(e.head+e.n)%len(e.queue)] = v
		e.n++
	default:
		// Also when the queue is full, which leaves the rest of the block
		// installed meanwhile as a gap.
		e.install(v)
	}
	e.directing = false
	e.directSeq++
	e.directErr = err
	if e.directDone != nil {
		close(e.directDone)
		e.directDone = nil
	}
	return err
}

// install makes the block of inner value v current. The caller holds mu
// and has checked that the Expanded is open.
func (e *Expanded) install(v int64) {
	e.cur.Store(&block{base: v << e.bits})
	e.installed.Add(1)
}

// fetch takes one value from the inner source and checks that it fits.
func (e *Expanded) fetch(ctx context.Context) (int64, error) {
	v, err := e.inner.Next(ctx)
	e.innerCalls.Add(1)
	if err != nil {
		err = fmt.Errorf("compose: expanded: inner source: %w", err)
	} else if v < 1 || v > e.limit {
		err = fmt.Errorf("%w: %w: compose: expanded: the inner source returned %d; with %d memory bits its values must be in [1, %d]",
			ErrOutOfRange, idforge.ErrSpaceExhausted, v, e.bits, e.limit)
	}
	if err != nil {
		e.fetchErrs.Add(1)
		if ctx.Err() == nil { // not a cancelled prefetch at Close
			e.failing.Store(true)
			e.lastErr.Set(err, time.Now())
		}
		return 0, err
	}
	e.failing.Store(false)
	e.fetched.Add(1)
	return v, nil
}

// Prefetcher tuning.
const (
	rateHalfLife = time.Second // the measured rate's memory
	minTick      = time.Millisecond
	maxTick      = 25 * time.Millisecond
	minBackoff   = 10 * time.Millisecond
	maxBackoff   = time.Second
)

// wantMore reports whether a worker should fetch one more block: the
// blocks ready and in flight fall short of the target, and the workers
// are not backing off. The caller holds mu.
func (e *Expanded) wantMore() bool {
	return e.n+e.inflight < e.target && (e.failures == 0 || !time.Now().Before(e.retryAt))
}

// fetchAhead is a fetch worker: it fills the queue up to the target, one
// inner call at a time, and sleeps while the queue is full enough.
func (e *Expanded) fetchAhead(ctx context.Context) {
	defer e.wg.Done()
	e.mu.Lock()
	defer e.mu.Unlock()
	for {
		for !e.closed && !e.wantMore() {
			e.more.Wait()
		}
		if e.closed {
			return
		}
		e.inflight++
		if e.wantMore() {
			e.more.Signal() // more is needed than this worker fetches
		}
		e.mu.Unlock()
		t0 := time.Now()
		v, err := e.fetch(ctx)
		took := time.Since(t0)
		e.mu.Lock()
		e.inflight--
		if err != nil {
			if ctx.Err() == nil {
				e.failures++
				e.backoff = min(max(2*e.backoff, minBackoff), maxBackoff)
				e.retryAt = time.Now().Add(e.backoff)
				if e.failures == 1 {
					e.opts.Logger.Warn("prefetch from the inner source failed; retrying with backoff", "err", err)
				}
			}
			continue
		}
		if e.failures > 0 {
			e.opts.Logger.Info("prefetch from the inner source recovered", "failed_calls", e.failures)
			e.failures, e.backoff = 0, 0
		}
		e.latency += 0.2 * (took.Seconds() - e.latency)
		// Room is certain: a worker starts a fetch only while ready and
		// in-flight blocks are fewer than the target, at most the
		// queue's length, and callers only take blocks out.
		e.queue[(e.head+e.n)%len(e.queue)] = v
		e.n++
	}
}

// measure samples the consumption rate once per tick (Ahead/4, between
// 1 and 25 ms) and sets the workers' target: enough blocks for Ahead
// plus one inner call at that rate, at least 1 and at most MaxQueued. The
// rate is the larger of the last sample, which follows a rise at once,
// and an average that remembers about a second. The tick also ends the
// workers' back-off.
func (e *Expanded) measure() {
	defer e.wg.Done()
	tick := min(max(e.opts.Ahead/4, minTick), maxTick)
	ticker := time.NewTicker(tick)
	defer ticker.Stop()
	sampledAt, sampledN, avg := time.Now(), uint64(0), 0.0
	for {
		select {
		case <-e.stop:
			return
		case <-ticker.C:
		}
		now, n := time.Now(), e.installed.Load()
		dt := now.Sub(sampledAt).Seconds()
		r := float64(n-sampledN) / dt
		avg += (1 - math.Exp2(-dt/rateHalfLife.Seconds())) * (r - avg)
		sampledAt, sampledN = now, n
		e.mu.Lock()
		e.rate = max(r, avg)
		want := int(math.Ceil(e.rate*(e.opts.Ahead.Seconds()+e.latency))) + 1
		e.target = min(max(want, 1), e.opts.MaxQueued)
		e.more.Broadcast()
		e.mu.Unlock()
	}
}

// Stats returns the Expanded's counters and the prefetcher's view.
func (e *Expanded) Stats() ExpandedStats {
	e.mu.Lock()
	queued, target, rate, latency := e.n, e.target, e.rate, e.latency
	e.mu.Unlock()
	if e.opts.NoPrefetch {
		target = 0
	}
	return ExpandedStats{
		MemoryBits:   int(e.bits),
		InnerCalls:   e.innerCalls.Load(),
		Fetched:      e.fetched.Load(),
		FetchErrors:  e.fetchErrs.Load(),
		Installed:    e.installed.Load(),
		Queued:       queued,
		Dropped:      e.dropped.Load(),
		Target:       target,
		Waits:        e.waits.Load(),
		Rate:         rate * float64(e.size),
		FetchLatency: time.Duration(latency * float64(time.Second)),
	}
}

// Status reports the Expanded for operators (sequence.StatusReporter):
// its calls of the inner source, the prefetch buffer (blocks and IDs
// ready, the target, the measured rate) and the inner source's own
// status when it reports one. It is Down when the latest inner call
// failed and no ID is buffered, Degraded when it failed but IDs are
// left (or the inner source is degraded), else the inner source's
// health.
func (e *Expanded) Status() sequence.Status {
	s := e.Stats()
	left := max(e.size-e.cur.Load().next.Load(), 0)
	st := sequence.Status{Kind: "expanded", Health: sequence.Up, Calls: s.InnerCalls, Failures: s.FetchErrors,
		Prefetch: &sequence.PrefetchStatus{Blocks: s.Queued, IDs: int64(s.Queued)*e.size + left,
			Target: s.Target, Rate: s.Rate, Waits: s.Waits}}
	st.LastError, st.LastErrorAt = e.lastErr.Get()
	if in, ok := sequence.StatusOf(e.inner); ok {
		st.Inner = &in
		st.Health = in.Health
		if in.Health == sequence.Down && st.Prefetch.IDs > 0 {
			st.Health = sequence.Degraded // issuing from the buffer
		}
	}
	if e.failing.Load() {
		h := sequence.Degraded
		if st.Prefetch.IDs == 0 {
			h = sequence.Down
		}
		st.Health = sequence.Worse(st.Health, h)
	}
	return st
}

// Close stops the prefetcher, cancelling its inner calls in flight and
// waiting for them, and makes Next and NextN fail with
// idforge.ErrClosed. The unused IDs of the current and the queued blocks
// are never issued: a gap. Close does not close the inner source. It is
// idempotent.
func (e *Expanded) Close() error {
	if !closeonce.Claim(&e.mu, &e.closed) {
		return nil
	}
	e.cur.Store(e.dead)
	e.more.Broadcast()
	e.mu.Unlock()
	if e.cancel != nil {
		e.cancel()
		close(e.stop)
	}
	e.wg.Wait()
	return nil
}
