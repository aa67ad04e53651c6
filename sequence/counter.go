package sequence

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/datadir"
	"github.com/idforge/idforge/internal/closeonce"
	"github.com/idforge/idforge/internal/dsn"
)

// OverCap says what Counter.Next does when the period's cap is reached.
type OverCap uint8

// What a Counter does over its cap.
const (
	// OverCapWait (the default) sleeps until the next period begins on the
	// counter's clock and counts there, returning that period. The wait
	// ends early, with an error wrapping ErrCapReached and the context's
	// error, when the caller's context ends; when the context's deadline
	// is before the next period it fails at once.
	OverCapWait OverCap = iota
	// OverCapRefuse returns an error wrapping ErrCapReached (and
	// idforge.ErrUnavailable) at once.
	OverCapRefuse
)

// ParseOverCap returns the OverCap named s ("wait" or "refuse"), or an
// error wrapping idforge.ErrInvalidArgument.
func ParseOverCap(s string) (OverCap, error) {
	switch s {
	case "wait":
		return OverCapWait, nil
	case "refuse":
		return OverCapRefuse, nil
	}
	return 0, fmt.Errorf("%w: over_cap %q (want wait or refuse)", idforge.ErrInvalidArgument, s)
}

// String returns "wait" or "refuse".
func (o OverCap) String() string {
	switch o {
	case OverCapWait:
		return "wait"
	case OverCapRefuse:
		return "refuse"
	}
	return fmt.Sprintf("OverCap(%d)", uint8(o))
}

// MaxCap is the largest cap a Counter accepts: counts travel through
// Redis's Lua numbers, which are exact up to 2^53.
const MaxCap = 1 << 53

// DefaultFileAhead is CounterSettings.FileAhead when left zero.
const DefaultFileAhead = 1000

// Mark is a period and a count in it: the last number a counter issued.
// Marks order by period, then count.
type Mark struct {
	// Stamp is the period's stamp (see Period.Stamp); zero means that
	// nothing was issued yet.
	Stamp int64
	// N is the count in that period.
	N int64
}

// Less reports whether m orders before o.
func (m Mark) Less(o Mark) bool { return m.Stamp < o.Stamp || m.Stamp == o.Stamp && m.N < o.N }

// String returns "stamp/n".
func (m Mark) String() string { return fmt.Sprintf("%d/%d", m.Stamp, m.N) }

// CountRequest asks a CounterStore for the next number of a counter.
type CountRequest struct {
	// Name is the counter's name.
	Name string
	// Period is the counter's period length; Stamp and Floor.Stamp are
	// stamps of it.
	Period Period
	// Stamp is the period to count in: the one containing the caller's
	// time, or the counter's mark if that is later (the clock went back).
	Stamp int64
	// Floor is the last number the counter has issued, or recovered at
	// start; the store must answer above it even if it has lost its own
	// state. Floor.Stamp ≤ Stamp.
	Floor Mark
	// Cap is the largest count a period may reach; 0 means no cap.
	Cap int64
}

// Base is where a store counts r from, given the mark it holds: stamp is
// the period to count in (the later of r.Stamp and the mark, the mark
// lifted to r.Floor first), n the count already issued in it, and full
// reports that n has reached r.Cap.
func (r CountRequest) Base(stored Mark) (stamp, n int64, full bool) {
	m := stored
	if m.Less(r.Floor) {
		m = r.Floor
	}
	stamp = max(r.Stamp, m.Stamp)
	if stamp == m.Stamp {
		n = m.N
	}
	return stamp, n, r.Cap > 0 && n >= r.Cap
}

// CountResult is a CounterStore's answer.
type CountResult struct {
	// Stamp is the period counted in: Stamp of the request, or a later
	// one when the store's own mark is later.
	Stamp int64
	// N is the count, ≥ 1. It is 0 when Full.
	N int64
	// Full reports that period Stamp has reached the cap; nothing was
	// counted.
	Full bool
}

// CounterStore is the shared state behind Counters of one name, on any
// number of nodes. Implementations are safe for concurrent use.
type CounterStore interface {
	// Count atomically does the following for req.Name. Let mark be the
	// larger of the store's mark (the last number counted by anyone) and
	// req.Floor, and target the later of req.Stamp and mark's period.
	// The current count of target is its stored count, but at least
	// mark.N when target is mark's period. If req.Cap > 0 and the count
	// has reached it, Count reports Full for target and changes nothing.
	// Otherwise it stores count+1 as target's count and as the mark, and
	// returns it. So two calls never return the same (Stamp, N), and no
	// call returns a pair at or below the store's mark or req.Floor.
	Count(ctx context.Context, req CountRequest) (CountResult, error)
	// LoadMark returns the store's mark for name (the zero Mark when
	// nothing was counted), preparing whatever the name needs (an SQL row).
	LoadMark(ctx context.Context, name string) (Mark, error)
}

// CounterSettings configures a Counter. Name and Period are required; the
// zero value of every other field means its default.
type CounterSettings struct {
	// Name identifies the counter in its store and its file; it follows
	// idforge.ValidateKeyName.
	Name string
	// Period is how often the count restarts.
	Period Period
	// Location is the time zone of the periods; nil means UTC. In a zone
	// with daylight saving, the hour repeated in autumn counts on in the
	// hour's first occurrence (its stamps come again, so the guard treats
	// it like a clock moved back) and a full period waits for the end of
	// the repetition. Prefer UTC or a zone without daylight saving.
	Location *time.Location
	// Cap is the largest number a period may reach (e.g. 99999 for five
	// digits); 0 means no cap. At most MaxCap.
	Cap int64
	// OverCap says what happens when a period is full; OverCapWait by
	// default.
	OverCap OverCap
	// Dir is a directory for the counter's local mark file,
	// counter-<Name>.mark, created if needed. It must belong to this
	// counter alone (one process, one instance): use the node's data
	// directory. Empty means no file: recovery relies on the store alone.
	Dir string
	// FileAhead is how many numbers one write of the mark file covers
	// (never past the cap): the file is written, and synced, before the
	// first number of a new period is returned and then once per
	// FileAhead numbers. After a crash the counter resumes above the
	// file's bound, so up to FileAhead numbers of that period are skipped;
	// Close writes the exact mark, so a clean restart skips none. 0 means
	// DefaultFileAhead; 1 writes the file for every number.
	FileAhead int64
	// Clock is the clock Next waits on (and reads when called with a zero
	// time); nil means idforge.SystemClock.
	Clock idforge.Clock
}

// Counter is an idforge.PeriodCounter with a clock-rollback guard; see the
// package documentation. It is safe for concurrent use.
type Counter struct {
	st    CounterStore
	s     CounterSettings
	loc   *time.Location
	clock idforge.Clock
	ahead int64

	// mark is the last (period, number) this counter issued or recovered;
	// it only grows (compare-and-set).
	mark atomic.Pointer[Mark]

	file     string // "" without Dir
	fileMu   sync.Mutex
	reserved atomic.Pointer[Mark] // what the file covers

	life   sync.RWMutex // Next holds it shared across a count; Close exclusively
	closed bool
	owned  io.Closer // the store, when the counter opened it

	membersMu sync.Mutex
	members   map[string]*Counter // Member's, closed with the counter
}

var (
	_ idforge.PeriodCounter  = (*Counter)(nil)
	_ idforge.PeriodReporter = (*Counter)(nil)
)

// CountsPer implements idforge.PeriodReporter.
func (c *Counter) CountsPer() (string, *time.Location) { return c.s.Period.String(), c.loc }

// NewCounter validates s and returns a counter over st, which the caller
// keeps owning (Close does not close it). It recovers the counter's mark:
// the later of the mark in s.Dir's file and the store's (st.LoadMark), so
// a counter restarted after a crash continues above the last number any
// instance issued, even if the clock is now behind.
//
// It returns an error wrapping idforge.ErrInvalidArgument for a bad
// setting, or when the recovered mark belongs to another period length
// (the name was used with another Period: choose a new name); other
// errors come from the file or the store.
func NewCounter(ctx context.Context, st CounterStore, s CounterSettings) (*Counter, error) {
	if err := idforge.ValidateKeyName(s.Name); err != nil {
		return nil, fmt.Errorf("counter: %w", err)
	}
	bad := func(format string, args ...any) (*Counter, error) {
		return nil, fmt.Errorf("%w: counter %q: %s", idforge.ErrInvalidArgument, s.Name, fmt.Sprintf(format, args...))
	}
	switch {
	case st == nil:
		return bad("nil store")
	case !s.Period.valid():
		return bad("period %v (want Second, Minute, Hour, Day or Month)", s.Period)
	case s.Cap < 0 || s.Cap > MaxCap:
		return bad("cap %d out of range [0, %d]", s.Cap, int64(MaxCap))
	case s.OverCap > OverCapRefuse:
		return bad("over-cap behaviour %v", s.OverCap)
	case s.FileAhead < 0:
		return bad("file ahead %d is negative", s.FileAhead)
	}
	c := &Counter{st: st, s: s, loc: s.Location, clock: s.Clock, ahead: s.FileAhead}
	c.loc = cmp.Or(c.loc, time.UTC)
	c.clock = cmp.Or(c.clock, idforge.SystemClock)
	c.ahead = cmp.Or(c.ahead, DefaultFileAhead)

	var fileMark Mark
	if s.Dir != "" {
		if err := os.MkdirAll(s.Dir, 0o750); err != nil {
			return nil, fmt.Errorf("counter %q: %w", s.Name, err)
		}
		c.file = filepath.Join(s.Dir, "counter-"+s.Name+".mark")
		m, err := readMarkFile(c.file)
		if err != nil {
			return nil, fmt.Errorf("counter %q: %w", s.Name, err)
		}
		fileMark = m
	}
	storeMark, err := st.LoadMark(ctx, s.Name)
	if err != nil {
		return nil, fmt.Errorf("counter %q: load the store's mark: %w", s.Name, err)
	}
	for _, m := range []struct {
		where string
		m     Mark
	}{{"file " + c.file, fileMark}, {"store", storeMark}} {
		if m.m == (Mark{}) {
			continue
		}
		if p, ok := periodOfStamp(m.m.Stamp); !ok || p != s.Period || m.m.N < 0 {
			return bad("the %s holds mark %v, which is not a mark of period %s: was the name used with another period? Choose a new name",
				m.where, m.m, s.Period)
		}
	}
	mark := fileMark
	if mark.Less(storeMark) {
		mark = storeMark
	}
	c.mark.Store(&mark)
	c.reserved.Store(&fileMark)
	return c, nil
}

// Next returns the next number of the period containing at (a zero at
// means the clock's now) and that period's first instant, in the
// counter's zone. The period returned is later than at's when the
// counter's mark is in a later period (the clock went back, or another
// node's clock is ahead: the counter keeps counting in the later period
// while it has room) or when a full period made it wait. Numbers count
// from 1 and never repeat within a period across every Counter of the
// store; see the package documentation for the guard.
//
// Errors: idforge.ErrClosed after Close; ErrCapReached (with
// idforge.ErrUnavailable) when the period is full and the counter refuses
// or cannot wait within ctx; idforge.ErrUnavailable wrapping the store's
// error when the store fails; idforge.ErrInvalidArgument when at's year
// is outside 1000–9999.
func (c *Counter) Next(ctx context.Context, at time.Time) (int64, time.Time, error) {
	if at.IsZero() {
		at = c.clock.Now()
	}
	for {
		res, err := c.count(ctx, at)
		if err != nil {
			return 0, time.Time{}, err
		}
		if !res.Full {
			return res.N, c.s.Period.timeOf(res.Stamp, c.loc), nil
		}
		next := c.s.Period.nextStart(res.Stamp, c.loc)
		if c.s.OverCap == OverCapRefuse {
			return 0, time.Time{}, fmt.Errorf("%w: %w: counter %q: period %d has reached its cap of %d",
				ErrCapReached, idforge.ErrUnavailable, c.s.Name, res.Stamp, c.s.Cap)
		}
		if err := c.waitUntil(ctx, next); err != nil {
			return 0, time.Time{}, fmt.Errorf("%w: %w: counter %q: period %d has reached its cap of %d; the next begins at %s: %w",
				ErrCapReached, idforge.ErrUnavailable, c.s.Name, res.Stamp, c.s.Cap, next.Format(time.RFC3339), err)
		}
		if now := c.clock.Now(); now.After(next) {
			next = now
		}
		at = next
	}
}

// count asks the store for one number at at's period (or the mark's, if
// later), checks the answer against the mark, covers it by the file and
// raises the mark.
func (c *Counter) count(ctx context.Context, at time.Time) (CountResult, error) {
	c.life.RLock()
	defer c.life.RUnlock()
	if c.closed {
		return CountResult{}, fmt.Errorf("counter %q: %w", c.s.Name, idforge.ErrClosed)
	}
	if y := at.In(c.loc).Year(); y < 1000 || y > 9999 {
		return CountResult{}, fmt.Errorf("%w: counter %q: time %s is outside the years 1000–9999",
			idforge.ErrInvalidArgument, c.s.Name, at.Format(time.RFC3339))
	}
	want := c.s.Period.Stamp(at, c.loc)
	floor := *c.mark.Load()
	if floor.Stamp > want {
		want = floor.Stamp // the clock is behind the last period counted in
	}
	res, err := c.st.Count(ctx, CountRequest{Name: c.s.Name, Period: c.s.Period, Stamp: want, Floor: floor, Cap: c.s.Cap})
	if err != nil {
		return CountResult{}, fmt.Errorf("%w: counter %q: %w", idforge.ErrUnavailable, c.s.Name, err)
	}
	got := Mark{res.Stamp, res.N}
	p, ok := periodOfStamp(res.Stamp)
	switch {
	case !ok || p != c.s.Period || res.Stamp < want:
	case res.Full && res.N == 0:
		return res, nil
	case !res.Full && res.N >= 1 && floor.Less(got) && (c.s.Cap == 0 || res.N <= c.s.Cap):
		if err := c.reserve(got); err != nil {
			return CountResult{}, fmt.Errorf("%w: counter %q: write the mark file: %w", idforge.ErrUnavailable, c.s.Name, err)
		}
		c.raise(got)
		return res, nil
	}
	// Issuing this could repeat a number: the store broke its contract.
	return CountResult{}, fmt.Errorf("%w: %w: counter %q: the store answered %v (full=%v) to a request for period %d above mark %v; refusing",
		ErrCounterLost, idforge.ErrUnavailable, c.s.Name, got, res.Full, want, floor)
}

// raise sets the mark to m if m is later.
func (c *Counter) raise(m Mark) {
	for {
		cur := c.mark.Load()
		if !cur.Less(m) || c.mark.CompareAndSwap(cur, &m) {
			return
		}
	}
}

// reserve makes sure the mark file covers m before m is returned.
func (c *Counter) reserve(m Mark) error {
	if c.file == "" || !c.reserved.Load().Less(m) {
		return nil
	}
	c.fileMu.Lock()
	defer c.fileMu.Unlock()
	if !c.reserved.Load().Less(m) {
		return nil
	}
	r := Mark{m.Stamp, m.N + c.ahead - 1}
	if r.N < m.N { // overflow
		r.N = math.MaxInt64
	}
	if c.s.Cap > 0 && r.N > c.s.Cap {
		r.N = c.s.Cap
	}
	if err := writeMarkFile(c.file, r); err != nil {
		return err
	}
	c.reserved.Store(&r)
	return nil
}

// waitUntil sleeps on the counter's clock until t, in slices so that ctx
// is honoured; it fails at once if ctx's deadline comes before t.
func (c *Counter) waitUntil(ctx context.Context, t time.Time) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		d := t.Sub(c.clock.Now())
		if d <= 0 {
			return nil
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < d {
			return context.DeadlineExceeded
		}
		c.clock.Sleep(min(d, 100*time.Millisecond))
	}
}

// Mark returns the last (period, number) this counter issued, or the mark
// it recovered at start if it has issued nothing since.
func (c *Counter) Mark() Mark { return *c.mark.Load() }

// Member returns the counter of value: named <c's name>-value, it counts
// as c does, in c's store with c's period, time zone, cap and over-cap
// behaviour, but apart from it. It is what a serial template's
// @{seq:NAME,by=PARAM} counts in for each value of PARAM when NAME is a
// per-period counter. Its mark file, when c has one, is in a directory of
// c's name beside c's. Asking twice for a value returns the same counter;
// Close closes the members. Errors are those of NewCounter, and
// idforge.ErrClosed after Close.
func (c *Counter) Member(ctx context.Context, value string) (idforge.PeriodCounter, error) {
	c.membersMu.Lock()
	defer c.membersMu.Unlock()
	name := c.s.Name + "-" + value
	if m, ok := c.members[name]; ok {
		return m, nil
	}
	c.life.RLock()
	defer c.life.RUnlock()
	if c.closed {
		return nil, fmt.Errorf("counter %q: %w", c.s.Name, idforge.ErrClosed)
	}
	s := c.s
	s.Name, s.Location, s.Clock, s.FileAhead = name, c.loc, c.clock, c.ahead
	if s.Dir != "" {
		s.Dir = filepath.Join(s.Dir, c.s.Name)
	}
	m, err := NewCounter(ctx, c.st, s)
	if err != nil {
		return nil, err
	}
	if c.members == nil {
		c.members = map[string]*Counter{}
	}
	c.members[name] = m
	return m, nil
}

// Close stops the counter and its members: Next returns
// idforge.ErrClosed from then on. It writes the exact mark to the file,
// so that a clean restart skips no number, and closes the store if the
// counter opened it (OpenCounter). It is idempotent.
func (c *Counter) Close() error {
	c.membersMu.Lock()
	var errs []error
	for _, m := range c.members {
		errs = append(errs, m.Close())
	}
	c.membersMu.Unlock()
	if !closeonce.First(&c.life, &c.closed) {
		return errors.Join(errs...)
	}
	if c.file != "" {
		m := *c.mark.Load()
		if m != *c.reserved.Load() && m != (Mark{}) {
			if err := writeMarkFile(c.file, m); err != nil {
				errs = append(errs, fmt.Errorf("counter %q: write the mark file: %w", c.s.Name, err))
			}
		}
	}
	if c.owned != nil {
		errs = append(errs, c.owned.Close())
	}
	return errors.Join(errs...)
}

// readMarkFile returns the mark in path, or the zero Mark if there is no
// file. A file that does not parse is an error: without it the counter
// cannot know what it issued.
func readMarkFile(path string) (Mark, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return Mark{}, nil
	}
	if err != nil {
		return Mark{}, err
	}
	f := strings.Fields(string(b))
	if len(f) == 2 {
		st, err1 := strconv.ParseInt(f[0], 10, 64)
		n, err2 := strconv.ParseInt(f[1], 10, 64)
		if err1 == nil && err2 == nil && st > 0 && n >= 0 {
			return Mark{st, n}, nil
		}
	}
	return Mark{}, fmt.Errorf("mark file %s is corrupt (%q): it bounds the numbers this counter issued; restore it, or delete it only if the store's mark is intact", path, b)
}

// writeMarkFile durably replaces path with m.
func writeMarkFile(path string, m Mark) error {
	return datadir.WriteFileAtomic(path, []byte(strconv.FormatInt(m.Stamp, 10)+" "+strconv.FormatInt(m.N, 10)+"\n"))
}

// OpenCounter opens a counter from a URL: the scheme names the store (see
// the package documentation; import sequence/all or the backends you
// use), and the query carries the settings, taken out before the store
// sees the rest:
//
//	name      CounterSettings.Name, required
//	period    second, minute, hour, day or month, required
//	cap       the cap, 0 (none) by default
//	over_cap  wait (default) or refuse
//	tz        an IANA zone name such as Asia/Shanghai; UTC by default
//	dir       the directory of the mark file; none by default
//	ahead     FileAhead
//
// The counter owns the store: Close closes it. Errors wrap
// idforge.ErrInvalidArgument for a bad URL or parameter and never contain
// the password.
func OpenCounter(ctx context.Context, rawURL string) (*Counter, error) {
	u, open, err := counters.Lookup(rawURL)
	if err != nil {
		return nil, err
	}
	q := dsn.NewQuery(u, "counter URL")
	s := CounterSettings{
		Name:      q.String("name", ""),
		Cap:       q.Int("cap", 0, 0, MaxCap),
		Dir:       q.String("dir", ""),
		FileAhead: q.Int("ahead", 0, 0, math.MaxInt64),
	}
	period, over, tz := q.String("period", ""), q.String("over_cap", "wait"), q.String("tz", "UTC")
	if err := q.Err(); err != nil {
		return nil, err
	}
	if s.Period, err = ParsePeriod(period); err != nil {
		return nil, q.Errorf("period %q: want second, minute, hour, day or month", period)
	}
	if s.OverCap, err = ParseOverCap(over); err != nil {
		return nil, q.Errorf("over_cap %q: want wait or refuse", over)
	}
	if s.Location, err = time.LoadLocation(tz); err != nil {
		return nil, q.Errorf("tz %q: %v", tz, err)
	}
	if err := idforge.ValidateKeyName(s.Name); err != nil {
		return nil, q.Errorf("name: %v", err)
	}
	rest := *u
	rest.RawQuery = q.Rest().Encode()
	st, err := open(ctx, &rest, s.Name)
	if err != nil {
		return nil, counters.Wrap(u, err)
	}
	closer, _ := st.(io.Closer)
	c, err := NewCounter(ctx, st, s)
	if err != nil {
		if closer != nil {
			closer.Close()
		}
		return nil, err
	}
	c.owned = closer
	return c, nil
}
