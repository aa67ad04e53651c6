// Package atomicmax owns the lock-free "only ever forward" update that
// high-water marks across idforge share: the largest value a source has
// seen, the newest time a lease was reported at, a lease's validity.
package atomicmax

import "sync/atomic"

// Raise sets v to n if n is larger, and leaves it otherwise, even when
// other goroutines raise v at the same time.
func Raise(v *atomic.Int64, n int64) {
	for {
		old := v.Load()
		if n <= old || v.CompareAndSwap(old, n) {
			return
		}
	}
}
