// Package sql hands out snowflake worker IDs held in a table of a
// MySQL/MariaDB, PostgreSQL or SQLite database.
//
// # Table
//
// The provider creates its own table when it is missing (CREATE TABLE IF
// NOT EXISTS, on the first Acquire); it belongs to idforge and is not
// shared with the stores' tables:
//
//	idforge_workers(worker_id int primary key, owner varchar(255) not null,
//	                claimed_at timestamp, heartbeat_at timestamp,
//	                last_ms bigint not null default 0)
//
// One row per worker ID: owner is the node holding it (worker.Options.Owner,
// "host:port"; empty once released), heartbeat_at the database time of its
// newest renewal, and last_ms the newest time (unix milliseconds) any
// holder issued at, which survives every change of owner. The row with
// worker_id −1 is not a worker ID: claims on MySQL and PostgreSQL lock it
// so that they run one at a time (SQLite locks the whole file instead). On MySQL the times are DATETIME(3) in UTC (UTC_TIMESTAMP(3)), as a
// TIMESTAMP column would follow the session's time zone through daylight
// saving; on PostgreSQL they are timestamptz, on SQLite UTC text
// "YYYY-MM-DD HH:MM:SS.SSS".
//
// # Claiming
//
// All times are the database's clock (NOW), never the node's, so nodes
// with skewed clocks agree on what is stale. A row is free when it is
// absent, released (empty owner), this node's own (the node restarted: its old
// process held the same port, so it is gone), or stale: heartbeat_at is
// more than stale_after (the safety margin) in the past. Acquire takes the
// row the owner holds, else the lowest free ID in 0..max, in one
// transaction (SELECT … FOR UPDATE on MySQL and PostgreSQL, BEGIN
// IMMEDIATE on SQLite). The lease renews heartbeat_at every stale_after/3
// and is valid until 2/3 stale_after after the newest successful renewal
// was sent, so the node stops issuing before another can take the row.
// When every ID 0..max is held by a live owner, Acquire fails with
// idforge.ErrWorkersExhausted.
//
// SQLite's clock is the clock of the host it runs on, and its file locks
// only work between processes of one host: a SQLite URL coordinates the
// idforge processes of one machine (the node's own database file will do),
// not a cluster.
//
// # URL
//
// Importing the package registers these schemes with worker.Open (the
// worker registry; the store registry is separate):
//
//	mysql://user:password@host:3306/database?stale_after=30s
//	postgres://user:password@host:5432/database?sslmode=disable&stale_after=30s
//	postgresql://…  (the same)
//	sqlite:///absolute/path/idforge.db?stale_after=30s
//	sqlite:relative/path.db
//	sqlite:  (the node's own database file, idforge.db in its data directory)
//
// These parameters are idforge's own:
//
//	stale_after  how long after its last heartbeat a row is free for
//	             another owner, a Go duration of at least 1ms, default
//	             30s (DefaultStaleAfter)
//	timeout      bound on every call to the database, default 3s
//	             (DefaultTimeout)
//
// Every other MySQL parameter goes to go-sql-driver/mysql, every other
// PostgreSQL parameter to pgx (sslmode, connect_timeout, search_path, …).
// SQLite takes no other parameter. A provider opened from a URL keeps at
// most 2 connections and its Close closes them.
//
// # Fail-over
//
// On MySQL, MariaDB and PostgreSQL the provider checks the database's
// failover fence, idforge_fence (the store's, in the same database, or its
// own, created with its table): a claim on a server that is not the one
// the fence names fails with an error wrapping idforge.ErrStoreFailedOver,
// and a renewal there ends the lease (idforge.ErrLeaseLost): a promoted
// replica may lack another node's claim of an ID, or ours. `idforge keys
// repair` waits a full stale_after before it accepts the new server, so
// every holder has stopped by then, and no worker ID is ever used by two
// live nodes. Several hosts in a URL follow the primary as the stores'
// URLs do (mysql://user@h1:3306,h2:3306/db;
// postgres://…@h1:5432,h2:5432/db?target_session_attrs=read-write).
//
// # Cache
//
// When worker.Options.DataDir is set, the ID and the validity the database
// last granted are kept in the data directory (worker.Cache). If the
// database cannot be reached when the node starts, a cached ID that is
// still within that validity is resumed, with a WARN log line; renewals
// then re-establish the row once the database answers, provided it is
// still this node's or free and no newer time was recorded for it.
package sql
