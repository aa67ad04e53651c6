// Package closeonce owns the idempotent-Close idiom: under the owner's
// lock, the first call flips a closed flag and goes on to shut down, and
// every later call returns at once. Keeping it in one place means every
// Close in idforge agrees on which call does the work; Adopt and Owned,
// which closes the client an opener made from a URL.
package closeonce

import (
	"errors"
	"io"
	"sync"
	"sync/atomic"
)

// Claim locks mu and reports whether this call is the first to close: it
// sets *closed and returns true with mu still held, so the caller can do
// the rest of its shutdown under the same lock and then unlock. A later
// call finds *closed set, unlocks mu and returns false.
func Claim(mu sync.Locker, closed *bool) bool {
	mu.Lock()
	if *closed {
		mu.Unlock()
		return false
	}
	*closed = true
	return true
}

// First is Claim for a Close with nothing else to do under the lock: it
// reports whether this call is the first to close, and returns with mu
// unlocked either way.
func First(mu sync.Locker, closed *bool) bool {
	if !Claim(mu, closed) {
		return false
	}
	mu.Unlock()
	return true
}

// CloseAll is the lock-free flavour for an owner whose Close only closes
// what it owns: the first call sets closed and closes every one of cs,
// joining their errors; later calls return nil at once.
func CloseAll[C io.Closer](closed *atomic.Bool, cs []C) error {
	if closed.Swap(true) {
		return nil
	}
	var errs []error
	for _, c := range cs {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}

// Owned is what a source, store or provider keeps of the client its
// opener made for it from a URL: Close closes that client, once. It
// holds none, and Close does nothing, for a client the caller gave.
type Owned struct {
	client io.Closer
	closed atomic.Bool
}

// Close closes the owned client on the first call; later calls, and a
// value that owns nothing, return nil.
func (o *Owned) Close() error {
	if o.client == nil || o.closed.Swap(true) {
		return nil
	}
	return o.client.Close()
}

// Adopt finishes an opener that made client (from a URL) and built on it
// a value that may own it, err the build's error: when err is nil, the
// value's Owned, which owner returns, takes client, to close it on the
// value's Close; otherwise Adopt closes client, which nothing else will,
// and returns err.
func Adopt(err error, client io.Closer, owner func() *Owned) error {
	if err != nil {
		client.Close()
		return err
	}
	owner().client = client
	return nil
}

// Func is a func as an io.Closer, for a client whose shutdown is not a
// Close method.
type Func func() error

// Close calls f.
func (f Func) Close() error { return f() }
