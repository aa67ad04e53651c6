//go:build !unix

package snowflake

import "time"

// cpuTime reports no CPU time where getrusage is missing.
func cpuTime() time.Duration { return -1 }
