// Package zookeeper assigns snowflake worker IDs the way Meituan's
// Leaf-snowflake does, with ZooKeeper persistent sequential nodes in
// Leaf's own layout: idforge and Leaf nodes can share one tree, and a
// host that ran Leaf keeps its worker ID. Importing it registers the
// worker URL schemes "zk" and "zookeeper" with worker.Open:
//
//	zk://[user:password@]host:2181[,host2:2181…]/name?session_timeout=10s&max_drift=5s
//
// A host without a port gets 2181; in a list, give the last host its port.
// The path is Leaf's leaf.name (default "idforge", one path element); user
// and password are sent as "digest" credentials and never logged.
// session_timeout is the ZooKeeper session's (default 10s), max_drift the
// largest difference allowed at start between this node's clock and its
// live peers' average (default 5s), dial_timeout how long Acquire waits
// for a session before it falls back to the local cache (default 3s).
//
//	/snowflake/{name}/forever/{ip:port}-{seq}   persistent sequential
//	/snowflake/{name}/temporary/{ip:port}       ephemeral
//
// Both hold Leaf's JSON {"ip","port","timestamp"}. {ip:port} is
// worker.Options.Owner, which is required. The sequence number ZooKeeper
// appended is the worker ID, bound to that host:port for good: a node that
// finds its forever node takes its ID back, any other creates one, and
// numbers are never reused. Past the layout's largest worker ID, Acquire
// fails with idforge.ErrWorkersExhausted. The lease never expires
// (ValidUntil is zero and Done nil), as in Leaf.
//
// At start Acquire refuses with idforge.ErrClockMovedBackwards when the
// clock is behind the timestamp in this node's forever node, or differs
// by more than max_drift from the average of the live peers under
// temporary/ (each carried forward by the age of its last write; peers
// silent for 6 s plus the session timeout are left out). The node then
// writes max(now, newest reported time) to both its nodes every 3 s and on
// Release. With worker.Options.DataDir the ID and the newest timestamp
// are cached (worker.CacheFile) without a validity limit: when ZooKeeper
// is unreachable at Acquire the cached ID is resumed, with a WARN log
// line, after checking the clock against the cached time; without a
// usable cache Acquire fails with idforge.ErrUnavailable.
package zookeeper
