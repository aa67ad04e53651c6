package testsvc

import (
	"syscall"
	"testing"
	"time"

	"github.com/idforge/idforge/internal/cacheline"
)

// CPUTime returns the CPU time (user + system) the process has used, or
// -1 where it cannot be read: benchmarks on a shared machine report it
// beside wall time, which other jobs make swing several times over.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Apart reports an error unless the field named field, at offset off in
// its struct, has at least a cache line (cacheline.Size bytes) before it,
// and the field named next, at offset nextOff, starts at least a cache
// line after it.
func Apart(t testing.TB, field string, off uintptr, next string, nextOff uintptr) {
	t.Helper()
	if off < cacheline.Size || nextOff < off+cacheline.Size {
		t.Errorf("%s at offset %d, %s at %d: %s needs %d bytes of padding before it and %d from it to %s",
			field, off, next, nextOff, field, cacheline.Size, cacheline.Size, next)
	}
}
