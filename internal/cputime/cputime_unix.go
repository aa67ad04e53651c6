//go:build unix

// Package cputime reads the CPU time the process has used, for
// benchmarks on a shared machine: where other jobs make wall time per
// call swing several times over, CPU time per call moves far less.
package cputime

import (
	"syscall"
	"time"
)

// Process returns the CPU time (user + system) the process has used, or
// -1 where it cannot be read.
func Process() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
