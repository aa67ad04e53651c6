package snowflake

import (
	"math/bits"
	"time"
)

// Reading the clock is most of what Next costs: on a KVM guest (the
// kvm-clock clock source) time.Since costs about 40 ns of CPU and
// time.Now twice that, while the processor's time-stamp counter (RDTSC)
// costs about 13. Where the counter runs at a constant rate (the invariant
// TSC), the fast path of Next therefore reads the counter and converts it
// to wall-clock nanoseconds with a tscAnchor that the slow path keeps in
// step: every tick opening reads the real clock anyway, checks the
// anchor's estimate against it and replaces the anchor when the two differ
// by more than anchorSlack. The estimate only decides whether a call takes
// the fast path (open's tick is the tick it reads); what is issued, and
// that no value is issued twice, does not depend on it (see Generator). A
// wrong estimate costs speed (a call takes the slow path) or stamps IDs
// late by at most the error, which each tick opening corrects.

// tscCalibration is how long after New the counter's rate is first
// measured; the fast path reads the monotonic clock until then.
const tscCalibration = 10 * time.Millisecond

// tscAnchor maps counter readings to nanoseconds since the layout's epoch
// on the wall clock. It is immutable once published.
type tscAnchor struct {
	tsc   int64  // a counter reading
	ns    int64  // the wall clock then, in nanoseconds since the epoch
	mult  uint64 // nanoseconds per count, times 2^32
	limit uint64 // counts past tsc after which the estimate is not used (no overflow, not stale)
}

// nsAt returns the estimate of ns since the epoch at counter reading t,
// and false when t is before the anchor or too far after it.
func (a *tscAnchor) nsAt(t int64) (int64, bool) {
	d := uint64(t - a.tsc)
	if d >= a.limit {
		return 0, false
	}
	return a.ns + int64(d*a.mult>>32), true
}

// anchorTSC re-anchors the counter's estimate when it is off from sinceEpoch
// (ns since the epoch on the wall clock, read at about counter reading t)
// by more than anchorSlack, or close to its limit. elapsed is how long after
// the start reading t was taken, and tsc0 the counter then. Called with mu
// held, only when mono and haveTSC.
func (g *Generator) anchorTSC(t, sinceEpoch int64, elapsed time.Duration) {
	if elapsed < tscCalibration || t <= g.tsc0 {
		return
	}
	if a := g.tscAt.Load(); a != nil {
		if est, ok := a.nsAt(t); ok && uint64(t-a.tsc) < a.limit/2 {
			if d := est - sinceEpoch; d <= int64(anchorSlack) && d >= -int64(anchorSlack) {
				return
			}
		}
	}
	// The rate over everything since New: elapsed ns per (t - tsc0) counts.
	counts := uint64(t - g.tsc0)
	hi, lo := uint64(elapsed)>>32, uint64(elapsed)<<32
	if hi >= counts {
		return // the counter barely moved: the rate would not fit
	}
	mult, _ := bits.Div64(hi, lo, counts)
	if mult == 0 {
		return
	}
	g.tscAt.Store(&tscAnchor{tsc: t, ns: sinceEpoch, mult: mult, limit: min(uint64(1)<<62/mult, uint64(time.Second)<<32/mult)})
}
