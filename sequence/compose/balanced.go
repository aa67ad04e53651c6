package compose

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/bits"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/cacheline"
	"github.com/idforge/idforge/internal/closeonce"
	"github.com/idforge/idforge/internal/dsn"
	"github.com/idforge/idforge/sequence"
)

// Defaults of BalancedOptions. The first four are those of the
// BitwiseLoadBalanceSequenceGen of JD's (京东) logistics serial-number
// platform; see the package documentation.
const (
	// DefaultRescueAfter is how long an ejected source stays out: "默认为5分钟"
	// (5 minutes) in JD's description. Its sample configuration uses
	// onErrorRescueThresholdInSeconds = 2000.
	DefaultRescueAfter = 5 * time.Minute
	// DefaultSlowThreshold is JD's timeoutThresholdInMilliseconds.
	DefaultSlowThreshold = 200 * time.Millisecond
	// DefaultSlowCount is JD's timeoutEventCountThreshold.
	DefaultSlowCount = 3
	// DefaultSlowWindow is JD's timeoutTimeThresholdInSeconds.
	DefaultSlowWindow = 60 * time.Second
)

// MaxSources is the largest number of sources a Balanced combines (10
// index bits), as for sequence/autoinc's tables.
const MaxSources = 1024

// BalancedOptions tune a Balanced. The zero value of every field selects
// the default documented on it.
type BalancedOptions struct {
	// RescueAfter is how long a source stays ejected after an error or
	// after too many slow calls; then it is admitted again. Default
	// DefaultRescueAfter (5 minutes). Sources that recover quickly (a
	// Redis restart) are better served by seconds.
	RescueAfter time.Duration
	// SlowThreshold: a successful call that takes longer is a slow call.
	// Its value is still used. Default DefaultSlowThreshold (200 ms).
	SlowThreshold time.Duration
	// SlowCount slow calls of one source within SlowWindow eject it.
	// Default DefaultSlowCount (3).
	SlowCount int
	// SlowWindow is the sliding window in which slow calls are counted.
	// Default DefaultSlowWindow (60 s).
	SlowWindow time.Duration
	// CallTimeout, when positive, bounds each call of a source, on top
	// of the caller's context: a call that runs out of it counts as an
	// error of the source (which is ejected) and the next source is
	// tried. Zero (the default; JD's design has no such setting) leaves the
	// bound to the caller's context and the source's own timeouts.
	CallTimeout time.Duration
	// Names label the sources in Stats, logs and errors, one per source
	// (default "source <index>"; OpenBalanced uses the URLs without
	// passwords).
	Names []string
	// Logger receives ejections, re-admissions and exhausted sources.
	// Default slog.Default().
	Logger *slog.Logger
}

func (o BalancedOptions) withDefaults(n int) (BalancedOptions, error) {
	if o.RescueAfter < 0 || o.SlowThreshold < 0 || o.SlowCount < 0 || o.SlowWindow < 0 || o.CallTimeout < 0 {
		return o, fmt.Errorf("%w: compose: balanced: negative option (rescue %v, slow threshold %v, slow count %d, slow window %v, call timeout %v)",
			idforge.ErrInvalidArgument, o.RescueAfter, o.SlowThreshold, o.SlowCount, o.SlowWindow, o.CallTimeout)
	}
	if o.Names != nil && len(o.Names) != n {
		return o, fmt.Errorf("%w: compose: balanced: %d names for %d sources", idforge.ErrInvalidArgument, len(o.Names), n)
	}
	o.RescueAfter = cmp.Or(o.RescueAfter, DefaultRescueAfter)
	o.SlowThreshold = cmp.Or(o.SlowThreshold, DefaultSlowThreshold)
	o.SlowCount = cmp.Or(o.SlowCount, DefaultSlowCount)
	o.SlowWindow = cmp.Or(o.SlowWindow, DefaultSlowWindow)
	o.Logger = cmp.Or(o.Logger, slog.Default())
	return o, nil
}

// SourceState is the state of one source of a Balanced.
type SourceState int

// The states of a source.
const (
	// Admitted: the source takes part in the round robin.
	Admitted SourceState = iota
	// Ejected: the source failed or was too often slow; it is left out
	// until SourceStats.EjectedUntil.
	Ejected
	// Exhausted: the source's values no longer fit (or were not
	// positive); it is left out for good.
	Exhausted
)

// String returns the state as sequence.MemberStatus.State words it:
// "admitted", "ejected" or "exhausted".
func (s SourceState) String() string {
	switch s {
	case Admitted:
		return sequence.MemberAdmitted
	case Ejected:
		return sequence.MemberEjected
	case Exhausted:
		return sequence.MemberExhausted
	}
	return fmt.Sprintf("SourceState(%d)", int(s))
}

// SourceStats describes one source of a Balanced, for metrics and
// operators. Counters run from the Balanced's creation.
type SourceStats struct {
	// Index is the source's index: the low bits of every ID it supplies.
	Index int
	// Name is the source's label (BalancedOptions.Names).
	Name string
	// State is the source's state now. A source whose ejection has run
	// out is reported admitted even before a call takes it back.
	State SourceState
	// EjectedUntil is when an ejected source is admitted again; zero
	// otherwise.
	EjectedUntil time.Time
	// Calls counts calls of the source, successful or not.
	Calls uint64
	// Errors counts failed calls, including values out of range.
	Errors uint64
	// SlowCalls counts successful calls slower than SlowThreshold.
	SlowCalls uint64
	// Ejections counts how often the source was ejected.
	Ejections uint64
	// LastError is the reason of the latest ejection or exhaustion,
	// empty if there was none; LastErrorAt is when it happened.
	LastError   string
	LastErrorAt time.Time
}

// State encoding of member.state: admitted, ejected until a time on the
// Balanced's monotonic clock (> 0), or exhausted.
const (
	stateAdmitted  = 0
	stateExhausted = -1
)

// member is one source and its health. The counters are touched by every
// caller; the padding keeps members off each other's cache lines.
type member struct {
	state     atomic.Int64
	calls     atomic.Uint64
	errs      atomic.Uint64
	slow      atomic.Uint64
	ejections atomic.Uint64

	gen  idforge.Generator
	name string

	mu       sync.Mutex
	slowAt   []int64 // ring of the latest slow calls' completion times
	slowPos  int     // next slot of slowAt to write
	slowN    int     // slots of slowAt in use
	reason   string  // why the source was last ejected or exhausted
	reasonAt int64   // when, on the Balanced's monotonic clock

	_ [cacheline.Size]byte
}

// Balanced spreads calls round robin over 2^n sources and issues
// v << n | i for the value v of source i (the bitwise load balancing of
// JD's logistics serial-number platform). A source that fails, or is
// too often slow, is ejected for a while; one whose values no longer fit
// is skipped for good. IDs are unique; they are not ordered. It is safe
// for concurrent use.
type Balanced struct {
	members  []*member
	bits     uint
	maxValue int64 // largest source value that still fits: MaxInt64 >> bits
	opts     BalancedOptions
	epoch    time.Time // zero of the monotonic clock (now)
	owned    []io.Closer

	rr atomic.Uint64
	// live lists the admitted sources; rebuilt on every change of state.
	live atomic.Pointer[[]int]
	// rescueAt is the earliest time an ejected source is due back
	// (MaxInt64 when none is ejected).
	rescueAt atomic.Int64
	mu       sync.Mutex // serialises rebuilds of live
	closed   atomic.Bool
}

var (
	_ sequence.Source         = (*Balanced)(nil)
	_ sequence.StatusReporter = (*Balanced)(nil)
)

// NewBalanced returns a Balanced over sources; source i gets index i.
// The caller keeps owning the sources: Close does not close them.
//
// It returns an error wrapping idforge.ErrInvalidArgument when the number
// of sources is not a power of two from 1 to MaxSources, a source is nil,
// an option is negative or Names does not have one name per source.
func NewBalanced(sources []idforge.Generator, opts BalancedOptions) (*Balanced, error) {
	n := len(sources)
	if n < 1 || n > MaxSources || n&(n-1) != 0 {
		return nil, fmt.Errorf("%w: compose: balanced: %d sources; want a power of two from 1 to %d", idforge.ErrInvalidArgument, n, MaxSources)
	}
	opts, err := opts.withDefaults(n)
	if err != nil {
		return nil, err
	}
	b := &Balanced{
		bits:  uint(bits.TrailingZeros(uint(n))),
		opts:  opts,
		epoch: time.Now(),
	}
	b.maxValue = math.MaxInt64 >> b.bits
	live := make([]int, n)
	for i, g := range sources {
		if g == nil {
			return nil, fmt.Errorf("%w: compose: balanced: source %d is nil", idforge.ErrInvalidArgument, i)
		}
		name := fmt.Sprintf("source %d", i)
		if opts.Names != nil {
			name = opts.Names[i]
		}
		b.members = append(b.members, &member{gen: g, name: name, slowAt: make([]int64, opts.SlowCount)})
		live[i] = i
	}
	b.live.Store(&live)
	b.rescueAt.Store(math.MaxInt64)
	return b, nil
}

// OpenBalanced opens each URL with sequence.Open (import
// github.com/idforge/idforge/sequence/all, or the backends used, to
// register their schemes) and returns a Balanced over them, source i being
// urls[i]. The Balanced owns the sources: its Close closes them. When
// opts.Names is nil the sources are named by their URLs, without
// passwords.
//
// Every node that issues from the same counters must list them in the
// same order: an index must always belong to the same counter (see the
// package documentation). It returns the errors of NewBalanced and of
// sequence.Open, having closed the sources it opened.
func OpenBalanced(ctx context.Context, urls []string, opts BalancedOptions) (*Balanced, error) {
	n := len(urls)
	if n < 1 || n > MaxSources || n&(n-1) != 0 {
		return nil, fmt.Errorf("%w: compose: balanced: %d source URLs; want a power of two from 1 to %d", idforge.ErrInvalidArgument, n, MaxSources)
	}
	srcs := make([]idforge.Generator, 0, n)
	owned := make([]io.Closer, 0, n)
	closeAll := func() {
		for _, c := range owned {
			c.Close()
		}
	}
	var names []string
	for i, raw := range urls {
		s, err := sequence.Open(ctx, raw)
		if err != nil {
			closeAll()
			return nil, fmt.Errorf("compose: balanced: source %d: %w", i, err)
		}
		srcs = append(srcs, s)
		owned = append(owned, s)
		if u, err := dsn.Parse(raw, "source URL"); err == nil {
			names = append(names, dsn.Redacted(u))
		} else {
			names = append(names, fmt.Sprintf("source %d", i))
		}
	}
	if opts.Names == nil {
		opts.Names = names
	}
	b, err := NewBalanced(srcs, opts)
	if err != nil {
		closeAll()
		return nil, err
	}
	b.owned = owned
	return b, nil
}

// Bits returns n, the number of low bits that hold the source index.
func (b *Balanced) Bits() uint { return b.bits }

// Split returns the source value and the source index an ID was made of.
func (b *Balanced) Split(id int64) (v int64, index int) {
	return id >> b.bits, int(id & (1<<b.bits - 1))
}

// now reads the Balanced's monotonic clock, in nanoseconds from its
// creation.
func (b *Balanced) now() int64 { return int64(time.Since(b.epoch)) }

// Next takes a value v from the next admitted source i in turn and
// returns v << n | i. When that source fails (or its value does not fit),
// the next admitted source is tried, each at most once, while ctx lasts;
// the failing source is ejected (for good if it is exhausted). A
// successful call slower than SlowThreshold counts towards the source's
// slow-call ejection but its value is used.
//
// It returns an error wrapping idforge.ErrUnavailable that names every
// source's state when no source is admitted or all the admitted ones
// failed (wrapping idforge.ErrSpaceExhausted instead when every source is
// exhausted), the source's error (wrapping ctx's) when ctx ends, and
// idforge.ErrClosed after Close.
func (b *Balanced) Next(ctx context.Context) (int64, error) {
	if b.closed.Load() {
		return 0, fmt.Errorf("compose: balanced: %w", idforge.ErrClosed)
	}
	now := b.now()
	if now >= b.rescueAt.Load() {
		b.rebuild(now, true)
	}
	live := *b.live.Load()
	if len(live) == 0 {
		return 0, b.unavailable()
	}
	// The first attempt goes to the next admitted source in turn: a
	// source ejected is skipped without loading the one after it twice.
	i := live[(b.rr.Add(1)-1)%uint64(len(live))]
	if v, err, ok := b.try(ctx, i, now); ok {
		return v, err
	}
	return b.retry(ctx, i)
}

// try calls source i once. It returns ok when the caller is answered: a
// value, or an error because ctx ended. Otherwise the source failed or
// was not admitted, and the next one should be tried.
func (b *Balanced) try(ctx context.Context, i int, t0 int64) (v int64, err error, ok bool) {
	m := b.members[i]
	if m.state.Load() != stateAdmitted {
		return 0, nil, false
	}
	cctx := ctx
	if b.opts.CallTimeout > 0 {
		var cancel context.CancelFunc
		cctx, cancel = context.WithTimeout(ctx, b.opts.CallTimeout)
		defer cancel()
	}
	v, err = m.gen.Next(cctx)
	t1 := b.now()
	m.calls.Add(1)
	if err != nil {
		if ctx.Err() != nil {
			// The caller gave up; the source is not to blame.
			return 0, fmt.Errorf("compose: balanced: %s: %w", m.name, err), true
		}
		m.errs.Add(1)
		if errors.Is(err, idforge.ErrSpaceExhausted) {
			b.exhaust(i, err.Error())
		} else {
			b.eject(i, t1, "error: "+err.Error())
		}
		return 0, nil, false
	}
	if v < 1 || v > b.maxValue {
		m.errs.Add(1)
		b.exhaust(i, fmt.Sprintf("value %d outside [1, %d], the values that fit in %d bits above the %d index bits", v, b.maxValue, 63-b.bits, b.bits))
		return 0, nil, false
	}
	if t1-t0 > int64(b.opts.SlowThreshold) {
		b.noteSlow(i, t1, time.Duration(t1-t0))
	}
	return v<<b.bits | int64(i), nil, true
}

// retry tries the other admitted sources after source first failed, each
// at most once.
func (b *Balanced) retry(ctx context.Context, first int) (int64, error) {
	n := len(b.members)
	for k := 1; k < n; k++ {
		if err := ctx.Err(); err != nil {
			return 0, fmt.Errorf("compose: balanced: %w", err)
		}
		i := (first + k) & (n - 1)
		if v, err, ok := b.try(ctx, i, b.now()); ok {
			return v, err
		}
	}
	return 0, b.unavailable()
}

// noteSlow records a slow call of source i that ended at t and ejects the
// source when it makes SlowCount slow calls within SlowWindow.
func (b *Balanced) noteSlow(i int, t int64, took time.Duration) {
	m := b.members[i]
	m.slow.Add(1)
	m.mu.Lock()
	m.slowAt[m.slowPos] = t
	m.slowPos = (m.slowPos + 1) % len(m.slowAt)
	if m.slowN < len(m.slowAt) {
		m.slowN++
	}
	// With the ring full, the slot to write next holds the oldest of the
	// last SlowCount slow calls.
	trip := m.slowN == len(m.slowAt) && t-m.slowAt[m.slowPos] <= int64(b.opts.SlowWindow)
	if trip {
		m.slowN = 0
	}
	m.mu.Unlock()
	if trip {
		b.eject(i, t, fmt.Sprintf("%d calls slower than %v within %v (the last took %v)",
			b.opts.SlowCount, b.opts.SlowThreshold, b.opts.SlowWindow, took.Round(time.Millisecond)))
	}
}

// eject leaves source i out until RescueAfter from t, unless it is
// already out.
func (b *Balanced) eject(i int, t int64, reason string) {
	m := b.members[i]
	until := t + int64(b.opts.RescueAfter)
	if until <= 0 { // never: t ≥ 0 and RescueAfter > 0; keeps the encoding safe
		until = 1
	}
	if !m.state.CompareAndSwap(stateAdmitted, until) {
		return
	}
	m.ejections.Add(1)
	m.mu.Lock()
	m.reason, m.reasonAt = reason, t
	m.mu.Unlock()
	b.opts.Logger.Warn("sequence source ejected", "index", i, "source", m.name,
		"rescue_after", b.opts.RescueAfter, "reason", reason)
	b.rebuild(b.now(), false)
}

// exhaust leaves source i out for good.
func (b *Balanced) exhaust(i int, reason string) {
	m := b.members[i]
	if m.state.Swap(stateExhausted) == stateExhausted {
		return
	}
	m.mu.Lock()
	m.reason, m.reasonAt = reason, b.now()
	m.mu.Unlock()
	b.opts.Logger.Error("sequence source exhausted; skipped for good", "index", i, "source", m.name, "reason", reason)
	b.rebuild(b.now(), false)
}

// rebuild admits the ejected sources that are due back and publishes the
// list of admitted ones. On the hot path (try) it gives way to a rebuild
// already under way.
func (b *Balanced) rebuild(now int64, try bool) {
	if try {
		if !b.mu.TryLock() {
			return
		}
	} else {
		b.mu.Lock()
	}
	defer b.mu.Unlock()
	live := make([]int, 0, len(b.members))
	next := int64(math.MaxInt64)
	for i, m := range b.members {
		st := m.state.Load()
		if st > 0 && st <= now && m.state.CompareAndSwap(st, stateAdmitted) {
			m.mu.Lock()
			m.slowN = 0
			m.mu.Unlock()
			b.opts.Logger.Info("sequence source admitted again", "index", i, "source", m.name)
			st = stateAdmitted
		}
		switch {
		case st == stateAdmitted:
			live = append(live, i)
		case st > 0:
			next = min(next, st)
		}
	}
	b.live.Store(&live)
	b.rescueAt.Store(next)
}

// unavailable returns the error for a call no source could answer.
func (b *Balanced) unavailable() error {
	var sb strings.Builder
	exhausted := 0
	for _, st := range b.Stats() {
		if sb.Len() > 0 {
			sb.WriteString("; ")
		}
		fmt.Fprintf(&sb, "%d (%s): %s", st.Index, st.Name, st.State)
		switch st.State {
		case Ejected:
			fmt.Fprintf(&sb, " until %s", st.EjectedUntil.Format(time.RFC3339Nano))
		case Exhausted:
			exhausted++
		}
		if st.LastError != "" {
			fmt.Fprintf(&sb, ", after %s", st.LastError)
		}
	}
	if exhausted == len(b.members) {
		return fmt.Errorf("%w: compose: balanced: every source is exhausted: %s", idforge.ErrSpaceExhausted, sb.String())
	}
	return fmt.Errorf("%w: compose: balanced: no source can issue: %s", idforge.ErrUnavailable, sb.String())
}

// Stats returns the state and counters of every source, by index.
func (b *Balanced) Stats() []SourceStats {
	now := b.now()
	out := make([]SourceStats, len(b.members))
	for i, m := range b.members {
		st := SourceStats{
			Index:     i,
			Name:      m.name,
			Calls:     m.calls.Load(),
			Errors:    m.errs.Load(),
			SlowCalls: m.slow.Load(),
			Ejections: m.ejections.Load(),
		}
		switch s := m.state.Load(); {
		case s == stateExhausted:
			st.State = Exhausted
		case s > now:
			st.State = Ejected
			st.EjectedUntil = b.epoch.Add(time.Duration(s))
		default:
			st.State = Admitted
		}
		m.mu.Lock()
		st.LastError = m.reason
		if m.reason != "" {
			st.LastErrorAt = b.epoch.Add(time.Duration(m.reasonAt))
		}
		m.mu.Unlock()
		out[i] = st
	}
	return out
}

// Status reports the Balanced for operators (sequence.StatusReporter):
// Down when no source is admitted, Degraded when some source is ejected
// or exhausted, Up otherwise; each member with its state, the rescue
// time left, its counters and its latest ejection's reason and time.
func (b *Balanced) Status() sequence.Status {
	now := time.Now()
	stats := b.Stats()
	members := make([]sequence.MemberStatus, len(stats))
	for i, s := range stats {
		members[i] = sequence.MemberStatus{Index: s.Index, Name: s.Name, State: s.State.String(),
			Calls: s.Calls, Failures: s.Errors, SlowCalls: s.SlowCalls, Ejections: s.Ejections,
			LastError: s.LastError, LastErrorAt: s.LastErrorAt}
		if s.State == Ejected {
			members[i].RescueIn = max(s.EjectedUntil.Sub(now), 0)
		}
	}
	return sequence.FromMembers("balanced", members)
}

// Close makes Next fail with idforge.ErrClosed and closes the sources
// OpenBalanced opened; those given to NewBalanced stay open. It is
// idempotent.
func (b *Balanced) Close() error {
	return closeonce.CloseAll(&b.closed, b.owned)
}
