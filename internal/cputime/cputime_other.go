//go:build !unix

// Package cputime reads the CPU time the process has used, for
// benchmarks on a shared machine: where other jobs make wall time per
// call swing several times over, CPU time per call moves far less.
package cputime

import "time"

// Process returns -1: the CPU time is not read on this system.
func Process() time.Duration { return -1 }
