package worker

import "time"

// WithReportInterval reports the target's newest issued time to the lease
// every d instead of every DefaultReportInterval.
func WithReportInterval(d time.Duration) SupervisorOption {
	return func(o *supervisorOptions) { o.report = d }
}
