// Package closeonce owns the idempotent-Close idiom: under the owner's
// lock, the first call flips a closed flag and goes on to shut down, and
// every later call returns at once. Keeping it in one place means every
// Close in idforge agrees on which call does the work.
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
