package datadir

import (
	"os"

	"golang.org/x/sys/windows"
)

// errHeld is lockFile's error when another process holds the lock.
var errHeld = windows.ERROR_LOCK_VIOLATION

// lockFile locks one byte of f far beyond its content with LockFileEx,
// exclusively and without waiting, so that the content (the holder's PID)
// stays readable to a process that is refused.
func lockFile(f *os.File) error {
	return windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY,
		0, 1, 0, &windows.Overlapped{OffsetHigh: 0x40000000})
}
