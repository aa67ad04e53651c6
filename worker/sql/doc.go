// Package sql hands out snowflake worker IDs held in a table of a
// MySQL/MariaDB, PostgreSQL or SQLite database, through internal/sqldb.
//
// On a database server (MySQL, MariaDB, PostgreSQL) `idforge migrate`
// creates the provider's table (Provider.Migrate), as it creates the
// stores': Acquire refuses a database without it, saying so, and never
// creates a table there (unless Config.CreateTable). A SQLite file gets
// it on the first Acquire:
//
//	idforge_workers(worker_id int primary key, owner varchar(255) not null,
//	                claimed_at timestamp, heartbeat_at timestamp,
//	                last_ms bigint not null default 0,
//	                clock_ms bigint not null default 0)
//
// One row per worker ID: owner is the node holding it
// (worker.Options.Owner, "host:port"; empty once released), heartbeat_at
// the database's time of its newest renewal, last_ms the newest time (unix
// milliseconds) any holder issued at, kept across owners, clock_ms the
// holder's clock at its newest renewal: Acquire refuses
// (idforge.ErrClockMovedBackwards) a node whose clock is more than
// max_drift from the average clock of the live holders (each clock_ms
// plus its heartbeat's age). `idforge migrate` adds clock_ms to a table
// of an earlier version. The row with
// worker_id −1 is a lock that makes claims run one at a time (SQLite locks
// the file instead). Times are the database's clock, never the node's, so
// nodes with skewed clocks agree on what is stale.
//
// A row is free when absent, released, this owner's own (the node
// restarted on the same host:port), or stale: heartbeat_at more than
// stale_after ago. Acquire takes the owner's row, else the lowest free ID
// in 0..max, in one transaction, and fails with
// idforge.ErrWorkersExhausted when every ID has a live owner. The lease
// renews heartbeat_at every stale_after/3 and is valid until 2/3
// stale_after after the newest successful renewal was sent, so the node
// stops issuing before another can take the row. On MySQL, MariaDB and
// PostgreSQL a claim on a server that the failover fence idforge_fence
// does not name fails with idforge.ErrStoreFailedOver, and a renewal there
// ends the lease (idforge.ErrLeaseLost). SQLite's clock and file locks are
// those of one host: a SQLite URL coordinates the processes of one
// machine, not a cluster.
//
// Importing the package registers these schemes with worker.Open:
//
//	mysql://user:password@host:3306/database?stale_after=30s
//	postgres://user:password@host:5432/database?stale_after=30s   (or postgresql://)
//	sqlite:///absolute/path/idforge.db?stale_after=30s
//	sqlite:   (the node's own idforge.db in its data directory)
//
//	stale_after  how long after its last heartbeat a row is free for
//	             another owner, at least 1ms (DefaultStaleAfter, 30s)
//	timeout      bound on every call to the database (DefaultTimeout, 3s)
//	max_drift    the largest difference from the live peers' average
//	             clock a node starts with (5s)
//
// Each scheme prefixed with "ip+" (ip+mysql://…, ip+sqlite:…) pins the ID
// to the one worker.IP derives from the node's address, with its
// parameters bits, net and addr (Config.IP): Acquire claims that row or
// refuses, wrapping idforge.ErrWorkersExhausted and naming the live
// holder, so two nodes whose addresses share their low bits never both
// start.
//
// Every other parameter is the driver's; several hosts follow the primary
// as the stores' URLs do. A provider opened from a URL keeps at most 2
// connections and its Close closes them. With worker.Options.DataDir a
// lease is cached and, when the database cannot be reached at start,
// resumed within the validity last granted (worker.Resume); its row is
// re-established once the database answers, if it is still free.
package sql
