package coord

import (
	"fmt"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/dsn"
)

// DefaultMaxDrift is the largest difference from the live peers' average
// clock a node may start with, when its worker URL sets no max_drift.
const DefaultMaxDrift = 5 * time.Second

// MaxDrift reads the URL's max_drift (DefaultMaxDrift when it sets none)
// from q.
func MaxDrift(q *dsn.Query) time.Duration {
	return q.Duration("max_drift", DefaultMaxDrift, time.Nanosecond)
}

// A Report is a live peer's clock as its coordinator holds it: At is the
// peer's clock (unix ms) when it last wrote, Age how long before the read
// that was by the coordinator's clock (ms; 0 where the coordinator keeps
// no clock of the writes).
type Report struct{ At, Age int64 }

// CheckClock is Leaf's start-up check, the one rule of every coordinated
// provider: now, this node's clock, must be within maxDrift of the
// average clock of the live peers (each one's At plus Age). slack is how
// much older than its Age a report may be (a renewal interval, where the
// coordinator keeps no clock of the writes): a peer's clock is then only
// known to be at least its report, so a clock ahead of the average is
// refused only beyond maxDrift+slack, never wrongly. No peers, no check.
// The error wraps idforge.ErrClockMovedBackwards; where names the peers'
// records in it.
func CheckClock(now time.Time, peers []Report, maxDrift, slack time.Duration, where string) error {
	if len(peers) == 0 {
		return nil
	}
	var sum int64
	for _, r := range peers {
		sum += r.At + max(r.Age, 0)
	}
	drift := now.Sub(time.UnixMilli(sum / int64(len(peers))))
	dir, allowed, also := "behind", maxDrift, ""
	if drift > 0 {
		dir, allowed = "ahead of", maxDrift+slack
		if slack > 0 {
			also = fmt.Sprintf(" plus the %s a record may be old", slack)
		}
	}
	if drift.Abs() <= allowed {
		return nil
	}
	return fmt.Errorf("%w: the clock is %s %s the average clock of %d live peers under %s, more than max_drift %s%s; refusing to start until it is corrected",
		idforge.ErrClockMovedBackwards, drift.Abs().Round(time.Millisecond), dir, len(peers), where, maxDrift, also)
}
