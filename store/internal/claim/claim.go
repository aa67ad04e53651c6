// Package claim owns the rules every database-backed store shares around
// a segment claim: which failures are worth a retry (Transient), how long
// to wait before one (Backoff), the retry loop itself (Segment), the
// per-call timeout (Context) and how a driver error is reported (Wrap,
// Closed). store/internal/sqlstore and store/mongo use it.
package claim

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net"
	"syscall"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/wait"
)

// retryBackoff is the wait before the first retry of a claim; it doubles
// with each further retry.
const retryBackoff = 50 * time.Millisecond

// Transient reports whether err is a failure that retrying may cure.
// Context errors never are: the caller gave up. classify, the backend's
// (nil for none), judges the errors its driver knows; any other error is
// transient when the connection failed (refused, reset, closed, timed out
// at the network level).
func Transient(err error, classify func(error) (transient, known bool)) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	if classify != nil {
		if transient, known := classify(err); known {
			return transient
		}
	}
	switch {
	case errors.Is(err, driver.ErrBadConn),
		errors.Is(err, io.EOF),
		errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, net.ErrClosed),
		errors.Is(err, syscall.ECONNREFUSED),
		errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.EPIPE):
		return true
	}
	var ne net.Error
	return errors.As(err, &ne)
}

// Backoff waits before retry number attempt+1 (attempt counts from 0):
// retryBackoff doubled per attempt, plus up to half as much again at
// random so that nodes retrying together spread out. It returns false at
// once when ctx would end before the wait does, and false when ctx ends
// during it.
func Backoff(ctx context.Context, attempt int) bool {
	d := retryBackoff << min(attempt, 10)
	d += rand.N(d / 2)
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < d {
		return false
	}
	return wait.For(ctx, d) == nil
}

// Context applies timeout to ctx unless ctx ends earlier; a negative
// timeout means none.
func Context(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	if timeout < 0 {
		return ctx, func() {}
	}
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) <= timeout {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, timeout)
}

// Closed is the error of a call made after Close on the store of backend
// (its messages' prefix: "mysql", "mongodb" …) that uses database db.
func Closed(backend, db string) error {
	return fmt.Errorf("%w: %s store %s", idforge.ErrClosed, backend, db)
}

// Wrap adds what was being done to a driver error. An error caused by
// Close (closed) or by the context ending wraps idforge.ErrClosed or the
// context's error, whatever the driver made of it.
func Wrap(ctx context.Context, err error, closed bool, backend, db, what string) error {
	if closed {
		return fmt.Errorf("%w: %s: %v", Closed(backend, db), what, err)
	}
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		return fmt.Errorf("%s: %s: %w (%v)", backend, what, cerr, err)
	}
	return fmt.Errorf("%s: %s: %w", backend, what, err)
}

// ErrChanged is what an attempt returns when the stored row or document
// changed between its reads and its write: Segment tries again at once, a
// bounded number of times.
var ErrChanged = errors.New("changed during the claim")

// Retry describes one store's claim retries for Segment.
type Retry struct {
	Backend string        // the messages' prefix: "mysql", "mongodb" …
	DB      string        // the database, for logs; no password
	Thing   string        // what ErrChanged is about: "row", "document"
	Retries int           // retries after a transient failure
	Timeout time.Duration // bounds a claim with its retries (see Context)
	Log     *slog.Logger
	// Closed reports whether the store has been closed.
	Closed func() bool
	// Transient reports whether a failure may be cured by a retry.
	Transient func(error) bool
	// Verdict reports whether an error is the attempt's answer about the
	// key, returned as it is.
	Verdict func(error) bool
	// Wrap reports a failure after the last attempt.
	Wrap func(ctx context.Context, err error, what string) error
}

// Segment claims step IDs of key (0: its stored step) with attempt until
// it succeeds, gives a verdict, fails for a reason no retry cures, or
// r.Retries retries with Backoff are spent, all within r.Timeout (see
// Context). It returns an error wrapping idforge.ErrClosed when the store
// is closed and one wrapping idforge.ErrInvalidArgument for a negative
// step, before any attempt. A claim whose outcome was unknown (a reply
// lost) and is retried leaves a gap, never a value twice.
func Segment(ctx context.Context, r Retry, key string, step int64, attempt func(ctx context.Context, key string, step int64) (idforge.Segment, error)) (idforge.Segment, error) {
	if r.Closed() {
		return idforge.Segment{}, Closed(r.Backend, r.DB)
	}
	if step < 0 {
		return idforge.Segment{}, fmt.Errorf("%w: key %q: negative step %d", idforge.ErrInvalidArgument, key, step)
	}
	ctx, cancel := Context(ctx, r.Timeout)
	defer cancel()
	what := fmt.Sprintf("claim segment for key %q", key)
	for tries, changed := 0, 0; ; {
		seg, err := attempt(ctx, key, step)
		switch {
		case err == nil:
			return seg, nil
		case errors.Is(err, ErrChanged):
			if changed++; changed < 3 {
				continue
			}
			return idforge.Segment{}, fmt.Errorf("%s: %s: %s keeps changing, giving up", r.Backend, what, r.Thing)
		case r.Verdict(err):
			return idforge.Segment{}, err
		}
		if r.Closed() || tries >= r.Retries || !r.Transient(err) {
			return idforge.Segment{}, r.Wrap(ctx, err, what)
		}
		r.Log.Warn(r.Backend+": claim failed, retrying", "db", r.DB, "key", key, "attempt", tries+1, "err", err)
		if !Backoff(ctx, tries) {
			return idforge.Segment{}, r.Wrap(ctx, err, what)
		}
		tries++
	}
}

// Unclaimable explains why a claim of step (0: the stored step) cannot
// take key, stored with maxID and rowStep: an error wrapping
// idforge.ErrInvalidArgument for a stored step that is not positive, or
// idforge.ErrSpaceExhausted when max_id would pass the largest int64. It
// returns nil when the claim can be made.
func Unclaimable(key string, maxID, rowStep, step int64) error {
	used := step
	if used == 0 {
		if used = rowStep; used <= 0 {
			return fmt.Errorf("%w: key %q: stored step %d is not positive", idforge.ErrInvalidArgument, key, used)
		}
	}
	if maxID > math.MaxInt64-used {
		return fmt.Errorf("%w: key %q at max_id %d cannot grow by %d", idforge.ErrSpaceExhausted, key, maxID, used)
	}
	return nil
}

// CheckReturn returns an error wrapping idforge.ErrInvalidArgument unless
// [from, to) can be handed back to key (idforge.SegmentReturner): from is
// at least 1 and not past to.
func CheckReturn(key string, from, to int64) error {
	if from > to || from < 1 {
		return fmt.Errorf("%w: key %q: cannot return [%d, %d)", idforge.ErrInvalidArgument, key, from, to)
	}
	return nil
}
