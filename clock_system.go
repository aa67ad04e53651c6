//go:build !idforge_testclock

package idforge

import "time"

// wallNow is the operating system's clock. Test builds of the binary
// (build tag idforge_testclock) replace it with one the tests can skew;
// release builds have no such seam.
func wallNow() time.Time { return time.Now() }
