// Package sqlrow keeps sequences and per-period counters in SQL rows on
// MySQL/MariaDB, PostgreSQL or SQLite, through internal/sqldb: the
// "column + 1" generator of JD's (京东) logistics serial-number platform,
// any number of named counters in one table, each serialised by its row
// lock.
//
// A Source issues the values of one row of
// idforge_sequence(name varchar(128) PRIMARY KEY, current_value bigint).
// Each value is one autocommitted UPDATE that adds 1 and hands the new
// value back in its own reply (RETURNING, or LAST_INSERT_ID(expr) on
// MySQL). A CounterStore keeps per-period counters (see sequence.Counter)
// in idforge_counter(name, period, n): one row per name, holding the
// period it counts in and the count, which is also the counter's mark;
// each number is one transaction that locks the row and moves it to a
// later period or adds 1.
//
// Importing the package registers sequence.Open's schemes "sqlrow+mysql",
// "sqlrow+postgres" and "sqlrow+sqlite", and sequence.OpenCounter's
// "mysql", "postgres" and "sqlite" ("postgresql" for "postgres" too):
//
//	sqlrow+mysql://user:password@host:3306/database?name=orders
//	sqlrow+sqlite:///var/lib/idforge/seq.db?name=orders
//	mysql://user:password@host:3306/database?name=waybill&period=day&cap=99999
//
//	name            a source's row, required (idforge.ValidateKeyName)
//	table           the table (default idforge_sequence, idforge_counter)
//	start           the first value of a row a source creates (default 1)
//	create          create the table and the row when missing (default
//	                true); false when administrators own the schema
//	                (MigrateSource creates a source's table)
//	timeout         bound on each call without an earlier deadline (3s)
//	max_open_conns  connections at most (10; SQLite uses one)
//	busy_timeout    SQLite: how long to wait for another writer (5s)
//
// Other parameters are the driver's. A counter URL also takes
// OpenCounter's own parameters.
//
// Transient failures are retried twice (a retried increment may leave a
// gap, never a duplicate); then Next fails with idforge.ErrUnavailable. A
// row that was deleted, or holds less than the source saw, fails with
// sequence.ErrCounterLost rather than being re-created low; past the
// largest int64, idforge.ErrSpaceExhausted. Values are as durable as the
// database's commits. On MySQL, MariaDB and PostgreSQL sources and
// counter stores use the failover fence idforge_fence, created with their
// tables: on a replica promoted after a fail-over, Next and Count fail
// with idforge.ErrStoreFailedOver and hand out nothing until
// RepairFailover (`idforge keys repair --sequence`) raises the rows above
// every value handed out and accepts the new server.
package sqlrow
