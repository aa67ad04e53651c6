package idforge

import "time"

// Clock is the source of time for the strategies. It is the one seam tests
// may fake: everything else in idforge runs against real components.
type Clock interface {
	// Now returns the current wall-clock time.
	Now() time.Time
	// Sleep pauses the caller for d.
	Sleep(d time.Duration)
}

// SystemClock is the Clock of the operating system and the default of
// every Clock setting left nil. A program may replace it before it builds
// anything, never while generators run: the idforge binary's test builds
// do, with a clock an end-to-end test can move (internal/testclock).
var SystemClock Clock = systemClock{}

type systemClock struct{}

func (systemClock) Now() time.Time        { return time.Now() }
func (systemClock) Sleep(d time.Duration) { time.Sleep(d) }
