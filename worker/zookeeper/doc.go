// Package zookeeper assigns snowflake worker IDs the way Meituan's
// Leaf-snowflake does, with ZooKeeper persistent sequential nodes, in
// Leaf's own layout: idforge and Leaf nodes can share one tree, and a
// host that ran Leaf keeps its worker ID.
//
// The package registers the worker URL schemes "zk" and "zookeeper" with
// worker.Register; link it in with a blank import:
//
//	import _ "github.com/idforge/idforge/worker/zookeeper"
//
// # URL
//
//	zk://[user:password@]host:2181[,host2:2181…]/name?session_timeout=10s&max_drift=5s
//
// A host without a port gets 2181. In a list, give the last host its port
// (Go's URL parser reads what follows the last colon as a port). The path is Leaf's leaf.name, default
// "idforge"; it must be one path element. User and password, when given,
// are sent as "digest" credentials. Parameters:
//
//	session_timeout  ZooKeeper session timeout (default 10s)
//	max_drift        largest difference allowed at start between this
//	                 node's clock and the average of its live peers'
//	                 (default 5s)
//	dial_timeout     how long Acquire waits for a session before it falls
//	                 back to the local cache (default 3s)
//
// The password is never logged nor returned in errors; Describe gives the
// redacted URL.
//
// # Nodes
//
//	/snowflake/{name}/forever/{ip:port}-{seq}   persistent sequential
//	/snowflake/{name}/temporary/{ip:port}       ephemeral
//
// Both hold Leaf's JSON, {"ip":"10.0.0.5","port":"8080","timestamp":<unix ms>}.
// {ip:port} is worker.Options.Owner, which is required. The sequence
// number ZooKeeper appended, e.g. 7 in "10.0.0.5:8080-0000000007", is the
// worker ID, bound to that host:port for good: a node that finds its
// forever node takes its ID back, any other creates one. ZooKeeper never
// hands a sequence number out twice, so IDs are never reused: each new
// host:port takes a new one, and deleting stale forever nodes does not
// bring the numbers back. When the sequence passes the layout's largest
// worker ID, Acquire fails with an error wrapping
// idforge.ErrWorkersExhausted.
//
// # Clock checks
//
// At start Acquire refuses, with an error wrapping
// idforge.ErrClockMovedBackwards, when the clock is behind the timestamp
// in this node's forever node (the clock was set back), or when it differs
// by more than max_drift from the average clock of the other live nodes
// under temporary/. Each peer's timestamp is carried forward by the age of
// its last write as ZooKeeper measured it, and peers that have not written
// for 2×3 s plus the session timeout are left out. Once started, the node
// writes max(now, newest reported time) to both of its nodes every 3 s and
// on Release; the lease's LastTime is the timestamp found at start.
//
// The lease never expires (ValidUntil is zero and Done nil), as in Leaf.
//
// # Cache
//
// With a data directory (worker.Options.DataDir), the ID and the newest
// timestamp written are kept in worker.CacheFile, without a validity
// limit. When ZooKeeper is unreachable at Acquire, the cached ID is resumed
// (with a WARN log line) after checking the clock against the cached time,
// and the reports start once ZooKeeper answers; without a usable cache
// Acquire fails with an error wrapping idforge.ErrUnavailable.
package zookeeper
