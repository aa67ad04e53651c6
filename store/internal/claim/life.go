package claim

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idforge/idforge"
)

// Life is a database-backed store's open-or-closed state and what its
// calls and messages share: a call after Close fails with
// idforge.ErrClosed, each call is bounded by the store's timeout, Close
// runs once, and a driver error says what was being done. A store keeps
// one as a named field (not embedded: its methods are not the store's).
type Life struct {
	Backend string        // the messages' prefix: "mysql", "mongodb" …
	DB      string        // the database, for messages; no password
	Timeout time.Duration // bounds each call (see Context); negative: none
	Log     *slog.Logger
	// Gone, when set, reports a driver error that means the store was
	// closed, such as a call racing Close.
	Gone func(error) bool

	closed    atomic.Bool
	closeOnce sync.Once
	closeErr  error
}

// Closed reports whether Close has been called.
func (l *Life) Closed() bool { return l.closed.Load() }

// CheckOpen returns an error wrapping idforge.ErrClosed after Close.
func (l *Life) CheckOpen() error {
	if l.closed.Load() {
		return l.closedErr()
	}
	return nil
}

func (l *Life) closedErr() error {
	return fmt.Errorf("%w: %s store %s", idforge.ErrClosed, l.Backend, l.DB)
}

// Context applies the store's timeout to ctx unless ctx ends earlier.
func (l *Life) Context(ctx context.Context) (context.Context, context.CancelFunc) {
	if dl, ok := ctx.Deadline(); l.Timeout < 0 || ok && time.Until(dl) <= l.Timeout {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, l.Timeout)
}

// Begin starts a call: CheckOpen's error, or nil, and ctx bounded by the
// store's timeout. The caller defers cancel in every case.
func (l *Life) Begin(ctx context.Context) (context.Context, context.CancelFunc, error) {
	ctx, cancel := l.Context(ctx)
	return ctx, cancel, l.CheckOpen()
}

// Ping is a store's Ping: CheckOpen's error, or, within the store's
// timeout, ready's (the store has its tables), or ping's, the server's
// answer, wrapped.
func (l *Life) Ping(ctx context.Context, ready, ping func(context.Context) error) error {
	ctx, cancel, err := l.Begin(ctx)
	defer cancel()
	if err == nil {
		err = ready(ctx)
	}
	if err == nil {
		if err = ping(ctx); err != nil {
			return l.Wrap(ctx, err, "ping")
		}
	}
	return err
}

// Close marks the store closed, then releases its connections with
// release, once: every call returns the first one's result, and later
// calls on the store fail with idforge.ErrClosed.
func (l *Life) Close(release func() error) error {
	l.closeOnce.Do(func() {
		l.closed.Store(true)
		if err := release(); err != nil {
			l.closeErr = fmt.Errorf("%s: close %s: %w", l.Backend, l.DB, err)
		}
		l.Log.Debug(l.Backend+" store closed", "db", l.DB)
	})
	return l.closeErr
}

// Wrap adds what was being done to a driver error. An error caused by
// Close (or one Gone recognises) or by the context ending wraps
// idforge.ErrClosed or the context's error, whatever the driver made of
// it.
func (l *Life) Wrap(ctx context.Context, err error, what string) error {
	if l.closed.Load() || l.Gone != nil && l.Gone(err) {
		return fmt.Errorf("%w: %s: %v", l.closedErr(), what, err)
	}
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		return fmt.Errorf("%s: %s: %w (%v)", l.Backend, what, cerr, err)
	}
	return fmt.Errorf("%s: %s: %w", l.Backend, what, err)
}

// Return is a store's ReturnSegment (idforge.SegmentReturner): it sets
// key's max_id back to from if, and only if, it is still to, and reports
// whether it did; from == to succeeds without a change when max_id is to.
// After the checks (ErrClosed after Close; ErrInvalidArgument when from >
// to or from < 1) and within the store's Timeout, ready checks that the
// store has its tables, set makes the compare-and-set, reporting whether
// it matched a segment key, and, when it did not, exists tells a key that
// has moved on (false, nil) from an unknown one (ErrUnknownKey). The
// errors of set and exists are wrapped (Life.Wrap), not retried: a lost
// hand-back only leaves a gap.
func (l *Life) Return(ctx context.Context, key string, from, to int64, ready func(context.Context) error, set, exists func(context.Context) (bool, error)) (bool, error) {
	if err := cmp.Or(l.CheckOpen(), CheckReturn(key, from, to)); err != nil {
		return false, err
	}
	ctx, cancel := l.Context(ctx)
	defer cancel()
	if err := ready(ctx); err != nil {
		return false, err
	}
	what := fmt.Sprintf("return segment [%d, %d) of key %q", from, to, key)
	matched, err := set(ctx)
	switch {
	case err != nil:
		return false, l.Wrap(ctx, err, what)
	case matched:
		return true, nil
	}
	has, err := exists(ctx)
	if err != nil {
		return false, l.Wrap(ctx, err, what)
	}
	if !has {
		return false, NotSegmentKey(key, "")
	}
	return false, nil
}
