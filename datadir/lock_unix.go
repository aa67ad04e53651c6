//go:build !windows

package datadir

import (
	"os"
	"syscall"
)

// errHeld is lockFile's error when another process holds the lock.
var errHeld = syscall.EWOULDBLOCK

// lockFile takes an exclusive flock(2) on f without waiting.
func lockFile(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}
