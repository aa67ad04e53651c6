package quota

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/auth"
	"github.com/idforge/idforge/plugin"
	"github.com/idforge/idforge/sequence"
)

// Limiter is the plugin that applies the quotas: a plugin.Beforer that
// runs first (Order math.MinInt32 + 1). Set replaces its quotas while it
// serves. It is safe for concurrent use.
type Limiter struct {
	clock  idforge.Clock
	open   func(ctx context.Context, url, name string) (sequence.CounterStore, error)
	mu     sync.Mutex // serializes Set
	rules  atomic.Pointer[[]*rule]
	stores map[string]sequence.CounterStore // by Counter URL, shared by rules
	local  *memCounts
}

var _ plugin.Beforer = (*Limiter)(nil)

// NewLimiter returns a Limiter with no quotas, reading clock (nil:
// idforge.SystemClock).
func NewLimiter(clock idforge.Clock) *Limiter {
	if clock == nil {
		clock = idforge.SystemClock
	}
	return &Limiter{clock: clock, open: sequence.OpenCounterStore, stores: map[string]sequence.CounterStore{}, local: newMemCounts()}
}

// Name is "quota".
func (l *Limiter) Name() string { return "quota" }

// Order runs the limiter before every other plugin.
func (l *Limiter) Order() int { return -1 << 31 }

// Idle reports whether no quota is defined, so that a node without
// quotas issues at the cost of one without plugins (plugin.Idler).
func (l *Limiter) Idle() bool {
	cur := l.rules.Load()
	return cur == nil || len(*cur) == 0
}

// rule is a live quota with its counts on this node.
type rule struct {
	spec   Spec
	period sequence.Period
	store  sequence.CounterStore
	broken error // the counter store failed to open: calls fail until a Set opens it
	mu     sync.Mutex
	held   map[string]*held // by subject
}

// held is the part of a period's quota this node has taken and not used.
type held struct {
	stamp int64
	left  int64
}

// Set makes specs the quotas in force (retired ones are left out),
// opening each Counter store once. Counts of a quota that stays, with the
// same definition, are kept. A spec Validate refuses is an error
// (wrapping idforge.ErrInvalidArgument) and leaves the quotas in force
// unchanged. A quota whose counter store fails to open is put in force
// all the same, failing the calls it applies to (idforge.ErrUnavailable)
// until a later Set opens it: a quota never lapses because its store is
// down. Set then returns the opening errors too.
func (l *Limiter) Set(ctx context.Context, specs []Spec) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	old := map[string]*rule{}
	if cur := l.rules.Load(); cur != nil {
		for _, r := range *cur {
			old[r.spec.Name] = r
		}
	}
	var rules []*rule
	var openErrs []error
	for _, s := range specs {
		if err := s.Validate(); err != nil && !s.Retired {
			return err
		}
	}
	for _, s := range specs {
		if s.Retired {
			continue
		}
		if r, ok := old[s.Name]; ok && sameSpec(r.spec, s) && r.broken == nil {
			rules = append(rules, r)
			continue
		}
		r := &rule{spec: s, held: map[string]*held{}}
		if s.Per != "" {
			r.period, _ = sequence.ParsePeriod(s.Per)
		}
		if s.Limit > 0 {
			if r.store, r.broken = l.storeFor(ctx, s); r.broken != nil {
				openErrs = append(openErrs, r.broken)
			}
		}
		rules = append(rules, r)
	}
	l.rules.Store(&rules)
	return errors.Join(openErrs...)
}

func sameSpec(a, b Spec) bool {
	da, _ := a.Definition()
	db, _ := b.Definition()
	return da.Spec == db.Spec
}

func (l *Limiter) storeFor(ctx context.Context, s Spec) (sequence.CounterStore, error) {
	if s.Counter == "" {
		return l.local, nil
	}
	if st, ok := l.stores[s.Counter]; ok {
		return st, nil
	}
	st, err := l.open(ctx, s.Counter, "quota."+s.Name)
	if err != nil {
		return nil, fmt.Errorf("quota %q: counter: %w", s.Name, err)
	}
	l.stores[s.Counter] = st
	return st, nil
}

// Close closes the counter stores the limiter opened.
func (l *Limiter) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var first error
	for url, st := range l.stores {
		if c, ok := st.(io.Closer); ok {
			if err := c.Close(); err != nil && first == nil {
				first = err
			}
		}
		delete(l.stores, url)
	}
	return first
}

// Quotas returns the quotas in force, in the order Set got them.
func (l *Limiter) Quotas() []Spec {
	cur := l.rules.Load()
	if cur == nil {
		return nil
	}
	out := make([]Spec, len(*cur))
	for i, r := range *cur {
		out[i] = r.spec
	}
	return out
}

// take is a quota taken by a call, to give back if a later quota refuses.
type take struct {
	r       *rule
	subject string
	stamp   int64
	n       int64
}

// Before refuses the call when a quota that applies to it closes its key,
// does not allow its format, or has fewer than c.Count IDs left in the
// period. Quotas are taken in order; if one refuses, those already taken
// for the call are given back, so that a refused call consumes nothing.
// A counter store that cannot be reached fails the call with its error.
func (l *Limiter) Before(ctx context.Context, c plugin.Call) error {
	cur := l.rules.Load()
	if cur == nil || len(*cur) == 0 {
		return nil
	}
	token := ""
	if caller, ok := auth.CallerFrom(ctx); ok {
		token = caller.Name
	}
	var taken []take
	giveBack := func() {
		for _, t := range taken {
			t.r.giveBack(t)
		}
	}
	for _, r := range *cur {
		s := &r.spec
		if !s.matches(c.Key) || len(s.Tokens) > 0 && !slices.Contains(s.Tokens, token) {
			continue
		}
		if s.Closed {
			giveBack()
			return fmt.Errorf("quota %s: key %q is closed", s.Name, c.Key)
		}
		if len(s.Formats) > 0 {
			if f := formatName(c.Format); !slices.Contains(s.Formats, f) {
				giveBack()
				return fmt.Errorf("quota %s: format %q is not allowed for key %q (allowed: %v)", s.Name, f, c.Key, s.Formats)
			}
		}
		if s.Limit == 0 {
			continue
		}
		subject := c.Key
		if len(s.Tokens) > 0 {
			subject += "|" + token
		}
		t, err := r.take(ctx, l.clock.Now(), subject, int64(c.Count))
		if err != nil {
			giveBack()
			return err
		}
		taken = append(taken, t)
	}
	return nil
}

// formatName is the name a format spec is allowed under (see Formats).
func formatName(spec string) string {
	if spec == "" {
		return "default"
	}
	name := spec
	if i := strings.IndexAny(name, ":+"); i >= 0 {
		name = name[:i]
	}
	return name
}

// counterName is the name of the shared count of subject under quota.
func (r *rule) counterName(subject string) string {
	name := "quota." + r.spec.Name + "." + subject
	if idforge.ValidateKeyName(name) == nil {
		return name
	}
	sum := sha256.Sum256([]byte(subject))
	return "quota." + r.spec.Name + "." + hex.EncodeToString(sum[:12])
}

// take takes n IDs of the subject's quota for the period containing now,
// taking leases from the store until this node holds enough.
func (r *rule) take(ctx context.Context, now time.Time, subject string, n int64) (take, error) {
	s := &r.spec
	if r.broken != nil {
		return take{}, fmt.Errorf("%w: %v", idforge.ErrUnavailable, r.broken)
	}
	stamp := r.period.Stamp(now, time.UTC)
	r.mu.Lock()
	defer r.mu.Unlock()
	h := r.held[subject]
	if h == nil {
		h = &held{}
		r.held[subject] = h
	}
	if h.stamp < stamp {
		*h = held{stamp: stamp}
	}
	lease := s.Lease()
	leases := (s.Limit + lease - 1) / lease
	for h.left < n {
		if n > s.Limit {
			return take{}, r.refusal(now, subject, n, h.left, true)
		}
		res, err := r.store.Count(ctx, sequence.CountRequest{Name: r.counterName(subject), Period: r.period, Stamp: h.stamp, Cap: leases})
		if err != nil {
			return take{}, fmt.Errorf("quota %s: counting: %w", s.Name, err)
		}
		if res.Stamp > h.stamp {
			// Another node counts in a later period already (its clock
			// is ahead): count there, which is the stricter.
			*h = held{stamp: res.Stamp}
		}
		if res.Full {
			return take{}, r.refusal(now, subject, n, h.left, false)
		}
		h.left += min(lease, s.Limit-(res.N-1)*lease)
	}
	h.left -= n
	return take{r: r, subject: subject, stamp: h.stamp, n: n}, nil
}

// giveBack returns what take took, if the period has not moved on.
func (r *rule) giveBack(t take) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if h := r.held[t.subject]; h != nil && h.stamp == t.stamp {
		h.left += t.n
	}
}

func (r *rule) refusal(now time.Time, subject string, n, left int64, never bool) error {
	s := &r.spec
	if never {
		return fmt.Errorf("quota %s: %d IDs asked for %s, more than its limit of %d per %s", s.Name, n, subject, s.Limit, s.Per)
	}
	start := r.period.Start(now, time.UTC)
	reset := r.period.Start(start.Add(r.period.Nominal()*11/10), time.UTC)
	return fmt.Errorf("quota %s: %d IDs per %s for %s used up (%d asked, %d left on this node); it resets at %s (in %v)",
		s.Name, s.Limit, s.Per, subject, n, left, reset.Format(time.RFC3339), reset.Sub(now).Round(time.Second))
}

// memCounts is a CounterStore in this process's memory: the counts of
// quotas without a shared Counter.
type memCounts struct {
	mu    sync.Mutex
	marks map[string]sequence.Mark
}

func newMemCounts() *memCounts { return &memCounts{marks: map[string]sequence.Mark{}} }

func (m *memCounts) Count(_ context.Context, req sequence.CountRequest) (sequence.CountResult, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	stamp, n, full := req.Base(m.marks[req.Name])
	if full {
		return sequence.CountResult{Stamp: stamp, Full: true}, nil
	}
	m.marks[req.Name] = sequence.Mark{Stamp: stamp, N: n + 1}
	return sequence.CountResult{Stamp: stamp, N: n + 1}, nil
}

func (m *memCounts) LoadMark(_ context.Context, name string) (sequence.Mark, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.marks[name], nil
}
