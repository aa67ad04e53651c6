package segment

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/cacheline"
	"github.com/idforge/idforge/internal/closeonce"
)

// Defaults for the zero values of Settings.
const (
	DefaultPrefetchAt     = 0.1
	DefaultTargetDuration = 15 * time.Minute
	DefaultLoadTimeout    = 3 * time.Second
	DefaultRetryMin       = 100 * time.Millisecond
	DefaultRetryMax       = 2 * time.Second
)

// Settings tune an Allocator. The zero value of every field selects the
// default documented on it.
type Settings struct {
	// PrefetchAt is the share of the current segment (0 < PrefetchAt < 1)
	// issued before the next segment is claimed in the background.
	// Default 0.1, as in Leaf.
	PrefetchAt float64
	// TargetDuration is how long one segment should last at the measured
	// rate. Default 15 minutes.
	TargetDuration time.Duration
	// SurviveOutage, when set, is a time budget: every claimed segment is
	// long enough to keep issuing for this long at the peak rate seen
	// recently (a peak decays by half every hour), so a store outage of
	// that length goes unnoticed. MaxStep, when set, still bounds the
	// segment; raise it if the budget needs more.
	SurviveOutage time.Duration
	// MinStep is the smallest segment claimed. Default: the key's stored
	// step, which is also the length of the first segment claimed.
	MinStep int64
	// MaxStep, when positive, is the largest segment claimed, for an
	// operator who wants a bound on what one claim takes (a crash loses
	// the rest of a segment, a gap). Default 0: no fixed bound, a claim is
	// as long as the measured rate needs (see the package documentation),
	// limited only by what the key has left below math.MaxInt64. Not to be
	// confused with idforge.MaxStep, the largest step a key may store:
	// claims may ask for longer segments than that.
	MaxStep int64
	// LoadTimeout bounds one store call. Default 3 s.
	LoadTimeout time.Duration
	// RetryMin and RetryMax bound the exponential backoff between failed
	// claims. Defaults 100 ms and 2 s.
	RetryMin, RetryMax time.Duration
	// Clock measures consumption rates. Default idforge.SystemClock.
	Clock idforge.Clock
	// Logger receives store failures and recoveries. Default slog.Default().
	Logger *slog.Logger
	// OnClaim, when set, is called after every claim attempt with its
	// duration and error (nil on success), for metrics.
	OnClaim func(key string, took time.Duration, err error)
	// Check, when set, is asked before every claim whether the key may
	// still claim. An error wrapping idforge.ErrRetired retires the
	// Allocator (see Retire) instead of claiming; any other error counts
	// as a failed claim.
	Check func(ctx context.Context, key string) error
	// Global keeps the key in idforge.OrderGlobal: the Allocator buffers
	// nothing, and every call takes its values from a claim that begins
	// after the call did, shared with the calls that arrive while the
	// claim before it is in flight (see the package documentation).
	// The settings that size segments do not apply.
	Global bool
}

func (s Settings) withDefaults() Settings {
	if s.PrefetchAt <= 0 || s.PrefetchAt >= 1 {
		s.PrefetchAt = DefaultPrefetchAt
	}
	if s.TargetDuration <= 0 {
		s.TargetDuration = DefaultTargetDuration
	}
	if s.MaxStep <= 0 {
		s.MaxStep = math.MaxInt64
	}
	if s.MinStep > s.MaxStep {
		s.MaxStep = s.MinStep
	}
	if s.LoadTimeout <= 0 {
		s.LoadTimeout = DefaultLoadTimeout
	}
	if s.RetryMin <= 0 {
		s.RetryMin = DefaultRetryMin
	}
	if s.RetryMax < s.RetryMin {
		s.RetryMax = max(DefaultRetryMax, s.RetryMin)
	}
	s.Clock = cmp.Or(s.Clock, idforge.SystemClock)
	s.Logger = cmp.Or(s.Logger, slog.Default())
	return s
}

// A buffer is one part of a claimed segment being handed out. A segment is
// split in two parts at the prefetch point: installing the second part is
// what starts the claim of the next segment, so the fast path needs no
// prefetch check at all, only a range check.
//
// Only next changes after a buffer is published; it sits on its own cache
// line so that callers hammering it do not slow down readers of the rest.
type buffer struct {
	_          [cacheline.Size]byte
	next       atomic.Int64 // the next value to hand out; runs past end when exhausted
	_          [cacheline.Size - 8]byte
	start, end int64  // this part, [start, end)
	size       uint64 // end - start, so that the fast path's range check is one subtraction
	seg        idforge.Segment
	tail       *buffer // the second part of the segment; nil for the second part itself
	installed  time.Time
}

// newBuffer splits seg at the prefetch share and returns its first part,
// or its only part when the first would be empty. lead moves the split
// earlier when needed: at least lead values follow it, so the claim it
// starts has that many values' time to finish.
func newBuffer(seg idforge.Segment, prefetchShare float64, lead int64) *buffer {
	at := seg.Start + int64(float64(seg.Len())*prefetchShare)
	if lead > 0 && seg.End-at < lead {
		at = max(seg.Start, seg.End-lead)
	}
	tail := &buffer{start: at, end: seg.End, size: uint64(seg.End - at), seg: seg}
	tail.next.Store(at)
	if at == seg.Start {
		return tail
	}
	head := &buffer{start: seg.Start, end: at, size: uint64(at - seg.Start), seg: seg, tail: tail}
	head.next.Store(seg.Start)
	return head
}

// holds reports whether v, a value taken from b.next, lies in b. The
// unsigned comparison also rejects values from a counter that wrapped
// around past math.MaxInt64 after exhaustion.
func (b *buffer) holds(v int64) bool {
	return uint64(v-b.start) < b.size
}

// take reserves up to n values of b. It returns the half-open range taken,
// empty when b is exhausted. Any number of callers may race on it.
func (b *buffer) take(n int64) (lo, hi int64) {
	lo = b.next.Add(n) - n
	if !b.holds(lo) {
		return 0, 0
	}
	return lo, lo + min(n, b.end-lo)
}

// takeBelow reserves up to n values of b, all below limit. It returns the
// range taken; an empty one with full false when b is exhausted (the
// caller moves on to the next buffer), with full true when b's next value
// is limit or more (nothing was taken). The compare-and-swap never moves
// next past limit, so a value at or above it stays for other callers.
func (b *buffer) takeBelow(n, limit int64) (lo, hi int64, full bool) {
	for {
		lo = b.next.Load()
		if !b.holds(lo) {
			return 0, 0, false
		}
		if lo >= limit {
			return 0, 0, true
		}
		hi = lo + min(n, b.end-lo, limit-lo)
		if b.next.CompareAndSwap(lo, hi) {
			return lo, hi, false
		}
	}
}

// remaining returns how many values are left in b and the part after it.
func (b *buffer) remaining() int64 {
	var n int64
	if next := b.next.Load(); b.holds(next) {
		n = b.end - next
	}
	if b.tail != nil {
		n += b.tail.end - b.tail.start
	}
	return n
}

// An empty buffer sends every caller to the slow path. A new Allocator
// starts with one (so the fast path needs no nil check) and Close installs
// closedBuffer, after which the slow path answers idforge.ErrClosed.
var closedBuffer = &buffer{}

func (b *buffer) empty() bool { return b.end == b.start }

// attempt is one claim in flight; done closes when it has finished and err
// holds its outcome.
type attempt struct {
	done chan struct{}
	err  error
}

// Allocator issues the IDs of one key. It is safe for concurrent use.
type Allocator struct {
	// cur is read by every call; everything else is only touched on the
	// slow path, under mu. The padding before it and the fields after it
	// up to mu, fixed after New, keep its cache line free of writes,
	// whatever object the heap places just before the Allocator: a write
	// there would make every core reload the line on its next call.
	_   [cacheline.Size]byte
	cur atomic.Pointer[buffer]

	key   string
	store idforge.SegmentStore
	set   Settings

	mu        sync.Mutex
	pending   *buffer  // the next segment, claimed and waiting
	att       *attempt // the claim in flight, nil when the loader is idle
	lastErr   error    // the most recent claim's error, nil after a success
	failures  int      // consecutive failed claims
	stored    int64    // the key's stored step, learned from the store
	keyMin    int64    // the key's own bounds (SetBounds); 0: Settings'
	keyMax    int64
	retired   error // set by Retire: what every later call answers
	lastStep  int64 // length of the newest claimed segment
	prevLen   int64 // length of the segment before cur
	prevStart time.Time

	// lastFail is the newest failed claim's error, kept after a success;
	// failedAt is when it failed.
	lastFail string
	failedAt time.Time

	highWater int64 // end of the newest segment ever claimed
	// backwards is set, for good, when the store handed out a range
	// below highWater: its max_id went backwards, so other nodes may hold
	// what it hands out next too. No claim is made after it.
	backwards error
	loads     int64
	waits     int64   // calls that had to wait for a claim
	issued    int64   // values of the buffers used up before cur
	peak      float64 // peak rate (IDs/s), decaying
	peakAt    time.Time
	// slowest is the longest claim seen recently (decaying like peak):
	// prefetches start early enough for a claim that slow.
	slowest   time.Duration
	slowestAt time.Time
	closed    bool
	closing   chan struct{}
	// In global order (Settings.Global): open is the batch calls join,
	// claimed next; claiming is set while claimBatches runs.
	open     *batch
	claiming bool
	// stopLoad cancels the claim in flight, nil when none. A context per
	// claim rather than one per Allocator: a node holds thousands of
	// keys that seldom claim.
	stopLoad context.CancelFunc
	loaderWG sync.WaitGroup
}

var _ idforge.BatchGenerator = (*Allocator)(nil)

// New returns an Allocator for key backed by store. It does no I/O: the
// first segment is claimed by the first call to Next or NextN.
func New(store idforge.SegmentStore, key string, s Settings) *Allocator {
	s = s.withDefaults()
	a := &Allocator{
		key:     key,
		store:   store,
		set:     s,
		closing: make(chan struct{}),
	}
	a.cur.Store(&buffer{})
	return a
}

// Key returns the key the Allocator issues for.
func (a *Allocator) Key() string { return a.key }

// Global reports whether the Allocator keeps its key in global order
// (Settings.Global).
func (a *Allocator) Global() bool { return a.set.Global }

// Next returns the next ID. It touches the store only when no buffered
// value remains; see the package documentation for the failure behaviour.
func (a *Allocator) Next(ctx context.Context) (int64, error) {
	// The fast path is one atomic load, one atomic add and one comparison,
	// small enough for the compiler to inline.
	b := a.cur.Load()
	if v := b.next.Add(1) - 1; b.holds(v) {
		return v, nil
	}
	return a.nextSlow(ctx, b)
}

func (a *Allocator) nextSlow(ctx context.Context, b *buffer) (int64, error) {
	if a.set.Global {
		var v int64
		err := a.takeGlobal(ctx, 1, math.MaxInt64, func(lo, _ int64) { v = lo })
		return v, err
	}
	for {
		if err := a.advance(ctx, b); err != nil {
			return 0, err
		}
		b = a.cur.Load()
		if v := b.next.Add(1) - 1; b.holds(v) {
			return v, nil
		}
	}
}

// NextN returns n strictly increasing IDs. They are consecutive unless the
// batch spans two segments. n must be at least 1. When the batch needs a
// claim that fails (the store is down, or the key is out of space), the
// IDs already taken for it are a gap: never issued, never issued twice.
// NextNBelow instead returns what it took when the key runs out. NextInto
// does the same into a slice the caller owns, without allocating.
func (a *Allocator) NextN(ctx context.Context, n int) ([]int64, error) {
	if n < 1 {
		return nil, fmt.Errorf("%w: %d (want at least 1)", idforge.ErrInvalidCount, n)
	}
	ids := make([]int64, n)
	if _, err := a.NextInto(ctx, ids); err != nil {
		return nil, err
	}
	return ids, nil
}

// NextNBelow returns up to n strictly increasing IDs, all below limit,
// for a caller that cannot use larger ones (a serial whose seq has
// width=6 can show no ID from 1,000,000 on). It returns fewer than n only
// when the next ID would be limit or more. When the very next ID is limit
// or more it takes nothing and returns an error wrapping
// idforge.ErrSpaceExhausted: the IDs at and above limit stay for other
// callers of the key, so an answer that is an error uses up no ID. A key
// out of space in the store ends the batch the same way. Any other
// failed claim mid-batch (the store is down) returns the error, and the
// IDs taken before it are a gap. n must be at least 1.
// NextIntoBelow is the same into a slice the caller owns.
func (a *Allocator) NextNBelow(ctx context.Context, n int, limit int64) ([]int64, error) {
	if n < 1 {
		return nil, fmt.Errorf("%w: %d (want at least 1)", idforge.ErrInvalidCount, n)
	}
	ids := make([]int64, n)
	got, err := a.NextIntoBelow(ctx, ids, limit)
	if err != nil {
		return nil, err
	}
	return ids[:got], nil
}

// advance replaces the exhausted buffer with the next one. It returns nil
// when the caller should try again, or the reason it cannot.
func (a *Allocator) advance(ctx context.Context, exhausted *buffer) error {
	a.mu.Lock()
	if a.closed {
		err := a.closedErrLocked()
		a.mu.Unlock()
		return err
	}
	if a.cur.Load() != exhausted {
		a.mu.Unlock() // another caller switched already
		return nil
	}
	if exhausted.tail != nil {
		a.installLocked(exhausted.tail)
		a.mu.Unlock()
		return nil
	}
	if next := a.pending; next != nil {
		a.pending = nil
		a.installLocked(next)
		a.mu.Unlock()
		return nil
	}
	if a.att == nil {
		a.startLoaderLocked()
	}
	if a.lastErr != nil {
		// The store has been failing and the loader is backing off: fail
		// fast rather than queue callers behind it.
		err := a.wrapLocked(a.lastErr)
		a.mu.Unlock()
		return err
	}
	att := a.att
	a.waits++
	a.mu.Unlock()

	select {
	case <-att.done:
		if att.err != nil {
			a.mu.Lock()
			defer a.mu.Unlock()
			return a.wrapLocked(att.err)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("key %q: waiting for a segment: %w", a.key, ctx.Err())
	}
}

// wrapLocked turns a claim error into what callers see: errors that say
// something about the key itself pass through, anything else means the
// store is unavailable.
func (a *Allocator) wrapLocked(err error) error {
	if a.closed {
		return a.closedErrLocked()
	}
	if permanent(err) {
		return err
	}
	return fmt.Errorf("%w: key %q: %d claims failed in a row, last: %w", idforge.ErrUnavailable, a.key, a.failures, err)
}

// permanent reports whether retrying a claim cannot help: the error's
// code is not retryable (see idforge.IsRetryable), or the store is closed
// (it stays closed, though another node may serve). A store's error
// without a code (a lost connection) is worth retrying.
func permanent(err error) bool {
	return errors.Is(err, idforge.ErrClosed) || !idforge.IsRetryable(idforge.BackendError(err))
}

// installLocked makes b the buffer callers take from. Installing the last
// part of a segment starts the claim of the next one (the double buffer).
func (a *Allocator) installLocked(b *buffer) {
	old := a.cur.Load()
	a.issued += old.end - old.start // old is used up (or the empty initial buffer)
	if b.seg == old.seg {
		b.installed = old.installed
	} else {
		if !old.empty() {
			a.prevLen = old.seg.Len()
			a.prevStart = old.installed
		}
		b.installed = a.set.Clock.Now()
	}
	a.cur.Store(b)
	a.prefetchLocked()
}

// prefetchLocked starts claiming the next segment once the last part of the
// current one is being issued, unless a claim is buffered or in flight.
func (a *Allocator) prefetchLocked() {
	b := a.cur.Load()
	if b.tail == nil && !b.empty() && a.pending == nil && a.att == nil && !a.closed {
		a.startLoaderLocked()
	}
}

func (a *Allocator) startLoaderLocked() {
	a.att = &attempt{done: make(chan struct{})}
	a.loaderWG.Add(1)
	go a.load()
}

// load claims segments until one succeeds, the error is permanent, or the
// Allocator closes. Exactly one load runs at a time.
func (a *Allocator) load() {
	defer a.loaderWG.Done()
	backoff := a.set.RetryMin
	for {
		a.mu.Lock()
		if a.backwards != nil {
			att := a.att
			att.err = a.backwards
			close(att.done)
			a.att, a.lastErr, a.failures = nil, nil, 0
			a.mu.Unlock()
			return
		}
		step := a.nextStepLocked()
		ctx, cancel := context.WithTimeout(context.Background(), a.set.LoadTimeout)
		if a.closed {
			cancel() // the claim fails at once, as one cut short by Close
		} else {
			a.stopLoad = cancel
		}
		a.mu.Unlock()

		seg, began, took, err := a.claim(ctx, cancel, step)
		a.mu.Lock()
		a.stopLoad = nil
		if errors.Is(err, idforge.ErrRetired) {
			att := a.att
			att.err = err
			close(att.done)
			a.att, a.lastErr, a.failures = nil, nil, 0
			a.retireLocked(err)
			a.mu.Unlock()
			return
		}
		if err == nil {
			a.claimTookLocked(began.Add(took), took)
			err = a.acceptLocked(seg)
		}
		if a.set.OnClaim != nil {
			a.set.OnClaim(a.key, took, err)
		}
		att := a.att
		att.err = err
		close(att.done)
		if err == nil {
			if a.failures > 0 {
				a.set.Logger.Info("segment store recovered", "key", a.key, "failed_claims", a.failures)
			}
			a.att, a.lastErr, a.failures = nil, nil, 0
			// A segment too short to split goes straight to its last part.
			a.prefetchLocked()
			a.mu.Unlock()
			return
		}
		if a.closed || permanent(err) {
			// Leave nothing behind: the next caller starts afresh and
			// sees the store's answer at that time.
			a.att, a.lastErr, a.failures = nil, nil, 0
			a.mu.Unlock()
			return
		}
		a.failures++
		a.lastErr = err
		a.lastFail, a.failedAt = err.Error(), a.set.Clock.Now()
		a.att = &attempt{done: make(chan struct{})}
		a.set.Logger.Warn("segment claim failed; retrying", "key", a.key,
			"attempt", a.failures, "retry_in", backoff, "buffered", a.bufferedLocked(), "err", err)
		a.mu.Unlock()

		select {
		case <-time.After(backoff):
		case <-a.closing:
		}
		backoff = min(2*backoff, a.set.RetryMax)
	}
}

// acceptLocked checks a claimed segment and makes it the pending one.
func (a *Allocator) acceptLocked(seg idforge.Segment) error {
	if err := a.checkSegmentLocked(seg); err != nil {
		return err
	}
	// Every claim reports the key's stored step: a step an operator
	// changed takes effect from the next claim on, refresh or not.
	if seg.Step > 0 {
		a.stored = seg.Step
	}
	a.highWater = seg.End
	a.lastStep = seg.Len()
	a.loads++
	b := newBuffer(seg, a.set.PrefetchAt, clampStep(a.leadLocked(a.set.Clock.Now()), seg.Len()))
	if a.cur.Load().empty() && !a.closed {
		a.installLocked(b)
		return nil
	}
	// Also after Close: a claim that landed late is still handed back.
	a.pending = b
	return nil
}

// checkSegmentLocked refuses a claimed segment that is empty or lies
// below what this node already claimed.
func (a *Allocator) checkSegmentLocked(seg idforge.Segment) error {
	if seg.Len() <= 0 {
		return fmt.Errorf("store returned an empty segment [%d, %d) for key %q", seg.Start, seg.End, a.key)
	}
	if seg.Start < a.highWater {
		// The store handed out values this node already holds: its max_id
		// went backwards (a restored backup, a fail-over that lost
		// claims). Other nodes may have issued above what this node
		// holds, so no part of this segment, nor of any later one, can be
		// trusted: the key is refused on this node until it restarts
		// after `idforge keys repair`. The buffered values, claimed
		// before, are still good.
		a.set.Logger.Error("segment store went backwards: it returned values this node already claimed; refusing the key until `idforge keys repair` and a restart",
			"key", a.key, "segment_start", seg.Start, "segment_end", seg.End, "claimed_up_to", a.highWater)
		a.backwards = fmt.Errorf("%w: key %q: the store returned segment [%d, %d), below values this node already claimed (up to %d): its max_id went backwards; "+
			"run `idforge keys repair --floor N` with N above every ID handed out, then restart this node",
			idforge.ErrStoreFailedOver, a.key, seg.Start, seg.End, a.highWater)
		return a.backwards
	}
	return nil
}

// nextStepLocked sizes the next claim from the consumption rate. Zero asks
// the store for the key's own step, which is what the first claim uses.
//
// The claim is sized to last TargetDuration at the measured rate (and,
// with SurviveOutage, SurviveOutage at the recent peak rate), and never
// shorter than the lead (see leadLocked): a segment that runs out before
// the claim of the next one can finish makes callers wait. Growth is
// otherwise limited to maxGrowth× per claim: a short burst right after a
// start is a noisy estimate, and an oversized segment costs a large gap
// on a crash. Shrinking is not limited. The bounds are MinStep (or the
// stored step), MaxStep when set, and what the key has left below
// math.MaxInt64 as far as this node knows, so that growth never makes
// the store refuse a claim as out of space while a step still fits.
func (a *Allocator) nextStepLocked() int64 {
	cur := a.cur.Load()
	minStep, maxStep := a.boundsLocked()
	if cur.empty() || minStep == 0 {
		return 0
	}
	now := a.set.Clock.Now()
	rate := a.rateLocked(now)
	lead := a.leadLocked(now)
	want := max(rate*a.set.TargetDuration.Seconds(), lead)
	if a.set.SurviveOutage > 0 {
		want = max(want, a.peakLocked(now, rate)*a.set.SurviveOutage.Seconds())
	}
	limit := max(maxGrowth*float64(max(a.lastStep, minStep)), lead)
	room := int64(math.MaxInt64)
	if a.highWater > 0 {
		room = max(math.MaxInt64-a.highWater, 1)
	}
	// The stored step wins over MaxStep and the room, as it does for the
	// first claim: a key whose room is less than one step is out of
	// space, as the store says.
	return max(clampStep(min(want, limit), min(maxStep, room)), minStep)
}

// boundsLocked returns the smallest and largest segment to claim: the
// key's own bounds (SetBounds), else Settings' MinStep and MaxStep, the
// smallest defaulting to the key's stored step; the largest is never
// below the smallest.
func (a *Allocator) boundsLocked() (minStep, maxStep int64) {
	minStep = cmp.Or(a.keyMin, a.set.MinStep, a.stored)
	maxStep = cmp.Or(a.keyMax, a.set.MaxStep)
	return minStep, max(maxStep, minStep)
}

// clampStep converts a length in IDs computed in floating point to an
// int64 in [1, hi] without overflowing.
func clampStep(f float64, hi int64) int64 {
	switch {
	case f >= float64(hi):
		return hi
	case f < 1:
		return min(1, hi)
	}
	return int64(f)
}

// maxGrowth bounds how much longer each claim may be than the one before,
// unless the lead needs more.
const maxGrowth = 4

// prefetchMargin is how many times the slowest recent claim a prefetch
// allows for: it starts while the values left would last that many
// claims at the measured rate.
const prefetchMargin = 2

// leadLocked returns how many values a prefetch must start ahead of the
// end of the buffers: the measured rate times the slowest recent claim
// (decaying, see claimTookLocked), times prefetchMargin.
func (a *Allocator) leadLocked(now time.Time) float64 {
	return a.rateLocked(now) * a.slowestLocked(now).Seconds() * prefetchMargin
}

// claimTookLocked records how long a claim that finished at now took.
func (a *Allocator) claimTookLocked(now time.Time, took time.Duration) {
	a.slowest, a.slowestAt = max(a.slowestLocked(now), took), now
}

// slowestLocked returns the slowest recent claim, fading by half every
// peakHalfLife so that one slow claim long ago stops counting.
func (a *Allocator) slowestLocked(now time.Time) time.Duration {
	if a.slowestAt.IsZero() {
		return 0
	}
	return time.Duration(float64(a.slowest) * math.Exp2(-now.Sub(a.slowestAt).Seconds()/peakHalfLife.Seconds()))
}

// rateLocked estimates the consumption rate in IDs per second over the
// current segment and the one before it.
func (a *Allocator) rateLocked(now time.Time) float64 {
	cur := a.cur.Load()
	if cur.empty() {
		return 0
	}
	used := min(cur.next.Load(), cur.end) - cur.seg.Start
	since := cur.installed
	if !a.prevStart.IsZero() {
		used += a.prevLen
		since = a.prevStart
	}
	elapsed := max(now.Sub(since), time.Millisecond)
	return float64(used) / elapsed.Seconds()
}

// peakHalfLife is how fast a remembered peak rate fades.
const peakHalfLife = time.Hour

// peakLocked folds rate into the decaying peak and returns the peak.
func (a *Allocator) peakLocked(now time.Time, rate float64) float64 {
	if !a.peakAt.IsZero() {
		a.peak *= math.Exp2(-now.Sub(a.peakAt).Seconds() / peakHalfLife.Seconds())
	}
	a.peak, a.peakAt = max(a.peak, rate), now
	return a.peak
}

func (a *Allocator) bufferedLocked() int64 {
	var n int64
	n = a.cur.Load().remaining()
	if a.pending != nil {
		n += a.pending.remaining()
	}
	return n
}

// SetStoredStep tells the Allocator that the key's stored step is now n
// (an operator changed it): it becomes the smallest segment claimed,
// unless Settings.MinStep or the key's own bounds (SetBounds) fix that.
func (a *Allocator) SetStoredStep(n int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if n > 0 {
		a.stored = n
	}
}

// SetBounds gives the key its own adaptive-step bounds, which take the
// place of Settings.MinStep and Settings.MaxStep from the next claim on;
// 0 falls back to Settings (a minimum of 0 there to the stored step).
// Bounds only size claims: no bound can make a value repeat.
func (a *Allocator) SetBounds(minStep, maxStep int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.keyMin, a.keyMax = max(minStep, 0), max(maxStep, 0)
}

// Retire stops the Allocator for good because its key was retired: err,
// which should wrap idforge.ErrRetired, answers every later call. The
// values buffered are dropped, not handed back to the store: a retired
// key's max_id never goes down. Close after Retire does nothing.
func (a *Allocator) Retire(err error) {
	a.mu.Lock()
	retiring := !a.closed
	if retiring {
		a.retireLocked(err)
	}
	a.mu.Unlock()
	if retiring {
		a.loaderWG.Wait()
	}
}

// retireLocked is Retire without waiting for the loader, which may be
// the caller.
func (a *Allocator) retireLocked(err error) {
	if a.closed {
		return
	}
	a.closed, a.retired, a.pending = true, err, nil
	b := a.cur.Swap(closedBuffer)
	// Seal what callers were taking from: every later add lands past end.
	b.next.Swap(b.end)
	close(a.closing)
	a.stopLoadLocked()
	a.set.Logger.Info("key retired: dropping its buffered segments", "key", a.key)
}

// stopLoadLocked cancels the claim in flight, if any.
func (a *Allocator) stopLoadLocked() {
	if a.stopLoad != nil {
		a.stopLoad()
	}
}

// closedErrLocked is what a call to a closed Allocator answers.
func (a *Allocator) closedErrLocked() error {
	if a.retired != nil {
		return a.retired
	}
	return idforge.ErrClosed
}

// check asks Settings.Check whether the key may claim.
func (a *Allocator) check(ctx context.Context) error {
	if a.set.Check == nil {
		return nil
	}
	return a.set.Check(ctx, a.key)
}

// Stats is a snapshot of an Allocator's state.
type Stats struct {
	Key string
	// Current is the segment being issued, [Start, End); Next is the next
	// value it will hand out.
	Current idforge.Segment
	Next    int64
	// Pending is the segment claimed ahead, zero when none.
	Pending idforge.Segment
	// Buffered counts the values left in Current and Pending.
	Buffered int64
	// Rate is the consumption rate, in IDs per second, measured over the
	// current and the previous segment; BufferedFor is how long Buffered
	// lasts at that rate (0 when nothing is being issued).
	Rate        float64
	BufferedFor time.Duration
	// Issued counts the values handed out (or reserved by a batch).
	Issued int64
	// Waits counts calls that had to wait for a claim because nothing was
	// buffered: the first call, and any call after the buffers ran dry.
	Waits int64
	// Step is the length of the newest claimed segment.
	Step int64
	// ClaimedUpTo is the end of the newest segment this node ever
	// claimed: no value at or above it came from this node. After a
	// fail-over that lost claims, the highest ClaimedUpTo of the live
	// nodes is the floor `idforge keys repair --from-nodes` raises the key
	// to.
	ClaimedUpTo int64
	// Loads counts successful claims.
	Loads int64
	// Failures counts consecutive failed claims; LastError is the newest.
	Failures  int
	LastError error
	// LastFailure is the newest failed claim's error and LastFailureAt
	// when it failed, kept after the store recovers; empty and zero when
	// no claim failed.
	LastFailure   string
	LastFailureAt time.Time
	// OutageBudget is Settings.SurviveOutage: how long a store outage the
	// buffers are sized to outlast; 0 when not set.
	OutageBudget time.Duration
}

// Stats returns a snapshot of the Allocator's state.
func (a *Allocator) Stats() Stats {
	a.mu.Lock()
	defer a.mu.Unlock()
	st := Stats{Key: a.key, Step: a.lastStep, Loads: a.loads, Failures: a.failures, LastError: a.lastErr,
		Waits: a.waits, Issued: a.issued, OutageBudget: a.set.SurviveOutage, ClaimedUpTo: a.highWater,
		LastFailure: a.lastFail, LastFailureAt: a.failedAt}
	if b := a.cur.Load(); !b.empty() {
		st.Current = b.seg
		st.Next = min(b.next.Load(), b.end)
		st.Issued += st.Next - b.start
		st.Rate = a.rateLocked(a.set.Clock.Now())
	}
	if p := a.pending; p != nil {
		st.Pending = p.seg
	}
	st.Buffered = a.bufferedLocked()
	if st.Rate > 0 {
		st.BufferedFor = time.Duration(float64(st.Buffered) / st.Rate * float64(time.Second))
	}
	return st
}

// Close stops the Allocator: later calls fail with idforge.ErrClosed.
//
// When the store implements idforge.SegmentReturner, Close hands the
// unissued top of this node's claims back (a compare-and-set on max_id), so
// a clean restart continues right after the last issued value. If another
// node claimed after this one, the hand-back is refused and the values are
// abandoned: a gap, never a duplicate. Close is idempotent; it returns the
// hand-back's error, if any.
func (a *Allocator) Close() error {
	if !closeonce.Claim(&a.mu, &a.closed) {
		return nil
	}
	b := a.cur.Swap(closedBuffer)
	close(a.closing)
	a.stopLoadLocked()
	a.mu.Unlock()
	a.loaderWG.Wait()

	// Seal the buffer callers were taking from: every value below what
	// the swap returns was handed out; every later add lands past end.
	// This is the moment after which nothing more is issued.
	sealed := b.next.Swap(b.end)

	a.mu.Lock()
	pending, high := a.pending, a.highWater
	a.pending = nil
	a.mu.Unlock()
	returner, ok := a.store.(idforge.SegmentReturner)
	// A key in global order holds nothing back: every value it claimed
	// was handed out or lost, and max_id must never go down under it.
	if !ok || high == 0 || a.set.Global {
		return nil
	}
	from := unissuedFrom(b, sealed, pending, high)
	if from >= high {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), a.set.LoadTimeout)
	defer cancel()
	returned, err := returner.ReturnSegment(ctx, a.key, from, high)
	switch {
	case err != nil:
		a.set.Logger.Warn("could not hand the unused segment back; it is left as a gap", "key", a.key, "from", from, "to", high, "err", err)
		return fmt.Errorf("key %q: handing back [%d, %d): %w", a.key, from, high, err)
	case returned:
		a.set.Logger.Info("handed the unused segment back", "key", a.key, "from", from, "to", high)
	default:
		a.set.Logger.Info("unused segment not handed back: another node claimed after it; it is left as a gap", "key", a.key, "from", from, "to", high)
	}
	return nil
}

// unissuedFrom returns the lowest value of the contiguous unissued range
// that ends at high, the end of the newest claim: the pending segment, the
// untouched tail of the current segment and the sealed rest of the buffer
// in use, as far as they join up. high means nothing can be handed back.
func unissuedFrom(b *buffer, sealed int64, pending *buffer, high int64) int64 {
	from := high
	if pending != nil {
		if pending.seg.End != high {
			return high
		}
		from = pending.seg.Start
	}
	if b.empty() || b.seg.End != from {
		return from
	}
	if b.tail != nil {
		from = b.tail.start
	}
	if sealed < b.end {
		from = max(sealed, b.start)
	}
	return from
}
