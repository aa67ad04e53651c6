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
	// MaxBackwardWait) for the clock to pass the record. 0 means
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
	MaxBorrow time.Duration
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
// Everything a Generator has issued is summed up in one word, state:
// tick<<seqBits | seq, the tick and sequence number of the newest ID issued
// (or reserved: a skipped tick has seq = maxSeq), -1 before the first.
// Every ID is a value of state passed over by an atomic compare-and-swap
// that moved it strictly upwards, from w to w' > w: the swap issues the
// values w+1 … w' (or, when it opens a tick, the new tick's numbers up to
// w'), with the datacenter and worker put in. state never goes down and
// the values of two successful swaps lie in disjoint ranges, so no value
// is issued twice and the IDs increase in the order the swaps happened
// (within one swap, in the order written).
//
// Two paths move state:
//
//   - The fast path (take, no lock: Next, and the start of a NextInto or
//     NextN batch) only ever swaps w for w+k, 1 ≤ k ≤ maxSeq − seq(w),
//     when the tick of w is the tick the clock reads now and w's sequence
//     is below maxSeq: k more numbers in a tick that is already open,
//     never past its last one, so never into the next tick's bits.
//   - Everything else holds mu: opening a tick (the first ID of a tick,
//     after checking the lease, the layout's end, the clock rollback
//     policy and the fence), the rest of a batch its open tick cannot
//     hold, and closing a tick (setting seq to maxSeq) when the meaning of
//     later IDs changes (Rebind, Close).
//
// So every rare check runs where a tick is opened, under mu, and the fast
// path cannot issue in a tick that was not opened that way: a backward
// clock reads an older tick than state's, a tick past the fence or the
// layout's end is newer than state's, and a closed tick has no sequence
// number left. A fast path that read state before a Rebind or Close closed
// the tick fails its swap, because state moved; one that read state after
// also reads the new binding (worker ID and lease), stored before. The
// lease alone is asked on every call, since it can end at any instant; a
// batch taken in one swap is issued at the instant its clock was read.
type Generator struct {
	// state is the word described above, alone on its cache line: every
	// caller swaps it.
	state atomic.Int64
	_     [56]byte

	// bind is the worker ID's part of every ID and its lease, replaced
	// (under mu) by Rebind.
	bind atomic.Pointer[binding]
	// sinceEpoch is what to add to time.Since(start) to get nanoseconds
	// since the layout's epoch on the wall clock, when mono (the
	// operating system's clock): the fast path reads only the cheap
	// monotonic clock; every opening of a tick re-reads the wall clock and
	// re-anchors it when the two drift apart (an NTP step).
	sinceEpoch atomic.Int64
	// tscAt, when set, maps the time-stamp counter to the same
	// nanoseconds, cheaper still (see tsc.go).
	tscAt atomic.Pointer[tscAnchor]

	// Fixed after New; read by the fast path.
	mono      bool
	useTSC    bool      // mono, and the counter runs at a constant rate
	start     time.Time // a reading of the system clock with its monotonic part
	tsc0      int64     // the counter at start
	unitNs    int64
	seqBits   uint
	timeShift uint
	seqShift  uint
	maxSeq    int64

	mu      sync.Mutex
	quiet   int64 // ticks up to this one need no fence work
	closed  bool
	issued  bool  // an ID was issued, so state's tick is this generator's
	counted int64 // IDs issued up to the state value runBase
	runBase int64 // state after the last change made under mu; every +1 since is an ID

	backWaits    int64 // times the clock was behind and Next waited for it
	backRefusals int64 // times the clock was behind and Next refused

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
//   - idforge.ErrInvalidArgument when FenceAhead is negative;
//   - idforge.ErrClockMovedBackwards when the Fence holds a time more than
//     FenceAhead + MaxBackwardWait ahead of the clock;
//   - the Fence's own error when Load fails.
//
// When the Fence holds a time at most FenceAhead + MaxBackwardWait ahead
// of the clock (as after a crash), New sleeps until the clock passes it.
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
		runBase:    -1,
		layout:     l,
		p:          p,
		unitNs:     p.unitMs * int64(time.Millisecond),
		seqBits:    p.seqBits,
		timeShift:  p.timeShift,
		seqShift:   p.seqShift,
		maxSeq:     maxOf(p.seqBits),
		clock:      s.Clock,
		log:        s.Logger,
		maxBack:    s.MaxBackwardWait,
		worker:     s.Worker,
		datacenter: s.Datacenter,
		maxBorrow:  s.MaxBorrow,
		fence:      s.Fence,
		quiet:      p.endTick - 1,
	}
	g.state.Store(-1)
	g.clock = cmp.Or(g.clock, idforge.SystemClock)
	g.system = g.clock == idforge.SystemClock
	g.mono = g.clock == osClock
	g.useTSC = g.mono && haveTSC
	g.log = cmp.Or(g.log, slog.Default())
	g.maxBack = cmp.Or(g.maxBack, DefaultMaxBackwardWait)
	ahead := s.FenceAhead
	switch {
	case ahead < 0:
		return nil, fmt.Errorf("%w: FenceAhead %v is negative", idforge.ErrInvalidArgument, ahead)
	case ahead == 0:
		ahead = DefaultFenceAhead
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
		g.start, g.tsc0 = now, rdtsc()
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
	allowed := ahead + max(g.maxBack, 0)
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

// skipLocked closes state's tick (no more IDs in it) and raises state to
// the end of tick when that is later, so that the next ID is in a later
// tick. tick -1 only closes the current tick. Called with mu held (or
// from New).
func (g *Generator) skipLocked(tick int64) {
	tick = min(tick, g.p.endTick-1) // past the layout's end: the next ID finds it expired
	for {
		w := g.state.Load()
		nw := w | g.maxSeq
		if tick >= 0 {
			nw = max(nw, tick<<g.seqBits|g.maxSeq)
		}
		if g.state.CompareAndSwap(w, nw) {
			g.counted += w - g.runBase
			g.runBase = nw
			return
		}
	}
}

// last returns the tick and sequence number of state: the newest ID
// issued or skipped (tick -1 when none).
func (g *Generator) last() (tick, seq int64) {
	w := g.state.Load()
	return w >> g.seqBits, w & g.maxSeq
}

// LastIssued returns the end of the newest tick an ID was issued in (the
// time a later holder of the worker ID must stay after), zero when none.
func (g *Generator) LastIssued() time.Time {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.issued {
		return time.Time{}
	}
	last, _ := g.last()
	return g.p.tickStart(last + 1)
}

// Layout returns the generator's layout.
func (g *Generator) Layout() Layout {
	l := g.layout
	l.Fields = slices.Clone(l.Fields)
	return l
}

// Issued returns how many IDs the generator has issued.
func (g *Generator) Issued() int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.counted + g.state.Load() - g.runBase
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
// 1) more sequence numbers of the open tick the clock reads, in one
// compare-and-swap and without the lock (see Generator for why that is
// safe), and returns the first ID and how many it took, 0 when the slow
// path must run: the tick the clock reads is not state's, or its sequence
// is used up. The IDs taken are id, id+step, … with step
// 1<<seqShift. A failed swap means another caller took a number first:
// it tries again with the new state.
func (g *Generator) take(n int64) (id, k int64) {
	// The clock is read first, so that as little as possible runs between
	// loading state and swapping it: with two cores on one generator,
	// every instruction in that window is a chance for the other core to
	// move state first and fail this swap.
	b := g.bind.Load()
	var tick int64
	if g.mono && b.guard == nil {
		// The operating system's clock and no lease to compare with
		// the wall clock: read the time-stamp counter (see tsc.go)
		// or else the monotonic clock only (half the cost of
		// time.Now), both anchored to the wall clock by tick openings.
		ns, ok := int64(0), false
		if a := g.tscAt.Load(); a != nil {
			ns, ok = a.nsAt(rdtsc())
		}
		if !ok {
			ns = int64(time.Since(g.start)) + g.sinceEpoch.Load()
		}
		switch {
		case ns < 0:
			tick = -1
		case g.unitNs == int64(time.Millisecond): // a division by a constant: no divide instruction
			tick = int64(uint64(ns) / uint64(time.Millisecond))
		default:
			tick = ns / g.unitNs
		}
	} else {
		tick = g.clockTick(b)
	}
	// tick is -1 when no ID may be issued now; state's tick is then -1
	// (nothing issued) or its sequence is used up. (The shift counts are
	// below 64; &63 tells the compiler so.)
	w := g.state.Load()
	if g.bind.Load() != b { // read after state (see Generator): a Rebind came between
		return 0, 0
	}
	for range 64 {
		seq := w & g.maxSeq
		if w>>(g.seqBits&63) != tick || seq == g.maxSeq {
			return 0, 0
		}
		k = min(n, g.maxSeq-seq)
		if g.state.CompareAndSwap(w, w+k) {
			return b.base | tick<<(g.timeShift&63) | (seq+1)<<(g.seqShift&63), k
		}
		// Another caller took numbers first. Try again on the state it
		// left, at the instant already read (this call's, so the IDs are
		// still of their tick): reading the clock again would widen the
		// window in which the next caller moves state first, which with
		// two cores on one generator made most swaps fail. A new binding
		// means a Rebind, which the slow path handles.
		w = g.state.Load()
		if g.bind.Load() != b {
			return 0, 0
		}
	}
	return 0, 0
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
		var tsc int64
		if g.useTSC {
			tsc = rdtsc()
		}
		b := g.bind.Load()
		if !b.allowed(now) {
			err := g.leaseError(now)
			g.mu.Unlock()
			return n, err
		}
		if g.mono {
			g.anchor(now)
		}
		if g.useTSC {
			g.anchorTSC(tsc, now.UnixNano()-g.p.epochMs*int64(time.Millisecond), now.Sub(g.start))
		}
		ms := now.UnixMilli() - g.p.epochMs
		tick := floorDiv(ms, g.p.unitMs)
		w := g.state.Load()
		last, seq := w>>g.seqBits, w&g.maxSeq
		ref := max(last, 0)
		var wait time.Duration
		if tick < ref && last >= 0 {
			if borrowed, ok := g.borrowTick(now, last, seq); ok {
				// Borrowing ahead: issue at logical time instead.
				tick = borrowed
			}
		}
		switch {
		case tick >= g.p.endTick:
			g.mu.Unlock()
			return n, fmt.Errorf("%w: the clock reads %s, at or after the layout's end %s", idforge.ErrLayoutExpired,
				now.UTC().Format(time.RFC3339Nano), g.layout.Expires().Format(time.RFC3339))

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
			var k, nw int64
			if tick > last { // open tick, issuing its numbers 0 to k-1
				k = min(int64(len(out)-n), g.maxSeq+1)
				seq, nw = -1, tick<<g.seqBits|(k-1)
			} else { // numbers seq+1 to seq+k of the open tick
				k = min(int64(len(out)-n), g.maxSeq-seq)
				nw = w + k
			}
			if !g.state.CompareAndSwap(w, nw) {
				continue // a fast-path Next took a number meanwhile
			}
			if tick > last {
				g.counted += w - g.runBase + k
				g.runBase = nw
				g.issued = true
			}
			n += g.putRun(out[n:n+int(k)], b.base|tick<<g.timeShift|(seq+1)<<g.seqShift)
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
// than MaxBackwardWait: the newest tick while it has sequence numbers
// left, then the next, as long as that is at most MaxBorrow ahead of now.
// Called with mu held.
func (g *Generator) borrowTick(now time.Time, last, seq int64) (int64, bool) {
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
	if g.p.tickStart(last).Sub(now) > g.maxBack {
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

// backwardErr counts and logs a refusal because the clock is behind the
// newest issued tick by behind, last being state's tick, and returns its
// error. Called with mu held.
func (g *Generator) backwardErr(now time.Time, behind time.Duration, last int64) error {
	g.backRefusals++
	waits := "never waits"
	if g.maxBack >= 0 {
		waits = "waits up to " + g.maxBack.String()
	}
	var err error
	if last < 0 {
		err = fmt.Errorf("%w: the clock reads %s, %v before the layout's epoch %s; refusing to issue, %s",
			idforge.ErrClockMovedBackwards, now.UTC().Format(time.RFC3339Nano), behind, g.layout.Epoch.UTC().Format(time.RFC3339Nano), waits)
	} else {
		lastTime := g.p.tickStart(last)
		what := "last issued"
		if !g.issued {
			what = "time fence of an earlier run at"
		}
		err = fmt.Errorf("%w by %v (now %s, %s %s); refusing to issue, %s",
			idforge.ErrClockMovedBackwards, behind, now.UTC().Format(time.RFC3339Nano), what, lastTime.Format(time.RFC3339Nano), waits)
	}
	g.logRateLimited(now, slog.LevelError, "snowflake: refusing to issue IDs", "err", err)
	return err
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
	issued := g.issued
	last, _ := g.last()
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
