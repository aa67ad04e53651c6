// Package sqlrow keeps sequences and per-period counters in SQL rows:
// MySQL/MariaDB (go-sql-driver/mysql), PostgreSQL (pgx) and SQLite
// (modernc.org/sqlite). It is the "column + 1" generator of JD's (京东)
// logistics serial-number platform, with any
// number of named counters in one table, each serialised by its row lock.
//
// # Source
//
// A Source issues the values of one row of
//
//	idforge_sequence(name varchar(128) PRIMARY KEY, current_value bigint NOT NULL)
//
// Each value is one atomic statement at autocommit: on PostgreSQL and
// SQLite, UPDATE … SET current_value = current_value + 1 WHERE name = ?
// RETURNING current_value; on MySQL, where UPDATE has no RETURNING,
// UPDATE … SET current_value = LAST_INSERT_ID(current_value + 1) WHERE
// name = ?, whose new value comes back in the statement's own reply: the
// same as JD's UPDATE then SELECT in one REPEATABLE READ
// transaction, in one round trip. Importing the package registers
// sequence.Open's schemes:
//
//	sqlrow+mysql://user:password@host:3306/database?name=orders
//	sqlrow+postgres://user:password@host:5432/database?sslmode=disable&name=orders
//	sqlrow+sqlite:///var/lib/idforge/seq.db?name=orders   (or sqlrow+sqlite:relative/seq.db)
//
//	name            the row, required (idforge.ValidateKeyName)
//	table           the table (default idforge_sequence)
//	start           the first value of a row created here (default 1)
//	create          create the table and the row when missing (default
//	                true); false when administrators own the schema
//	                (MigrateSource creates the table)
//	timeout         bound on each call without an earlier deadline (3s)
//	max_open_conns  connections at most (10; SQLite uses one)
//	busy_timeout    SQLite: how long to wait for another writer (5s)
//
// Other parameters are the driver's (MySQL: session variables or driver
// options such as tls; PostgreSQL: sslmode and the like).
//
// Failures: a client crash loses the value in flight at most. Deadlocks,
// lock wait timeouts, a busy SQLite file and broken connections are
// retried twice (a retried increment may leave a gap, never a
// duplicate); then Next fails with an error wrapping
// idforge.ErrUnavailable. A row that was deleted, or holds less than the
// source saw (a restore from an old backup), fails with
// sequence.ErrCounterLost instead of being re-created low; past the
// largest int64, idforge.ErrSpaceExhausted. Values are as durable as the
// database's commits: keep innodb_flush_log_at_trx_commit=1 and
// sync_binlog=1 on MySQL, synchronous_commit on PostgreSQL; SQLite runs
// in WAL mode with synchronous=FULL.
//
// # Fail-over
//
// On MySQL, MariaDB and PostgreSQL the sources and counter stores use the
// failover fence idforge_fence, which they create with their tables
// (unless creation is off): each increment ANDs the fence's condition
// into its UPDATE and each count checks the fence in its transaction, so
// on a replica promoted after a fail-over (which may lack the last
// increments) Next and Count fail with idforge.ErrStoreFailedOver and hand
// out nothing, until RepairFailover (or `idforge keys repair --sequence`)
// raises the rows above every value handed out and accepts the new
// server.
//
// # Counter store
//
// A CounterStore keeps per-period counters (see sequence.Counter) in
//
//	idforge_counter(name varchar(128) PRIMARY KEY, period bigint NOT NULL, n bigint NOT NULL)
//
// one row per counter name holding the period it counts in (its stamp,
// see sequence.Period.Stamp) and the count. The row is both the count of
// the current period and the counter's mark: each number is one
// transaction that locks the row, moves it to a later period (count 1)
// or adds 1 in the same one, and writes it back, so nothing needs
// cleaning up and a clock moved back finds the mark in the row. Importing
// the package registers sequence.OpenCounter's schemes "mysql",
// "postgres" (and "postgresql") and "sqlite":
//
//	mysql://user:password@host:3306/database?name=waybill&period=day&cap=99999&table=idforge_counter
//
// with table, create and the connection parameters above besides
// OpenCounter's own.
package sqlrow
