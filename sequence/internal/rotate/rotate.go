// Package rotate spreads calls round robin over a fixed set of members
// and steps around the ones that fail, as JD's bitwise load-balancing
// sequence does: a member that errs is set aside for a rescue time, one
// that is used up is set aside for good, and a call that finds every
// member set aside still tries the ones not used up, so that a recovered
// member is found at once.
package rotate

import (
	"context"
	"errors"
	"fmt"
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

// Rotor chooses members. It is safe for concurrent use.
type Rotor struct {
	next      atomic.Uint64
	downUntil []atomic.Int64 // unix nanoseconds; 0 up; gone
	rescue    time.Duration
}

// New returns a Rotor over n members that sets a failing one aside for
// rescue.
func New(n int, rescue time.Duration) *Rotor {
	return &Rotor{downUntil: make([]atomic.Int64, n), rescue: rescue}
}

// Len returns the number of members.
func (r *Rotor) Len() int { return len(r.downUntil) }

// State returns member i's state at now, as sequence.MemberStatus.State
// words it: admitted, ejected (set aside until the time returned) or
// exhausted.
func (r *Rotor) State(i int, now time.Time) (string, time.Time) {
	switch d := r.downUntil[i].Load(); {
	case d == gone:
		return sequence.MemberExhausted, time.Time{}
	case d > now.UnixNano():
		return sequence.MemberEjected, time.Unix(0, d)
	}
	return sequence.MemberAdmitted, time.Time{}
}

// Do calls fn with member indexes, starting with the next in turn and
// skipping members set aside, until one call succeeds; then, if all
// failed or were aside, once more with each member aside but not used up.
// A failing member is set aside (for good when its error was made by
// Exhausted). It returns nil after a success, ctx's error when ctx ends,
// and otherwise every member's error, joined.
func (r *Rotor) Do(ctx context.Context, fn func(ctx context.Context, i int) error) error {
	n := len(r.downUntil)
	start := int(r.next.Add(1) % uint64(n))
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
			d := r.downUntil[i].Load()
			if tried[i] || d == gone || pass == 0 && d > now {
				continue
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			tried[i] = true
			err := fn(ctx, i)
			if err == nil {
				if d != 0 {
					r.downUntil[i].CompareAndSwap(d, 0)
				}
				return nil
			}
			if ctx.Err() != nil {
				return err
			}
			var ex errExhausted
			if errors.As(err, &ex) {
				r.downUntil[i].Store(gone)
			} else {
				r.downUntil[i].Store(time.Now().Add(r.rescue).UnixNano())
			}
			errs = append(errs, fmt.Errorf("member %d: %w", i, err))
		}
	}
	if len(errs) == 0 {
		return fmt.Errorf("%w: every member is used up", idforge.ErrSpaceExhausted)
	}
	return errors.Join(errs...)
}

// Next is the Next of a source whose members each issue values (the
// tables of an auto-increment source, Flickr ticket servers): take(ctx, i)
// gets one from member i, through Do. who names the source in errors
// ("autoinc source"). It returns an error wrapping idforge.ErrClosed when
// closed, idforge.ErrSpaceExhausted when every member is used up, and
// otherwise, when no member issues, one wrapping idforge.ErrUnavailable
// with every member's error (so that one wrapping
// idforge.ErrStoreFailedOver keeps its code).
func (r *Rotor) Next(ctx context.Context, who string, closed bool, take func(ctx context.Context, i int) (int64, error)) (int64, error) {
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
