// Package etcd assigns snowflake worker IDs through etcd leases.
// Importing it registers the worker URL schemes "etcd" and "etcds" (TLS,
// verified against the system's roots) with worker.Open:
//
//	etcd://[user:password@]host:2379[,host2:2379…]/prefix?ttl=10s&dial_timeout=3s&max_drift=5s
//
// A host without a port gets 2379; in a list, give the last host its port.
// The path is the key prefix, default /idforge/workers. ttl is the lease's
// time to live in whole seconds, at least 1s (default 10s); etcd may grant
// more, and the lease is timed with the smaller. dial_timeout is how long
// Acquire waits for etcd before it falls back to the local cache (default
// 3s). The password is never logged nor returned in errors.
//
//	{prefix}/id/{n}     {"owner":"host:port"}, bound to the holder's lease
//	{prefix}/last/{n}   unix milliseconds, the newest time any holder of
//	                    ID n recorded; without a lease, it outlives them
//	{prefix}/clock/{n}  unix milliseconds, the holder's clock at its
//	                    latest renewal, bound to its lease
//
// Acquire refuses (idforge.ErrClockMovedBackwards) a node whose clock is
// more than max_drift (default 5s) behind the average of the other
// holders' clock records, or more than max_drift plus ttl ahead of it:
// etcd keeps no clock of the writes, so a record may be up to ttl old.
//
// Acquire grants a lease and claims the lowest free ID in [0, max] with a
// transaction that succeeds only if the key does not exist; a key that
// already names this node's worker.Options.Owner (the same node
// restarting) is taken back at once by compare-and-swap. The lease is a
// *worker.Renewal: it keeps the etcd lease alive every ttl/3, records the
// newest reported time under last/{n}, and is valid until the send time
// of the newest successful renewal plus ttl minus ttl/3, so the node stops
// issuing before etcd can give the ID to another. A renewal that finds
// the lease gone binds the ID to a new one only if the ID's key is gone.
//
// The Owner must be unique among live processes (the host:port of the
// node's listener is); without one the provider makes one up, so a
// restart waits for the old lease to expire and cannot use the cache.
// With worker.Options.DataDir a lease is cached and, when etcd is
// unreachable at Acquire, resumed within the validity last granted
// (worker.Resume) and claimed again once etcd answers.
package etcd
