// Package rotate spreads calls round robin over a fixed set of members
// and steps around the ones that fail, as JD's bitwise load-balancing
// sequence does: a member that errs is set aside for a rescue time, one
// that is used up is set aside for good, and a call that finds every
// member set aside still tries the ones not used up, so that a recovered
// member is found at once. Setting a member aside is logged once and
// counted, and Status reports the members as a composition's are
// (sequence.Status), so that metrics, /readyz and the health endpoints
// raise JD's alarm for a table switched away from.
package rotate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/sequence"
)

// errExhausted marks a member that can never serve again.
type errExhausted struct{ err error }

func (e errExhausted) Error() string { return e.err.Error() }
func (e errExhausted) Unwrap() error { return e.err }

// Exhausted wraps err to say that the member is used up for good (its ID
// space is spent): it is never tried again.
func Exhausted(err error) error { return errExhausted{err} }

const gone = -1 // downUntil of an exhausted member

// errPass marks a member that answered but cannot serve this call.
type errPass struct{ err error }

func (e errPass) Error() string { return e.err.Error() }
func (e errPass) Unwrap() error { return e.err }

// Pass wraps err to say that the member answered but cannot serve this
// one call (it lacks the key asked for): the next member is tried, and
// this one is neither counted as failing nor set aside.
func Pass(err error) error { return errPass{err} }

// Rotor chooses members. It is safe for concurrent use.
type Rotor struct {
	who     string // names the source in logs: "autoinc source"
	next    atomic.Uint64
	members []member
	rescue  time.Duration
}

type member struct {
	downUntil                  atomic.Int64 // unix nanoseconds; 0 up; gone
	calls, failures, ejections atomic.Uint64
	lastErr                    sequence.LastError
}

// New returns a Rotor over n members of the source who names that sets
// a failing one aside for rescue.
func New(who string, n int, rescue time.Duration) *Rotor {
	return &Rotor{who: who, members: make([]member, n), rescue: rescue}
}

// Status reports the members (named by name) as sequence.Status does a
// composition's: each one's state, calls, failures, times set aside and
// latest error, and highest(i) when it is not nil.
func (r *Rotor) Status(kind string, name func(i int) string, highest func(i int) int64) sequence.Status {
	now := time.Now()
	out := make([]sequence.MemberStatus, len(r.members))
	for i := range r.members {
		m := &r.members[i]
		st := sequence.MemberStatus{Index: i, Name: name(i), State: sequence.MemberAdmitted,
			Calls: m.calls.Load(), Failures: m.failures.Load(), Ejections: m.ejections.Load()}
		switch d := m.downUntil.Load(); {
		case d == gone:
			st.State = sequence.MemberExhausted
		case d > now.UnixNano():
			st.State, st.RescueIn = sequence.MemberEjected, time.Unix(0, d).Sub(now)
		}
		st.LastError, st.LastErrorAt = m.lastErr.Get()
		if highest != nil {
			st.Highest = highest(i)
		}
		out[i] = st
	}
	return sequence.FromMembers(kind, out)
}

// Do calls fn with member indexes, starting with the next in turn and
// skipping members set aside, until one call succeeds; then, if all
// failed or were aside, once more with each member aside but not used up.
// A failing member is set aside (for good when its error was made by
// Exhausted). It returns nil after a success, ctx's error when ctx ends,
// and otherwise every member's error, joined.
func (r *Rotor) Do(ctx context.Context, fn func(ctx context.Context, i int) error) error {
	return r.DoFrom(ctx, r.next.Add(1)-1, fn) // the first call starts at member 0
}

// DoFrom is Do starting at member turn mod n, for a caller that keeps
// turns of its own (one per key).
func (r *Rotor) DoFrom(ctx context.Context, turn uint64, fn func(ctx context.Context, i int) error) error {
	n := len(r.members)
	start := int(turn % uint64(n))
	var errs []error
	tried := make([]bool, 0, 8)
	if n <= 8 {
		tried = tried[:n]
	} else {
		tried = make([]bool, n)
	}
	for pass := 0; pass < 2; pass++ {
		now := time.Now().UnixNano()
		for k := 0; k < n; k++ {
			i := (start + k) % n
			m := &r.members[i]
			d := m.downUntil.Load()
			if tried[i] || d == gone || pass == 0 && d > now {
				continue
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			tried[i] = true
			err := fn(ctx, i)
			m.calls.Add(1)
			if err == nil {
				if d != 0 {
					m.downUntil.CompareAndSwap(d, 0)
				}
				return nil
			}
			if ctx.Err() != nil {
				return err
			}
			if errors.As(err, new(errPass)) {
				errs = append(errs, fmt.Errorf("member %d: %w", i, err))
				continue
			}
			m.failures.Add(1)
			m.lastErr.Set(err, time.Now())
			r.setAside(i, d, err)
			errs = append(errs, fmt.Errorf("member %d: %w", i, err))
		}
	}
	if len(errs) == 0 {
		return fmt.Errorf("%w: every member is used up", idforge.ErrSpaceExhausted)
	}
	return errors.Join(errs...)
}

// Aside reports whether member i is set aside now (for its rescue time,
// or for good).
func (r *Rotor) Aside(i int) bool {
	d := r.members[i].downUntil.Load()
	return d == gone || d > time.Now().UnixNano()
}

// Observe records the outcome of a call to member i made outside Do, a
// health check: a failure sets the member aside as in Do, a success
// admits it again.
func (r *Rotor) Observe(i int, err error) {
	m := &r.members[i]
	d := m.downUntil.Load()
	if d == gone {
		return
	}
	if err == nil {
		m.downUntil.CompareAndSwap(d, 0)
		return
	}
	m.failures.Add(1)
	m.lastErr.Set(err, time.Now())
	r.setAside(i, d, err)
}

// setAside sets member i, whose downUntil was d, aside after err: for
// good when err was made by Exhausted, else for the rescue time. A member
// that was serving is counted and logged once, as a composition's
// ejection is.
func (r *Rotor) setAside(i int, d int64, err error) {
	m := &r.members[i]
	var ex errExhausted
	if errors.As(err, &ex) {
		if m.downUntil.Swap(gone) != gone {
			slog.Error(r.who+": member used up; skipped for good", "member", i, "err", err)
		}
		return
	}
	m.downUntil.Store(time.Now().Add(r.rescue).UnixNano())
	if d == 0 || d <= time.Now().UnixNano() {
		m.ejections.Add(1)
		slog.Warn(r.who+": member failed; set aside, the others serve", "member", i, "rescue_after", r.rescue, "err", err)
	}
}

// Next is the Next of a source whose members each issue values (the
// tables of an auto-increment source, Flickr ticket servers): take(ctx, i)
// gets one from member i, through Do. It returns an error wrapping idforge.ErrClosed when
// closed, idforge.ErrSpaceExhausted when every member is used up, and
// otherwise, when no member issues, one wrapping idforge.ErrUnavailable
// with every member's error (so that one wrapping
// idforge.ErrStoreFailedOver keeps its code).
func (r *Rotor) Next(ctx context.Context, closed bool, take func(ctx context.Context, i int) (int64, error)) (int64, error) {
	who := r.who
	if closed {
		return 0, fmt.Errorf("%s: %w", who, idforge.ErrClosed)
	}
	var v int64
	failing := false // a member failed without being used up
	err := r.Do(ctx, func(ctx context.Context, i int) (err error) {
		v, err = take(ctx, i)
		var ex errExhausted
		failing = failing || err != nil && !errors.As(err, &ex)
		return err
	})
	if err != nil {
		if !failing && errors.Is(err, idforge.ErrSpaceExhausted) {
			return 0, fmt.Errorf("%s: %w", who, err)
		}
		return 0, fmt.Errorf("%w: %s: %w", idforge.ErrUnavailable, who, err)
	}
	return v, nil
}
