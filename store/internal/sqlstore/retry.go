package sqlstore

import (
	"context"
	"database/sql/driver"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"syscall"
	"time"

	"github.com/idforge/idforge/internal/wait"
)

// retryBackoff is the wait before the first retry of a claim; it doubles
// with each further retry.
const retryBackoff = 50 * time.Millisecond

// Transient reports whether err is a failure that retrying may cure.
// Context errors never are: the caller gave up. classify, the dialect's
// (nil for none), judges the errors its driver knows (see
// Dialect.ClassifyError); any other error is transient when the
// connection failed (refused, reset, closed, timed out at the network
// level).
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

// backoff waits before retry number attempt+1 (attempt counts from 0):
// retryBackoff doubled per attempt, plus up to half as much again at
// random so that nodes retrying together spread out. It returns false at
// once when ctx would end before the wait does, and false when ctx ends
// during it.
func backoff(ctx context.Context, attempt int) bool {
	d := retryBackoff << min(attempt, 10)
	d += rand.N(d / 2)
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < d {
		return false
	}
	return wait.For(ctx, d) == nil
}
