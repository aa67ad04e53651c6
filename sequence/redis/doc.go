// Package redis is the Redis backend of the sequence sources and
// per-period counters, through internal/redisconn and go-redis.
//
// # Source
//
// A Source issues the values of one counter key. The key is created once,
// with SET NX, when the source opens (unless create=false); after that a
// Lua script increments it only if it exists, so an evicted or flushed key
// is reported rather than re-created at 1, and each Source refuses an
// answer not above the largest value it has seen (a fail-over to a
// replica without the latest increments, an old RDB file). Both fail with
// sequence.ErrCounterLost; an operator then sets the key above every value
// issued. With MinReplicas every increment is followed by WAIT on the same
// connection: a value fewer replicas acknowledged within the timeout is
// not handed out (idforge.ErrUnavailable, a gap), so a value handed out
// survives a fail-over to the replica with the most data; Backwards counts
// the refusals WAIT could not prevent. A Redis outage fails Next at once
// with idforge.ErrUnavailable; nothing is buffered. Values are exact over
// the whole int64 range; past it Next returns idforge.ErrSpaceExhausted.
//
// Importing the package registers "redis" and "rediss" (TLS), and the
// Sentinel and Cluster forms of internal/redisconn, with sequence.Open:
//
//	redis://[user:password@]host:6379/db?key=orders&start=1&create=true
//	redis+sentinel://[:password@]s1:26379,s2:26379/mymaster?db=0&key=orders
//	redis+cluster://[:password@]n1:6379,n2:6379?key=orders
//
// key is required. A missing key is created at open so that its first
// value is start (default 1), or is an error with create=false.
// min_replicas is how many replicas must have each write before its value
// is handed out (default 1 for Sentinel and Cluster, 0 for a single
// server), wait_timeout how long to wait for them (default 500ms). Every
// other parameter is go-redis's (see redis.ParseURL).
//
// # Counter store
//
// A CounterStore keeps per-period counters (see sequence.Counter): the
// count of each period in <prefix><name>:<stamp>, expiring Keep periods
// after it began, and the counter's mark in <prefix><name>:mark, without
// expiry, both updated by one Lua script per number; a count key that
// expired while the mark is still in its period is counted on from the
// mark. On a cluster the name becomes a hash tag (<prefix>{<name>}:<stamp>)
// unless the prefix holds one. Counts are exact up to sequence.MaxCap
// (2^53, Lua's numbers). Importing the package registers the same schemes
// with sequence.OpenCounter:
//
//	redis://host:6379/0?name=order_seq&period=second&cap=16383&prefix=idforge:counter:&keep=3
//
// prefix (default "idforge:counter:", may be empty) and keep (default 3)
// besides OpenCounter's own parameters, min_replicas, wait_timeout and
// go-redis's.
package redis
