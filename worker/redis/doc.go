// Package redis hands out snowflake worker IDs held in Redis.
//
// A worker ID a node holds is one key whose value is the node's owner
// (worker.Options.Owner, "host:port") and whose expiry is the TTL, renewed
// in the background (worker.Renewal) so that the node stops issuing
// before the key could lapse. A second key per ID, without expiry, keeps
// the newest time any holder issued at, so the next holder issues after
// it:
//
//	{idforge:workers}:id:5     "10.0.0.7:8080"   PX 10000
//	{idforge:workers}:last:5   "1767225600123"   (unix milliseconds)
//	{idforge:workers}:clock:5  "1767225600456:10000"   PX 10000
//
// The clock key holds the holder's clock at its latest renewal and the
// TTL it was set with, so its PTTL tells its age: Acquire refuses
// (idforge.ErrClockMovedBackwards) a node whose clock is more than
// max_drift from the average clock of the other holders.
//
// The prefix is a Redis Cluster hash tag, so one Lua script claims, renews
// or releases an ID atomically on a cluster too (a prefix must not hold
// '{' or '}'). Claiming scans 0..max in one script, O(max) on the server,
// once per node start. A node restarting with the same owner gets its ID
// back at once; another owner only after the key expired; when every ID
// has a key, Acquire fails with idforge.ErrWorkersExhausted. With
// MinReplicas an acquire or renewal that fewer replicas acknowledged (WAIT)
// fails, so a lease's deadline only moves once a replica has the key, and
// a promoted replica never lets a second node take an ID still in use.
//
// Importing the package registers "redis" and "rediss" (TLS), and the
// Sentinel and Cluster forms of internal/redisconn, with worker.Open:
//
//	redis://[[user]:password@]host[:port][/db]?prefix=idforge:workers&ttl=10s
//	redis+sentinel://[:password@]s1:26379,s2:26379/mymaster?db=0&prefix=idforge:workers
//	redis+cluster://[:password@]n1:6379,n2:6379?prefix=idforge:workers
//
//	prefix        the key prefix (DefaultPrefix, "idforge:workers")
//	ttl           the key's expiry, at least 1ms (DefaultTTL, 10s)
//	timeout       bound on every call (DefaultTimeout, 3s)
//	max_drift     the largest difference from the live peers' average
//	              clock a node starts with (5s)
//	min_replicas  replicas that must have each write; default 1 for
//	              Sentinel and Cluster, 0 for a single server
//	wait_timeout  how long to wait for them (default 500ms)
//
// Every other parameter is go-redis's; an unknown one is an error. A
// provider opened from a URL uses at most 2 connections unless pool_size
// says otherwise, and its Close closes the client. With
// worker.Options.DataDir a lease is cached and, when Redis cannot be
// reached at start, resumed within the validity last granted
// (worker.Resume); its key is re-established once Redis answers, if
// nobody took the ID meanwhile.
package redis
