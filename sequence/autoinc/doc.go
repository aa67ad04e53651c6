// Package autoinc combines 2^n auto-increment tables into one sequence,
// as JD's (京东) logistics serial-number platform does: a value is
// id << n | index, taken from the tables in turn, so each table supplies a
// disjoint set of values, and the tables may live in different databases
// and servers, one failing while the others carry on.
//
// A table's id takes the 63−n bits above the index: ids run from 1 to
// 2^(63−n)−1, values from 2^n to 2^63−1 (with 4 tables, 2^61−1 ids per
// table). Values trend upwards only: table 0's 1000th id follows table
// 3's 999th. Source.Split takes a value apart. Each value inserts a row,
// recording when it was issued (INSERT … () VALUES () and LAST_INSERT_ID
// on MySQL, INSERT … DEFAULT VALUES RETURNING id elsewhere). Missing
// tables are created unless create=false (Migrate creates one).
//
// Importing the package registers sequence.Open's schemes
// "autoinc+mysql", "autoinc+postgres" and "autoinc+sqlite":
//
//	autoinc+mysql://user:password@host:3306/db?tables=4&also=host2:3306/db2
//	autoinc+sqlite:///var/lib/idforge/a.db?tables=2&also=/var/lib/idforge/b.db
//
//	tables  the number of tables, a power of two up to MaxTables (default 1)
//	table   their name prefix: <table>_0, <table>_1, … (default idforge_autoinc)
//	also    more databases, comma-separated or repeated: host:port/database
//	        (same user, password and parameters) or a SQLite file; table i
//	        lives in database i mod (1 + len(also)), the URL's own first
//	rescue  how long a failing table is left aside (default 30s)
//	create  create missing tables (default true)
//
// and sequence/sqlrow's connection parameters (timeout, max_open_conns,
// busy_timeout, the driver's).
//
// A table that errs is left aside for the rescue time and the next one
// answers; so is a table whose id is not above one it gave this process
// before (dropped and recreated, restored from a backup), with
// sequence.ErrCounterLost rather than a repeated value. A table whose id
// no longer fits is left aside for good (idforge.ErrSpaceExhausted once
// all are). When every table fails, Next returns an error wrapping
// idforge.ErrUnavailable with each table's error. On MySQL, MariaDB and
// PostgreSQL each insert is an INSERT … SELECT under the failover fence
// idforge_fence: a table on a promoted replica is refused with
// idforge.ErrStoreFailedOver until RepairFailover raises it.
package autoinc
