// Package etcd assigns snowflake worker IDs through etcd leases.
//
// The package registers the worker URL schemes "etcd" and "etcds" (TLS)
// with worker.Register; link it in with a blank import:
//
//	import _ "github.com/idforge/idforge/worker/etcd"
//
// # URL
//
//	etcd://[user:password@]host:2379[,host2:2379…]/prefix?ttl=10s&dial_timeout=3s
//	etcds://…   the same over TLS, verified against the system's roots
//
// A host without a port gets 2379. In a list, give the last host its port
// (Go's URL parser reads what follows the last colon as a port). The path is the key prefix, default
// /idforge/workers. Parameters:
//
//	ttl           lease time to live, whole seconds, at least 1s
//	              (default 10s; "10s", "1m" or a bare number of seconds).
//	              etcd may grant more than asked (its minimum lease TTL);
//	              the lease is timed with the smaller of the two.
//	dial_timeout  how long Acquire waits for etcd to answer before it
//	              falls back to the local cache (default 3s)
//
// The password is never logged nor returned in errors; Describe gives the
// redacted URL.
//
// # Keys
//
//	{prefix}/id/{n}    {"owner":"host:port"}, bound to the holder's lease
//	{prefix}/last/{n}  unix milliseconds, the newest time any holder of
//	                   ID n recorded; it has no lease, so it outlives them
//
// Acquire grants a lease and claims the lowest free ID in [0, max] with a
// transaction that succeeds only if the key does not exist. When a key
// already names this node's Owner (worker.Options.Owner), it is the same
// node restarting and its ID is taken back at once (compare-and-swap on
// the key's revision), without waiting for the old lease to expire.
//
// The returned lease is a *worker.Renewal: it keeps the etcd lease alive
// every ttl/3 and records the newest reported time under last/{n}, and
// its ValidUntil is the send time of the newest successful renewal plus
// ttl minus a margin of ttl/3, so the node stops issuing before etcd can
// expire the lease and give the ID to another node. If the lease vanished
// (expired or revoked), a renewal binds the ID to a new lease only if the
// ID's key is gone; it fails, and the lease eventually ends, when another
// node holds it.
//
// # Cache
//
// With a data directory (worker.Options.DataDir), the ID and the validity
// etcd last granted are kept in worker.CacheFile. When etcd is unreachable
// at Acquire, a cached ID still within that validity is resumed (with a
// WARN log line) and claimed again once etcd answers; otherwise Acquire
// fails with an error wrapping idforge.ErrUnavailable.
//
// # Owner
//
// worker.Options.Owner must be unique among live processes: the
// host:port of the node's listener is. Without an Owner the provider
// makes up one per Provider, so a restart waits for the old lease to
// expire and cannot use the cache.
package etcd
