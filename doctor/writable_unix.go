//go:build !windows

package doctor

import "syscall"

// writable reports whether this user may create files in the directory dir.
func writable(dir string) bool { return syscall.Access(dir, 2 /* W_OK */) == nil }
