// Package redis hands out snowflake worker IDs held in Redis.
//
// Every worker ID a node holds is one key whose value is the node's owner
// string (worker.Options.Owner, "host:port") and whose expiry is the TTL;
// the node renews the expiry in the background (worker.Renewal) and stops
// issuing before Redis could let the key lapse. A second key per ID keeps
// the newest time any holder issued at, without expiry, so that the next
// holder does not issue at or before it:
//
//	{idforge:workers}:id:5     "10.0.0.7:8080"   PX 10000
//	{idforge:workers}:last:5   "1767225600123"   (unix milliseconds)
//
// The prefix is wrapped in braces, a Redis Cluster hash tag, so that all
// keys of one prefix live in one slot: the Lua scripts that claim, renew
// and release an ID run atomically on one node, also on a cluster. A
// prefix must therefore not contain '{' or '}'. Claiming scans the IDs
// 0..max inside one script, so it costs O(max) on the server; this is
// done once per node start.
//
// A node that restarts with the same owner gets its ID back at once (the
// old process held the same port, so it is gone). Another owner gets the
// ID only after the key expired, that is a TTL after the last renewal;
// until then the lowest free ID is taken, and when IDs 0..max all have a
// key, Acquire fails with idforge.ErrWorkersExhausted.
//
// # URL
//
// Importing the package registers the schemes "redis" and "rediss" (TLS)
// with worker.Open:
//
//	redis://[[user]:password@]host[:port][/db][?param=value&…]
//
// The host defaults to localhost, the port to 6379 and the database to 0.
// These parameters are idforge's own:
//
//	prefix   the key prefix, default "idforge:workers" (DefaultPrefix)
//	ttl      the key's expiry, a Go duration of at least 1ms, default 10s
//	timeout  bound on every call to Redis, a Go duration, default 3s
//
//	min_replicas  replicas that must have an acquired or renewed key
//	              before it counts (WAIT); default 1 for Sentinel and
//	              Cluster URLs, 0 for a single server
//	wait_timeout  how long to wait for them, default 500ms
//
// Redis Sentinel and Redis Cluster take redis+sentinel and redis+cluster
// (rediss+… over TLS), in internal/redisconn's forms:
//
//	redis+sentinel://[:password@]s1:26379,s2:26379/mymaster?db=0&prefix=idforge:workers
//	redis+cluster://[:password@]n1:6379,n2:6379?prefix=idforge:workers
//
// A fail-over may lose writes the old primary acknowledged. With
// min_replicas, an acquire or renewal that fewer replicas acknowledged
// fails, so the lease's deadline only moves once a replica has the key:
// the promoted replica holds the key at least as long as the node issues
// under it, and no second node can take the ID meanwhile.
//
// Every other parameter is go-redis's (dial_timeout, read_timeout,
// pool_size, max_retries, …); an unknown one is an error. A provider
// opened from a URL uses a pool of at most 2 connections unless pool_size
// says otherwise, and its Close closes the client.
//
// # Cache
//
// When worker.Options.DataDir is set, the ID and the validity Redis last
// granted are kept in the data directory (worker.Cache). If Redis cannot
// be reached when the node starts, a cached ID that is still within that
// validity is resumed, with a WARN log line; the renewals then re-establish
// the key once Redis answers, provided nobody else took the ID meanwhile.
package redis
