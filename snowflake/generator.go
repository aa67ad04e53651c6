package snowflake

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/cacheline"
	"github.com/idforge/idforge/internal/closeonce"
)

// Defaults for the zero values of Settings.
const (
	// DefaultMaxBackwardWait is how far the clock may move back before
	// Next refuses instead of waiting, when Settings.MaxBackwardWait is 0.
	DefaultMaxBackwardWait = 5 * time.Millisecond
	// DefaultFenceAhead is how far beyond the newest issued tick the fence
	// is recorded, when Settings.FenceAhead is 0.
	DefaultFenceAhead = 2 * time.Second
)

// MaxBatch is the largest batch NextN and NextInto accept.
const MaxBatch = 1 << 20

// expiryWarning is how long before the layout expires New starts warning.
const expiryWarning = 365 * 24 * time.Hour

// Settings configures a Generator. The zero value of every field means
// "use the default".
type Settings struct {
	// Layout is the bit layout of the IDs. The zero Layout (no Name, Unit,
	// Epoch or Fields) means Preset("twitter").
	Layout Layout
	// Datacenter is the datacenter ID stored in every ID, from 0 to
	// Layout.MaxDatacenter(); it must be 0 when the layout has no
	// datacenter field.
	Datacenter int64
	// Worker is the worker ID stored in every ID, from 0 to
	// Layout.MaxWorker(); it must be 0 when the layout has no worker
	// field. No two running generators of one layout (and datacenter) may
	// share a worker ID: that is what keeps their IDs apart.
	Worker int64
	// MaxBackwardWait is how far behind the newest issued tick the clock
	// may fall (an NTP step, say) for Next to wait for it to catch up;
	// further behind, Next refuses with idforge.ErrClockMovedBackwards
	// until the clock has caught up. 0 means DefaultMaxBackwardWait (5 ms);
	// a negative value means never wait.
	MaxBackwardWait time.Duration
	// Fence, when set, persists a time bound so that a restart with the
	// clock set back cannot reuse time (see Fence). Without a fence the
	// generator only guards against the clock moving back while it runs:
	// if the process restarts while the clock is behind the last time it
	// issued (a crash followed by an NTP correction, a VM restored from a
	// snapshot), it issues duplicate IDs.
	Fence Fence
	// FenceAhead is how far past the newest issued tick the fence is
	// recorded, so that Store runs about once per FenceAhead/2 and in the
	// background. After a crash, a restart waits up to FenceAhead (plus
	// MaxBackwardWait, MaxBorrow and one Unit) for the clock to pass the
	// record. 0 means
	// DefaultFenceAhead (2 s); it must not be negative.
	FenceAhead time.Duration
	// MaxBorrow, when positive, lets the generator keep issuing through a
	// backward clock step larger than MaxBackwardWait by borrowing ahead:
	// it goes on issuing at its own newest tick, then the next ones, as
	// long as that logical time is at most MaxBorrow ahead of the clock.
	// IDs stay unique and increasing; the trade is that their time field
	// runs up to MaxBorrow ahead of the wall clock, and that at most
	// MaxBorrow/Unit ticks of sequence space can be spent that way before
	// the generator refuses like it does when MaxBorrow is 0 (the
	// default): with ErrClockMovedBackwards until the clock catches up.
	// With Drift, bursts spend the same budget.
	MaxBorrow time.Duration
	// Drift, with MaxBorrow, spends the same budget on bursts, as Yitter's
	// IdGenerator "drifts": when a tick's sequence is used up, the
	// generator goes on issuing in the next ticks ahead of the clock
	// instead of waiting, as long as they start at most MaxBorrow ahead of
	// it; past that it waits until the clock leaves room for one more
	// tick. The time fence covers every tick issued ahead before an ID of
	// it is returned, so a restart never issues in them again. It suits
	// layouts with few sequence bits (js-safe, sonyflake: 256 per tick),
	// whose bursts would otherwise wait a tick every 256 IDs; the IDs'
	// time runs up to MaxBorrow ahead of the wall clock meanwhile. Off by
	// default; New refuses Drift without a MaxBorrow.
	Drift bool
	// NotBefore makes the generator skip every tick that starts at or
	// before it: an earlier holder of this worker ID issued until then
	// (the coordinator recorded it). New waits or refuses as for a Fence.
	NotBefore time.Time
	// Guard, when set, is asked before every ID: once the clock reaches
	// its ValidUntil the generator refuses with idforge.ErrLeaseLost (a
	// coordinated worker-ID lease that could not be renewed in time).
	Guard Guard
	// Clock is the source of time; nil means idforge.SystemClock.
	Clock idforge.Clock
	// Logger receives the start-up line and warnings; nil means
	// slog.Default().
	Logger *slog.Logger
}

// Guard bounds the right to issue with a worker ID in time, as a lease on
// the ID does.
type Guard interface {
	// ValidUntil returns the time until which IDs may be issued. The zero
	// Time means without limit.
	ValidUntil() time.Time
}

// Generator issues snowflake IDs: time, datacenter, worker and sequence
// packed into a non-negative int64 according to a Layout. IDs from one
// Generator strictly increase in the order Next returns them. A Generator
// is safe for concurrent use.
//
// # Why no ID is issued twice
//
// Every ID is a sequence number of a tick, taken by an atomic add on one
// word, seq: the tick being counted in the high bits, and in the low bits,
// count, how many of its sequence numbers have been taken (the count
// field has one bit more than the layout's sequence, so that adds past
// maxSeq stay in it). An add of k returns the count before it, c: the
// caller has the numbers c … c+k−1 of that tick, and no other add gets
// any of them. Only the numbers up to maxSeq are IDs; an add that finds
// the tick used up takes nothing, and its caller goes to the slow path.
//
// The tick in seq changes only under mu, by an atomic swap that makes
// seq (t, k): tick t with its first k numbers taken, k = 0 … maxSeq+1
// (maxSeq+1: none left, the tick is closed). The swap sets a new tick
// only to one later than every tick before (the first ID of a tick, after
// checking the lease, the layout's end, the clock rollback policy and the
// fence), or closes the tick it holds when the meaning of later IDs
// changes (Rebind, Close) or moves past ticks an earlier run or holder
// used (the fence, NotBefore). So each tick is counted from 0 at most
// once, in one stretch of seq, and a number taken in that stretch is not
// taken again.
//
// The fast path (take, no lock: Next, and the start of a NextInto or
// NextN batch) issues only in the tick published in open, after the swap
// that started its stretch: it loads open, reads the clock, and adds only
// when the clock reads open's tick; it keeps its numbers only when the
// add's result shows open's tick in seq and a count within the sequence.
// An add that lands after a later swap sees another tick, or the closed
// count, and its numbers are dropped (gaps are allowed). Adds made by
// callers that went on adding to a used-up tick may run the count past
// its field into the tick's bits; such a value never equals a tick that
// was published before it, so it is dropped too, and the next swap
// resets it. The worker ID and lease come from open as well, stored with
// the tick they were opened with: a Rebind closes the tick first.
//
// So every rare check runs where a tick is opened, under mu, and the fast
// path cannot issue in a tick that was not opened that way: a backward
// clock reads an older tick than open's, a tick past the fence or the
// layout's end is newer, and a closed tick has no number left. The lease
// alone is asked on every call, since it can end at any instant; a batch
// taken in one add is issued at the instant its clock was read. With two
// cores on one generator a call moves seq's cache line once, for the
// add, as a bare atomic counter does.
type Generator struct {
	// seq is the word described above, alone on its cache line: every
	// caller adds to it. The padding before it keeps writes to whatever
	// object the heap places just before the Generator off its line.
	_   [cacheline.Size]byte
	seq atomic.Uint64
	_   [cacheline.Size - 8]byte

	// open is the tick the fast path may issue in, with the binding it
	// was opened with; nil when none. Replaced under mu.
	open atomic.Pointer[openTick]

	// bind is the worker ID's part of every ID and its lease, replaced
	// (under mu) by Rebind.
	bind atomic.Pointer[binding]
	// sinceEpoch is what to add to time.Since(start) to get nanoseconds
	// since the layout's epoch on the wall clock, when mono (the
	// operating system's clock): the fast path reads only the cheap
	// monotonic clock; every opening of a tick re-reads the wall clock and
	// re-anchors it when the two drift apart (an NTP step).
	sinceEpoch atomic.Int64

	// Fixed after New; read by the fast path.
	mono      bool
	start     time.Time // a reading of the system clock with its monotonic part
	unitNs    int64
	seqBits   uint
	timeShift uint
	seqShift  uint
	maxSeq    int64
	tickShift uint   // where seq's tick starts: seqBits+1
	countMask uint64 // seq's count field

	mu     sync.Mutex
	quiet  int64 // ticks up to this one need no fence work
	closed bool
	issued bool // an ID was issued, so last is a tick of this generator's
	// last is the tick seq counts in: the newest tick an ID was issued in
	// or that was skipped, -1 before the first.
	last int64
	// counted is the IDs issued in the ticks before last; closedAt the
	// count last's stretch started at (maxSeq+1 when it started closed:
	// none of its numbers are IDs).
	counted  int64
	closedAt int64

	backWaits    int64 // times the clock was behind and Next waited for it
	backRefusals int64 // times the clock was behind and Next refused
	// seenMs is the latest clock reading the slow path saw (ms since
	// the epoch): a reading before it means the clock moved back, one
	// not before it that the generator is ahead by Drift alone.
	seenMs int64

	reservedMs int64 // tick ends up to this (ms since epoch) are covered by the stored fence
	refreshing bool  // a background fence write is running
	loggedAt   time.Time

	// Fixed after New.
	layout     Layout
	p          plan
	clock      idforge.Clock
	system     bool
	log        *slog.Logger
	maxBack    time.Duration // negative: never wait
	worker     int64         // changed under mu by Rebind
	datacenter int64
	maxBorrow  time.Duration
	drift      bool
	fence      Fence
	aheadMs    int64
	wg         sync.WaitGroup // background fence writes

	storeMu  sync.Mutex // serialises Fence.Store
	storedMs int64      // the newest time stored (ms since epoch), guarded by storeMu
}

// binding is what the worker ID puts in every ID and the lease on it.
type binding struct {
	base  int64 // fixed fields, datacenter and worker, in place
	guard Guard
}

// openTick is a tick the fast path may issue in and the binding it was
// opened with. It is immutable once published.
type openTick struct {
	tick int64
	*binding
}

// allowed reports whether the guard lets IDs be issued at now.
func (b *binding) allowed(now time.Time) bool {
	if b.guard == nil {
		return true
	}
	until := b.guard.ValidUntil()
	return until.IsZero() || now.Before(until)
}

// osClock is idforge.SystemClock as this package found it: the operating
// system's clock, before any program could replace it (the idforge
// binary's test builds do). Only on that clock does the fast path read the
// monotonic clock instead of asking the Clock.
var osClock = idforge.SystemClock

// anchorSlack is how far the monotonic clock's idea of the wall clock may
// drift before a tick opening re-anchors it. Until then the fast path's
// tick may differ from the wall clock's by that much; it only decides when
// the slow path is taken, never what is issued.
const anchorSlack = 100 * time.Microsecond

var _ idforge.BatchGenerator = (*Generator)(nil)

// New returns a Generator for s. It returns an error wrapping
//
//   - idforge.ErrInvalidLayout when the layout is not valid or its epoch
//     is after the clock's time;
//   - idforge.ErrInvalidWorker when Worker or Datacenter does not fit the
//     layout (the message gives the allowed range);
//   - idforge.ErrLayoutExpired when the clock is at or after the layout's
//     Expires;
//   - idforge.ErrInvalidArgument when FenceAhead is negative, or Drift is
//     set without MaxBorrow;
//   - idforge.ErrClockMovedBackwards when the Fence holds a time more than
//     FenceAhead + MaxBackwardWait + MaxBorrow + one Unit ahead of the
//     clock;
//   - the Fence's own error when Load fails.
//
// When the Fence holds a time at most that far ahead of the clock (as
// after a crash), New sleeps until the clock passes it.
// New logs one Info line, and a warning when the layout expires within a
// year.
func New(s Settings) (*Generator, error) {
	l := s.Layout
	if l.Name == "" && l.Unit == 0 && l.Epoch.IsZero() && len(l.Fields) == 0 {
		l, _ = Preset("twitter")
	}
	l.Fields = slices.Clone(l.Fields)
	p, err := l.plan()
	if err != nil {
		return nil, err
	}
	g := &Generator{
		last:       -1,
		layout:     l,
		p:          p,
		unitNs:     p.unitMs * int64(time.Millisecond),
		seqBits:    p.seqBits,
		timeShift:  p.timeShift,
		seqShift:   p.seqShift,
		maxSeq:     maxOf(p.seqBits),
		tickShift:  p.seqBits + 1,
		countMask:  1<<(p.seqBits+1) - 1,
		clock:      s.Clock,
		log:        s.Logger,
		maxBack:    s.MaxBackwardWait,
		worker:     s.Worker,
		datacenter: s.Datacenter,
		maxBorrow:  s.MaxBorrow,
		drift:      s.Drift,
		fence:      s.Fence,
		quiet:      p.endTick - 1,
	}
	g.clock = cmp.Or(g.clock, idforge.SystemClock)
	g.system = g.clock == idforge.SystemClock
	g.mono = g.clock == osClock
	g.log = cmp.Or(g.log, slog.Default())
	g.maxBack = cmp.Or(g.maxBack, DefaultMaxBackwardWait)
	ahead := s.FenceAhead
	switch {
	case ahead < 0:
		return nil, fmt.Errorf("%w: FenceAhead %v is negative", idforge.ErrInvalidArgument, ahead)
	case ahead == 0:
		ahead = DefaultFenceAhead
	}
	if s.Drift && s.MaxBorrow <= 0 {
		return nil, fmt.Errorf("%w: Drift needs MaxBorrow, the budget it may run ahead of the clock within", idforge.ErrInvalidArgument)
	}
	g.aheadMs = int64((ahead + time.Millisecond - 1) / time.Millisecond)

	if err := checkID("worker", s.Worker, p.workerBits); err != nil {
		return nil, err
	}
	if err := checkID("datacenter", s.Datacenter, p.dcBits); err != nil {
		return nil, err
	}
	g.bind.Store(&binding{base: g.baseFor(s.Worker), guard: s.Guard})

	now := g.clock.Now()
	if g.mono {
		g.start = now
		g.anchor(now)
	}
	if l.Epoch.After(now) {
		return nil, layoutErr("epoch %s is in the future (the clock reads %s)", l.Epoch.UTC().Format(time.RFC3339Nano), now.UTC().Format(time.RFC3339Nano))
	}
	expires := l.Expires()
	if !now.Before(expires) {
		return nil, fmt.Errorf("%w: layout %s ran out of time on %s (the clock reads %s)", idforge.ErrLayoutExpired, l.Name, expires.Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	}
	if left := expires.Sub(now); left < expiryWarning {
		g.log.Warn("snowflake: layout runs out of time soon; after that no ID can be issued",
			"layout", l.Name, "expires", expires.Format(time.RFC3339), "days_left", int(left.Hours()/24))
	}

	if g.fence != nil {
		g.quiet, g.reservedMs = -1, -1
		g.storedMs = -1 << 62
		t, err := g.fence.Load()
		if err != nil {
			return nil, fmt.Errorf("snowflake: loading the time fence: %w", err)
		}
		if !t.IsZero() {
			if err := g.applyFence(t, ahead); err != nil {
				return nil, err
			}
		}
	}

	if !s.NotBefore.IsZero() {
		if err := g.skipUntil(s.NotBefore, ahead, "the time an earlier holder of worker ID "+strconv.FormatInt(s.Worker, 10)+" recorded"); err != nil {
			return nil, err
		}
	}

	g.log.Info("snowflake generator started",
		"layout", l.Name, "spec", l.String(), "worker", s.Worker, "datacenter", s.Datacenter,
		"expires", expires.Format(time.RFC3339), "fence", g.fence != nil)
	return g, nil
}

// checkID checks a worker or datacenter ID against a field of bits bits.
func checkID(name string, v int64, bits uint) error {
	switch {
	case bits == 0 && v != 0:
		return fmt.Errorf("%w: %s %d given, but the layout has no %s field (use 0)", idforge.ErrInvalidWorker, name, v, name)
	case v < 0 || v > maxOf(bits):
		return fmt.Errorf("%w: %s %d out of range 0..%d", idforge.ErrInvalidWorker, name, v, maxOf(bits))
	}
	return nil
}

// applyFence makes the generator skip every tick starting at or before t,
// the time an earlier run recorded in the fence.
func (g *Generator) applyFence(t time.Time, ahead time.Duration) error {
	g.storedMs = t.UnixMilli() - g.p.epochMs
	return g.skipUntil(t, ahead, "the time fence recorded by an earlier run")
}

// skipUntil makes the generator skip every tick starting at or before t,
// waiting for the clock when it is behind t by no more than ahead +
// MaxBackwardWait (a crash within the fence window looks like that), and
// refusing when it is further behind. what names t in messages.
func (g *Generator) skipUntil(t time.Time, ahead time.Duration, what string) error {
	tMs := t.UnixMilli() - g.p.epochMs
	tick := floorDiv(tMs, g.p.unitMs)
	if tick >= 0 {
		g.skipLocked(tick)
	}
	// A running generator records ahead past the end of its newest tick,
	// which may start MaxBorrow ahead of the clock.
	allowed := ahead + max(g.maxBack, 0) + max(g.maxBorrow, 0) + time.Duration(g.p.unitMs)*time.Millisecond
	now := g.clock.Now()
	for tries := 0; !now.After(t); tries++ {
		gap := t.Sub(now)
		if gap > allowed || tries == 3 {
			return fmt.Errorf("%w: the clock reads %s, %v behind %s, %s (more than the %v a start may wait); refusing to start before %s",
				idforge.ErrClockMovedBackwards, now.UTC().Format(time.RFC3339Nano), gap, what, t.UTC().Format(time.RFC3339Nano), allowed, t.UTC().Format(time.RFC3339Nano))
		}
		wait := g.p.tickStart(tick + 1).Sub(now)
		g.log.Info("snowflake: waiting for the clock to pass "+what, "wait", wait, "until", t.UTC().Format(time.RFC3339Nano), "worker", g.worker)
		g.clock.Sleep(wait)
		now = g.clock.Now()
	}
	return nil
}

// Rebind switches the generator to another worker ID, as after its lease
// was lost and a new one obtained: later IDs carry worker, are issued only
// while guard allows, and only in ticks after notBefore (the newest time
// an earlier holder of worker recorded); until the clock passes notBefore,
// Next refuses with idforge.ErrClockMovedBackwards. Rebind closes the
// current tick, so the next ID may wait for the next one. It returns an
// error wrapping idforge.ErrInvalidWorker when worker does not fit the
// layout.
func (g *Generator) Rebind(worker int64, notBefore time.Time, guard Guard) error {
	if err := checkID("worker", worker, g.p.workerBits); err != nil {
		return err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.worker = worker
	g.bind.Store(&binding{base: g.baseFor(worker), guard: guard})
	// Close the current tick: a Next that read the old binding cannot
	// issue any more, and later IDs (in later ticks) carry worker.
	g.skipLocked(-1)
	if !notBefore.IsZero() {
		g.skipLocked(floorDiv(notBefore.UnixMilli()-g.p.epochMs, g.p.unitMs))
	}
	g.log.Info("snowflake generator rebound to a new worker ID", "worker", worker, "not_before", notBefore.UTC().Format(time.RFC3339Nano))
	return nil
}

// baseFor returns the fixed fields, datacenter and worker in place.
func (g *Generator) baseFor(worker int64) int64 {
	return g.p.fixed | g.datacenter<<g.p.dcShift | worker<<g.p.workerShift
}

// skipLocked closes the newest tick (no more IDs in it) and moves on to
// tick when that is later, closed too, so that the next ID is in a later
// tick. tick -1 only closes the newest tick. Called with mu held (or from
// New).
func (g *Generator) skipLocked(tick int64) {
	tick = max(g.last, min(tick, g.p.endTick-1)) // past the layout's end: the next ID finds it expired
	if tick < 0 {
		return // nothing issued, nothing to close
	}
	g.moveLocked(tick, g.maxSeq+1, nil)
}

// moveLocked makes tick, not earlier than last, the tick seq counts in,
// with its first k numbers taken, and publishes it for the fast path as
// open (nil: closed to it). The IDs issued in the tick it counted before
// are added to counted. Called with mu held.
func (g *Generator) moveLocked(tick, k int64, open *openTick) {
	old := g.seq.Swap(uint64(tick)<<g.tickShift | uint64(k))
	g.counted += g.takenLocked(old) - g.closedAt
	g.last, g.closedAt = tick, 0
	if open == nil {
		g.closedAt = k
	}
	g.open.Store(open)
}

// takenLocked returns how many of last's sequence numbers w, a value of
// seq, shows taken: maxSeq+1 when adds to the used-up tick carried into
// the tick's bits. Called with mu held.
func (g *Generator) takenLocked(w uint64) int64 {
	if g.last < 0 {
		return 0
	}
	if int64(w>>g.tickShift) != g.last {
		return g.maxSeq + 1
	}
	return min(int64(w&g.countMask), g.maxSeq+1)
}

// LastIssued returns the end of the newest tick an ID was issued in (the
// time a later holder of the worker ID must stay after), zero when none.
func (g *Generator) LastIssued() time.Time {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.issued {
		return time.Time{}
	}
	return g.p.tickStart(g.last + 1)
}

// Layout returns the generator's layout.
func (g *Generator) Layout() Layout {
	l := g.layout
	l.Fields = slices.Clone(l.Fields)
	return l
}

// Issued returns how many IDs the generator has issued. With several
// callers at once it may count a few more: numbers that a caller took
// just as its tick ended, and dropped (see Generator).
func (g *Generator) Issued() int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.counted + g.takenLocked(g.seq.Load()) - g.closedAt
}

// Worker returns the worker ID stored in every ID (Rebind may change it).
func (g *Generator) Worker() int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.worker
}

// ValidUntil returns the time until which the worker ID's guard lets the
// generator issue: the zero Time without a guard or limit, a time in the
// past once the lease was lost.
func (g *Generator) ValidUntil() time.Time {
	guard := g.bind.Load().guard
	if guard == nil {
		return time.Time{}
	}
	return guard.ValidUntil()
}

// ClockBackwards reports how often since New an ID was asked for while
// the clock was behind the newest issued tick (or the time fence of an
// earlier run) by more than borrowing covers: waits counts the times it
// waited for the clock to catch up (a step back of at most
// MaxBackwardWait), refusals the times it returned
// idforge.ErrClockMovedBackwards. Both only grow.
func (g *Generator) ClockBackwards() (waits, refusals int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.backWaits, g.backRefusals
}

// Datacenter returns the datacenter ID stored in every ID.
func (g *Generator) Datacenter() int64 { return g.datacenter }

// Next returns a new ID, greater than every ID this Generator returned
// before. When the tick's sequence numbers are used up it waits for the
// next tick; when the clock has moved back by at most MaxBackwardWait it
// waits for the clock to catch up. It returns an error wrapping
//
//   - idforge.ErrClockMovedBackwards when the clock is further behind
//     the newest issued tick (or the fence of an earlier run);
//   - idforge.ErrLayoutExpired when the clock has reached the layout's
//     Expires;
//   - idforge.ErrClosed after Close;
//   - the Fence's error when storing the fence fails;
//   - ctx.Err() when ctx is done while waiting.
func (g *Generator) Next(ctx context.Context) (int64, error) {
	if id, k := g.take(1); k == 1 {
		return id, nil
	}
	var id [1]int64
	if _, err := g.fill(ctx, id[:]); err != nil {
		return 0, err
	}
	return id[0], nil
}

// take is the fast path of Next and NextInto: it takes up to n (at least
// 1) more sequence numbers of the open tick the clock reads, in one atomic
// add and without the lock (see Generator for why that is safe), and
// returns the first ID and how many it took, 0 when the slow path must
// run: no tick is open, the clock reads another, or its sequence is used
// up. The IDs taken are id, id+step, … with step 1<<seqShift.
func (g *Generator) take(n int64) (id, k int64) {
	o := g.open.Load()
	if o == nil {
		return 0, 0
	}
	var tick int64
	if g.mono && o.guard == nil {
		// The operating system's clock and no lease to compare with
		// the wall clock: read the monotonic clock only (half the cost
		// of time.Now), anchored to the wall clock by tick openings.
		ns := int64(time.Since(g.start)) + g.sinceEpoch.Load()
		switch {
		case ns < 0:
			tick = -1
		case g.unitNs == int64(time.Millisecond): // a division by a constant: no divide instruction
			tick = int64(uint64(ns) / uint64(time.Millisecond))
		default:
			tick = ns / g.unitNs
		}
	} else {
		tick = g.clockTick(o.binding)
	}
	if tick != o.tick {
		return 0, 0
	}
	first, k := g.add(tick, n)
	return o.base | tick<<(g.timeShift&63) | first<<(g.seqShift&63), k
}

// add takes up to n (at least 1) more sequence numbers of tick, the tick
// published in open, with one atomic add on seq, and returns the first
// and how many it took: 0 when seq shows a later tick, a closed one or a
// used-up one (see Generator). The fast path and the slow path both take
// numbers of an open tick this way.
func (g *Generator) add(tick, n int64) (first, k int64) {
	k = min(n, g.maxSeq+1)
	w := g.seq.Add(uint64(k))
	first = int64(w&g.countMask) - k
	if int64(w>>(g.tickShift&63)) != tick || uint64(first) > uint64(g.maxSeq) {
		return 0, 0
	}
	return first, min(k, g.maxSeq+1-first)
}

// clockTick returns the tick g's Clock reads now, or -1 when the fast path
// must not issue: the clock is before the epoch or b's lease has ended.
func (g *Generator) clockTick(b *binding) int64 {
	now := g.clock.Now()
	if !b.allowed(now) {
		return -1
	}
	ms := now.UnixMilli() - g.p.epochMs
	if ms < 0 {
		return -1
	}
	return ms / g.p.unitMs
}

// anchor records how the monotonic clock maps to the wall clock, from
// now, a reading of the system clock (which carries both), when the two
// have drifted apart by more than anchorSlack. Only when mono.
func (g *Generator) anchor(now time.Time) {
	v := now.UnixNano() - g.p.epochMs*int64(time.Millisecond) - int64(now.Sub(g.start))
	if d := v - g.sinceEpoch.Load(); d > int64(anchorSlack) || d < -int64(anchorSlack) {
		g.sinceEpoch.Store(v)
	}
}

// leaseError explains why the binding's allowed(now) refused. Called with
// mu held.
func (g *Generator) leaseError(now time.Time) error {
	until := g.bind.Load().guard.ValidUntil()
	if until.Unix() <= 0 {
		// A lost lease reads as the epoch; printing 1970 would only confuse.
		return fmt.Errorf("%w: worker ID %d is no longer held by this node; IDs are refused until a new one is acquired",
			idforge.ErrLeaseLost, g.worker)
	}
	return fmt.Errorf("%w: worker ID %d may be used until %s only; the clock reads %s", idforge.ErrLeaseLost,
		g.worker, until.UTC().Format(time.RFC3339Nano), now.UTC().Format(time.RFC3339Nano))
}

// NextN returns n new IDs in increasing order, as NextInto writes them
// into a new slice: it reads the clock once per tick rather than once per
// ID. It returns an error wrapping idforge.ErrInvalidCount when n is
// below 1 or above MaxBatch, and otherwise fails as Next does; on error
// it returns no IDs (the ones issued so far are skipped: gaps are
// allowed). A caller that issues batches again and again pays less with
// NextInto and one slice reused.
func (g *Generator) NextN(ctx context.Context, n int) ([]int64, error) {
	if err := checkBatch(n); err != nil {
		return nil, err
	}
	ids := make([]int64, n)
	if _, err := g.NextInto(ctx, ids); err != nil {
		return nil, err
	}
	return ids, nil
}

// checkBatch refuses a batch of n IDs outside 1 to MaxBatch.
func checkBatch(n int) error {
	if n < 1 || n > MaxBatch {
		return fmt.Errorf("%w: %d IDs asked for, want 1 to %d", idforge.ErrInvalidCount, n, MaxBatch)
	}
	return nil
}

// shortWait is the longest wait done while holding the lock: other
// callers queue behind it (parked, using no CPU) instead of each sleeping
// on its own. Longer waits release the lock so that queued callers can
// give up when their ctx is done.
const shortWait = 3 * time.Millisecond

// fill issues len(out) IDs into out and returns how many it issued. It
// is the slow path: it holds mu while it checks and issues, and is the
// only place a tick is opened.
func (g *Generator) fill(ctx context.Context, out []int64) (int, error) {
	n := 0
	backWaited := false
	g.mu.Lock()
	for n < len(out) {
		if g.closed {
			g.mu.Unlock()
			return n, idforge.ErrClosed
		}
		now := g.clock.Now()
		b := g.bind.Load()
		if !b.allowed(now) {
			err := g.leaseError(now)
			g.mu.Unlock()
			return n, err
		}
		if g.mono {
			g.anchor(now)
		}
		ms := now.UnixMilli() - g.p.epochMs
		tick := floorDiv(ms, g.p.unitMs)
		last, seq := g.last, g.takenLocked(g.seq.Load())-1 // seq: the newest number taken
		ref := max(last, 0)
		// drifting: the clock has not moved back, so a tick ahead of it
		// was reached by Drift (a burst), not by borrowing through a step.
		drifting := g.drift && ms >= g.seenMs
		g.seenMs = max(g.seenMs, ms)
		var wait time.Duration
		if last >= 0 && (tick < ref || drifting && tick == last && seq >= g.maxSeq) {
			if borrowed, ok := g.borrowTick(now, last, seq, drifting); ok {
				// Borrowing ahead: issue at logical time instead.
				tick = borrowed
			} else if drifting && tick < ref && g.p.tickStart(last).Sub(now) <= g.maxBorrow {
				// A burst used the budget up: wait until the clock leaves
				// room for the next tick, as for a used-up tick.
				wait = g.p.tickStart(last+1).Sub(now) - g.maxBorrow
				tick = last
			}
		}
		switch {
		case tick >= g.p.endTick:
			g.mu.Unlock()
			return n, g.expiredErr(now)

		case wait > 0:
			// Drift waits for room (above).

		case tick < ref:
			// The clock is behind the newest issued tick (or the epoch),
			// by more than borrowing may cover.
			wait = g.until(now, ms, ref)
			if backWaited || g.maxBack < 0 || wait > g.maxBack {
				err := g.backwardErr(now, wait, last)
				g.mu.Unlock()
				return n, err
			}
			backWaited = true
			g.backWaits++
			g.logRateLimited(now, slog.LevelWarn, "snowflake: clock moved backwards; waiting for it to catch up", "wait", wait)

		case tick > last || seq < g.maxSeq:
			if tick > g.quiet {
				if err := g.reserveLocked(tick); err != nil {
					g.mu.Unlock()
					return n, err
				}
			}
			k := min(int64(len(out)-n), g.maxSeq+1)
			var first int64
			if tick > last { // open tick, issuing its numbers 0 to k-1
				g.moveLocked(tick, k, &openTick{tick: tick, binding: b})
				g.issued = true
			} else { // more numbers of the open tick, taken as the fast path takes them
				if first, k = g.add(tick, k); k == 0 {
					continue // fast-path calls took the rest meanwhile
				}
			}
			n += g.putRun(out[n:n+int(k)], b.base|tick<<g.timeShift|first<<g.seqShift)
			backWaited = false
			continue

		default:
			// The tick's sequence is used up: wait for the next one.
			wait = g.until(now, ms, tick+1)
		}

		if wait <= shortWait {
			if err := g.sleep(ctx, wait); err != nil {
				g.mu.Unlock()
				return n, err
			}
			continue
		}
		g.mu.Unlock()
		if err := g.sleep(ctx, wait); err != nil {
			return n, err
		}
		g.mu.Lock()
	}
	g.mu.Unlock()
	return n, nil
}

// putRun writes id and the IDs that follow it in its tick (one sequence
// number apart) to dst and returns len(dst). It writes eight a step (one
// bounds check, one loop test for eight stores).
func (g *Generator) putRun(dst []int64, id int64) int {
	step := int64(1) << g.seqShift
	n := len(dst)
	k := 0
	for ; k+8 <= n; k, id = k+8, id+8*step {
		d := dst[k : k+8 : k+8]
		d[0], d[1], d[2], d[3] = id, id+step, id+2*step, id+3*step
		d[4], d[5], d[6], d[7] = id+4*step, id+5*step, id+6*step, id+7*step
	}
	for ; k < n; k, id = k+1, id+step {
		dst[k] = id
	}
	return n
}

// borrowTick returns the tick to issue in when the clock is behind the
// newest issued tick (last, whose newest sequence number is seq) by more
// than MaxBackwardWait, or, drifting, when last is used up: the newest
// tick while it has sequence numbers left, then the next, as long as that
// is at most MaxBorrow ahead of now. Called with mu held.
func (g *Generator) borrowTick(now time.Time, last, seq int64, drifting bool) (int64, bool) {
	if g.maxBorrow <= 0 {
		return 0, false
	}
	tick := last
	if seq >= g.maxSeq {
		tick++
	}
	if g.p.tickStart(tick).Sub(now) > g.maxBorrow || tick >= g.p.endTick {
		return 0, false
	}
	if !drifting && g.p.tickStart(last).Sub(now) > g.maxBack {
		g.logRateLimited(now, slog.LevelWarn, "snowflake: clock moved backwards; borrowing ahead",
			"ahead", g.p.tickStart(tick).Sub(now), "max_borrow", g.maxBorrow)
	}
	return tick, true
}

// until returns how long after now (which is ms milliseconds after the
// epoch) tick starts.
func (g *Generator) until(now time.Time, ms, tick int64) time.Duration {
	const maxMs = int64(1e12) // ~31 years: keeps the Duration from overflowing
	diff := min(tick*g.p.unitMs-ms, maxMs)
	return time.Duration(diff)*time.Millisecond - time.Duration(now.Nanosecond()%int(time.Millisecond))
}

// Refusing returns the error Next would refuse with now, without issuing
// or waiting: the worker ID's lease is lost (idforge.ErrLeaseLost), the
// clock is behind the newest issued tick or an earlier run's fence by
// more than MaxBackwardWait and borrowing cover
// (idforge.ErrClockMovedBackwards), or the layout has run out
// (idforge.ErrLayoutExpired); nil when Next would issue, or wait a moment
// and issue. /readyz answers not ready while it is not nil.
func (g *Generator) Refusing() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.clock.Now()
	if !g.bind.Load().allowed(now) {
		return g.leaseError(now)
	}
	ms := now.UnixMilli() - g.p.epochMs
	tick := floorDiv(ms, g.p.unitMs)
	last := g.last
	if tick < last && last >= 0 {
		if g.drift && ms >= g.seenMs {
			return nil // a burst ran ahead of a clock that never went back: Next waits
		}
		if borrowed, ok := g.borrowTick(now, last, g.takenLocked(g.seq.Load())-1, false); ok {
			tick = borrowed
		}
	}
	switch ref := max(last, 0); {
	case tick >= g.p.endTick:
		return g.expiredErr(now)
	case tick < ref:
		if wait := g.until(now, ms, ref); g.maxBack < 0 || wait > g.maxBack {
			return g.backwardMsg(now, wait, last)
		}
	}
	return nil
}

// backwardErr counts and logs a refusal because the clock is behind the
// newest issued tick by behind, last being the newest tick, and returns its
// error. Called with mu held.
func (g *Generator) backwardErr(now time.Time, behind time.Duration, last int64) error {
	g.backRefusals++
	err := g.backwardMsg(now, behind, last)
	g.logRateLimited(now, slog.LevelError, "snowflake: refusing to issue IDs", "err", err)
	return err
}

// backwardMsg is backwardErr's error.
func (g *Generator) backwardMsg(now time.Time, behind time.Duration, last int64) error {
	waits := "never waits"
	if g.maxBack >= 0 {
		waits = "waits up to " + g.maxBack.String()
	}
	if last < 0 {
		return fmt.Errorf("%w: the clock reads %s, %v before the layout's epoch %s; refusing to issue, %s",
			idforge.ErrClockMovedBackwards, now.UTC().Format(time.RFC3339Nano), behind, g.layout.Epoch.UTC().Format(time.RFC3339Nano), waits)
	}
	what := "last issued"
	if !g.issued {
		what = "time fence of an earlier run at"
	}
	return fmt.Errorf("%w by %v (now %s, %s %s); refusing to issue, %s",
		idforge.ErrClockMovedBackwards, behind, now.UTC().Format(time.RFC3339Nano), what, g.p.tickStart(last).Format(time.RFC3339Nano), waits)
}

// expiredErr is the error of a clock at or after the layout's end.
func (g *Generator) expiredErr(now time.Time) error {
	return fmt.Errorf("%w: the clock reads %s, at or after the layout's end %s", idforge.ErrLayoutExpired,
		now.UTC().Format(time.RFC3339Nano), g.layout.Expires().Format(time.RFC3339))
}

// logRateLimited logs at most once a second (by the generator's clock).
// It is called with mu held.
func (g *Generator) logRateLimited(now time.Time, level slog.Level, msg string, args ...any) {
	if !g.loggedAt.IsZero() && now.Sub(g.loggedAt) < time.Second && now.Sub(g.loggedAt) > -time.Second {
		return
	}
	g.loggedAt = now
	g.log.Log(context.Background(), level, msg, append(args, "worker", g.worker, "datacenter", g.datacenter)...)
}

// sleep waits d on the generator's clock.
func (g *Generator) sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if g.system {
		return preciseSleep(ctx, d)
	}
	g.clock.Sleep(d)
	return ctx.Err()
}

// reserveLocked makes sure the stored fence covers the end of tick before
// an ID of that tick is issued, and starts a background refresh when the
// fence is getting close. It is called with mu held.
func (g *Generator) reserveLocked(tick int64) error {
	if g.fence == nil {
		return nil
	}
	end := (tick + 1) * g.p.unitMs
	if end > g.reservedMs {
		target := end + g.aheadMs
		if err := g.persist(target); err != nil {
			return fmt.Errorf("snowflake: storing the time fence %s: %w", g.msTime(target).Format(time.RFC3339Nano), err)
		}
		g.setReservedLocked(target)
	}
	if !g.refreshing && end > g.reservedMs-g.aheadMs/2 {
		g.refreshing = true
		g.wg.Add(1)
		go g.refresh(end + g.aheadMs)
	}
	return nil
}

// setReservedLocked records that the stored fence covers tick ends up to
// ms and recomputes the ticks that need no fence work.
func (g *Generator) setReservedLocked(ms int64) {
	if ms <= g.reservedMs {
		return
	}
	g.reservedMs = ms
	g.quiet = min(floorDiv(ms-g.aheadMs/2, g.p.unitMs)-1, g.p.endTick-1)
}

// refresh stores the fence target in the background.
func (g *Generator) refresh(target int64) {
	defer g.wg.Done()
	err := g.persist(target)
	g.mu.Lock()
	g.refreshing = false
	if err == nil {
		g.setReservedLocked(target)
	}
	g.mu.Unlock()
	if err != nil {
		g.log.Warn("snowflake: storing the time fence in the background failed; will retry before issuing past it",
			"fence", g.msTime(target).Format(time.RFC3339Nano), "worker", g.worker, "err", err)
	}
}

// persist stores ms (since the epoch) in the fence unless a later time is
// stored already. Stores never run concurrently and never go backwards.
func (g *Generator) persist(ms int64) error {
	g.storeMu.Lock()
	defer g.storeMu.Unlock()
	if ms <= g.storedMs {
		return nil
	}
	if err := g.fence.Store(g.msTime(ms)); err != nil {
		return err
	}
	g.storedMs = ms
	return nil
}

func (g *Generator) msTime(ms int64) time.Time {
	return time.UnixMilli(g.p.epochMs + ms).UTC()
}

// Close stops the generator: later calls to Next and NextN return
// idforge.ErrClosed. With a Fence, Close waits for any background write
// and then stores the start of the newest issued tick, so that a clean
// restart needs no wait. Close is idempotent; only the first call can
// return an error (the Fence's, wrapped).
func (g *Generator) Close() error {
	if !closeonce.Claim(&g.mu, &g.closed) {
		return nil
	}
	g.skipLocked(-1) // the fast path issues no more: the tick is closed
	issued, last := g.issued, g.last
	g.mu.Unlock()
	if g.fence == nil {
		return nil
	}
	g.wg.Wait()
	if !issued {
		return nil
	}
	g.storeMu.Lock()
	defer g.storeMu.Unlock()
	t := g.p.tickStart(last)
	if err := g.fence.Store(t); err != nil {
		return fmt.Errorf("snowflake: storing the time fence %s on close: %w", t.Format(time.RFC3339Nano), err)
	}
	g.storedMs = last * g.p.unitMs
	return nil
}

// floorDiv returns a/b rounded towards minus infinity (b > 0).
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}
