package sequence

import "errors"

// Sentinel errors of the sequence packages. Each error that reports one of
// these conditions also wraps idforge.ErrUnavailable, so that transports
// which know only the root sentinels still answer "try later" (503).
var (
	// ErrCapReached is returned by Counter.Next when the period's cap is
	// reached and the counter is set to refuse (OverCapRefuse), or is set
	// to wait but the caller's context ends before the next period
	// begins. In the latter case the error wraps the context's error too.
	ErrCapReached = errors.New("sequence: the period's cap is reached")

	// ErrCounterLost is returned when a cache-backed counter (a Redis key,
	// a memcached item, an SQL row) is missing or has gone backwards after
	// values were issued from it: it was evicted, flushed, deleted or
	// restored from an old copy. Continuing would issue old values again,
	// so the source refuses until an operator re-creates the counter above
	// every value issued.
	ErrCounterLost = errors.New("sequence: counter lost by its store")
)
