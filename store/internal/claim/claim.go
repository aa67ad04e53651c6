// Package claim owns the rules every database-backed store shares around
// a segment claim: which failures are worth a retry (Transient), how long
// to wait before one (Backoff), the retry loop itself (Segment), which
// errors are the answer about a key (IsVerdict, NotSegmentKey,
// NotMigrated, CheckStep, CheckReturn), and a store's open-or-closed
// state, per-call timeout, error wrapping, Ping and hand-back of a range
// (Life). store/internal/sqlstore and store/mongo use it; store/redis and
// store/memstore its checks and errors.
package claim

import (
	"cmp"
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"strconv"
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

// ErrChanged is what an attempt returns when the stored row or document
// changed between its reads and its write: Segment tries again at once, a
// bounded number of times.
var ErrChanged = errors.New("changed during the claim")

// Retry describes one store's claim retries for Segment.
type Retry struct {
	Life    *Life  // the store's: its names, timeout, log and whether it is closed
	Thing   string // what ErrChanged is about: "row", "document"
	Retries int    // retries after a transient failure
	// Classify is the backend's judge of its driver's errors (see
	// Transient); nil for none.
	Classify func(err error) (transient, known bool)
}

// Segment claims step IDs of key (0: its stored step) with attempt until
// it succeeds, gives a verdict (IsVerdict), fails for a reason no retry
// cures, or r.Retries retries with Backoff are spent, all within the
// store's Timeout (see Life.Context). It returns an error wrapping
// idforge.ErrClosed when the store is closed and one wrapping
// idforge.ErrInvalidArgument for a negative step, before any attempt. A
// claim whose outcome was unknown (a reply lost) and is retried leaves a
// gap, never a value twice.
func Segment(ctx context.Context, r Retry, key string, step int64, attempt func(ctx context.Context, key string, step int64) (idforge.Segment, error)) (idforge.Segment, error) {
	l := r.Life
	if err := cmp.Or(l.CheckOpen(), CheckStep(key, step)); err != nil {
		return idforge.Segment{}, err
	}
	ctx, cancel := l.Context(ctx)
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
			return idforge.Segment{}, fmt.Errorf("%s: %s: %s keeps changing, giving up", l.Backend, what, r.Thing)
		case IsVerdict(err):
			return idforge.Segment{}, err
		}
		if l.Closed() || tries >= r.Retries || !Transient(err, r.Classify) {
			return idforge.Segment{}, l.Wrap(ctx, err, what)
		}
		l.Log.Warn(l.Backend+": claim failed, retrying", "db", l.DB, "key", key, "attempt", tries+1, "err", err)
		if !Backoff(ctx, tries) {
			return idforge.Segment{}, l.Wrap(ctx, err, what)
		}
		tries++
	}
}

// IsVerdict reports whether err is a claim's answer about the key rather
// than a failure to reach the database: the key is unknown or exhausted,
// the store failed over, the request or the stored row is invalid, or the
// database has not been migrated (NotMigrated).
func IsVerdict(err error) bool {
	return errors.Is(err, idforge.ErrUnknownKey) || errors.Is(err, idforge.ErrSpaceExhausted) || errors.Is(err, idforge.ErrStoreFailedOver) ||
		errors.Is(err, idforge.ErrInvalidArgument) || errors.As(err, new(*NotMigrated))
}

// Claimed returns the segment of a claim that took a key's max_id to
// newMax: step IDs, or the key's stored step, rowStep, when step is 0.
func Claimed(newMax, rowStep, step int64) idforge.Segment {
	return idforge.Segment{Start: newMax - cmp.Or(step, rowStep), End: newMax, Step: rowStep}
}

// NotSegmentKey is the error for a claim or hand-back on key when the
// store has no segment key of that name: strategy is the strategy of the
// key that has it, "" when there is none (or it could not be read).
func NotSegmentKey(key string, strategy string) error {
	if strategy == "" {
		return fmt.Errorf("%w: %q", idforge.ErrUnknownKey, key)
	}
	return fmt.Errorf("%w: %q is a %s key, not a segment key", idforge.ErrUnknownKey, key, strategy)
}

// SerialName is how every store names a serial definition in its errors
// and messages: serial "s".
func SerialName(name string) string { return "serial " + strconv.Quote(name) }

// DefinitionName is how every store names an operator's definition in
// its errors and messages: source "s".
func DefinitionName(kind, name string) string { return kind + " " + strconv.Quote(name) }

// NotMigrated is the error for a database that lacks what the store keeps
// its keys in: `idforge migrate` has not run on it. IsVerdict counts it.
type NotMigrated struct {
	Backend, DB string
	Missing     string // "table leaf_alloc", "collection idforge_keys"
	Kind        string // what `idforge migrate` creates: "tables", "collections"
}

// Error says what is missing and to run `idforge migrate`.
func (e *NotMigrated) Error() string {
	return fmt.Sprintf("%s: database %s has no %s: run `idforge migrate` to create idforge's %s", e.Backend, e.DB, e.Missing, e.Kind)
}

// OpenErr is the outcome of opening a store that found err: nil for a
// NotMigrated error when the store opens for `idforge migrate`
// (forMigrate), err otherwise.
func OpenErr(err error, forMigrate bool) error {
	if forMigrate && errors.As(err, new(*NotMigrated)) {
		return nil
	}
	return err
}

// Unclaimable explains why a claim of step (0: the stored step) cannot
// take key, stored with maxID and rowStep: an error wrapping
// idforge.ErrInvalidArgument for a stored step that is not positive, or
// idforge.ErrSpaceExhausted when max_id would pass the largest int64. It
// returns nil when the claim can be made.
func Unclaimable(key string, maxID, rowStep, step int64) error {
	used := cmp.Or(step, rowStep)
	if step == 0 && used <= 0 {
		return fmt.Errorf("%w: key %q: stored step %d is not positive", idforge.ErrInvalidArgument, key, used)
	}
	if maxID > math.MaxInt64-used {
		return fmt.Errorf("%w: key %q at max_id %d cannot grow by %d", idforge.ErrSpaceExhausted, key, maxID, used)
	}
	return nil
}

// CheckStep returns an error wrapping idforge.ErrInvalidArgument for a
// claim of a negative step (0 asks for the stored step).
func CheckStep(key string, step int64) error {
	if step < 0 {
		return fmt.Errorf("%w: key %q: negative step %d", idforge.ErrInvalidArgument, key, step)
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
