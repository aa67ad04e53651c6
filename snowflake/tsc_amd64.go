package snowflake

// rdtsc reads the processor's time-stamp counter.
func rdtsc() int64

// invariantTSC reports whether the time-stamp counter runs at a constant
// rate whatever the processor's power state (CPUID's invariant TSC bit).
func invariantTSC() bool

var haveTSC = invariantTSC()
