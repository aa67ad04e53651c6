package claim

import (
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
	return Context(ctx, l.Timeout)
}

// Begin starts a call: CheckOpen's error, or nil, and ctx bounded by the
// store's timeout. The caller defers cancel in every case.
func (l *Life) Begin(ctx context.Context) (context.Context, context.CancelFunc, error) {
	if err := l.CheckOpen(); err != nil {
		return ctx, func() {}, err
	}
	ctx, cancel := l.Context(ctx)
	return ctx, cancel, nil
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
