// Package redis is the Redis backend of the sequence sources and
// per-period counters, using github.com/redis/go-redis/v9.
//
// # Source
//
// A Source issues the values of one counter key with INCR (JD's (京东)
// logistics serial-number platform measured about 60 000 per second from
// one server). Importing this package
// registers the schemes "redis" and "rediss" (TLS) with sequence.Open:
//
//	redis://[user:password@]host:6379/db?key=orders&start=1&create=true
//
//	key     the counter's key, required
//	start   the first value when the key is created (default 1)
//	create  create the key when it is missing (default true); false
//	        makes a missing key an error
//
// Every other parameter is go-redis's own (dial_timeout, read_timeout,
// pool_size, …; see redis.ParseURL), but for two of idforge's:
//
//	min_replicas  replicas that must have each INCR before its value is
//	              handed out (WAIT); default 1 for Sentinel and Cluster
//	              URLs, 0 for a single server
//	wait_timeout  how long to wait for them (default 500ms)
//
// Redis Sentinel and Redis Cluster take the schemes redis+sentinel and
// redis+cluster (rediss+… over TLS), in internal/redisconn's forms:
//
//	redis+sentinel://[:password@]s1:26379,s2:26379/mymaster?db=0&key=orders
//	redis+cluster://[:password@]n1:6379,n2:6379?key=orders
//
// # Fail-over
//
// Redis replicates asynchronously, so a promoted replica may lack the
// latest increments, and plain INCR would hand their values out again.
// With MinReplicas (min_replicas) every INCR and every count is followed
// by WAIT on the same connection, in the same round trip; a value that
// fewer replicas acknowledged within the timeout is not handed out (an
// error wrapping idforge.ErrUnavailable, HTTP 503) and becomes a gap.
// Sentinel and the cluster promote the replica with the most data, so a
// value handed out survives the fail-over. WAIT is not consensus: should
// a replica without the value be promoted anyway, the Source's own
// high-water mark (below) refuses the counter that went back, and
// Backwards counts such refusals.
//
// The key is created once, with SET NX, when the source opens. After that
// it is only ever incremented by a Lua script that refuses to touch a key
// that does not exist: plain INCR would silently re-create an evicted or
// flushed key at 1 and repeat every value. Each Source also remembers the
// largest value it has seen and refuses an answer that is not above it (a
// fail-over to a replica that had not received the latest increments, or
// a restore from an old RDB file). Both cases return an error wrapping
// sequence.ErrCounterLost; an operator then sets the key above every
// value ever issued.
//
// Failures: a client crash loses the value in flight at most. A Redis
// outage fails Next at once (idforge.ErrUnavailable wrapping go-redis's
// error, bounded by ctx and the client's timeouts); nothing is buffered.
// Redis must keep its data: AOF with appendfsync always (or everysec,
// accepting that a crash may lose the last second: those values come
// again to clients that have not seen them), MinReplicas of 1 or more
// when replicas may be promoted, and a maxmemory-policy that does not
// evict the key (noeviction, or volatile-*: the key has no expiry). The
// script answers through GET, so values are exact over the whole int64
// range; past the largest int64 Next returns idforge.ErrSpaceExhausted.
//
// # Counter store
//
// A CounterStore keeps per-period counters (see sequence.Counter): the
// count of each period in <prefix><name>:<stamp>, expiring Keep periods
// after it began, and the counter's mark in <prefix><name>:mark (no
// expiry), both updated by one Lua script per number. Importing this
// package registers "redis" and "rediss" with sequence.OpenCounter:
//
//	redis://host:6379/0?name=order_seq&period=second&cap=16383&prefix=idforge:counter:&keep=3
//
//	prefix  the key prefix (default "idforge:counter:", may be empty)
//	keep    periods a count key outlives its start (default 3)
//
// besides OpenCounter's own parameters (name, period, cap, over_cap, tz,
// dir, ahead), min_replicas and wait_timeout (as for a Source) and
// go-redis's. The keys of one counter must share a hash slot on Redis
// Cluster: on a cluster client the name becomes a hash tag
// (<prefix>{<name>}:<stamp>) unless the prefix holds one ("{serials}:").
// Counts are exact up to 2^53 (Lua's numbers); sequence.MaxCap is that
// bound. A count key that expired while the counter's mark is still in
// its period (the clock went back) is counted on from the mark.
package redis
