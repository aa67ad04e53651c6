//go:build !amd64

package snowflake

// Without a time-stamp counter to read, the fast path reads the monotonic
// clock.

func rdtsc() int64 { return 0 }

const haveTSC = false
