package snowflake

import (
	"context"
	"runtime"
	"time"

	"github.com/idforge/idforge/internal/wait"
)

// Waiting for the next tick. On Linux (measured on the development
// machine, Go 1.26) time.Sleep of anything below a millisecond takes about
// 1.05 ms, because the runtime's timers wake through epoll with
// millisecond resolution; longer sleeps overshoot by 0.2 to 0.3 ms (p99
// about 1 ms). A 1 ms tick therefore cannot be waited for with time.Sleep
// without losing ticks. A nanosleep system call overshoots by 70 to 100 µs
// (the kernel's 50 µs timer slack plus wake-up). So a wait sleeps with the
// runtime's timers while more than coarseMargin remains, then with
// nanosleep (fineSleep) until spinMargin remains, and spins re-reading the
// clock for the rest: tens of microseconds per tick.
const (
	coarseMargin = 2 * time.Millisecond
	spinMargin   = 100 * time.Microsecond
)

// preciseSleep pauses for d on the system clock, returning early with
// ctx.Err() when ctx is done during the coarse part of the wait.
func preciseSleep(ctx context.Context, d time.Duration) error {
	deadline := time.Now().Add(d)
	if d > coarseMargin+time.Millisecond {
		if err := wait.For(ctx, d-coarseMargin); err != nil {
			return err
		}
	}
	if r := time.Until(deadline); r > spinMargin {
		fineSleep(r - spinMargin)
	}
	for time.Now().Before(deadline) {
		runtime.Gosched()
	}
	return ctx.Err()
}
