// Package mysql is idforge's MySQL and MariaDB store (MySQL 8, MariaDB
// 10.11 and later), using github.com/go-sql-driver/mysql. Any number of
// idforge nodes share one database; the server's row locks keep their
// segment claims apart.
//
// # Schema
//
// Segment keys live in leaf_alloc, the table of Meituan's Leaf, so a Leaf
// database can be used in place, alongside running Leaf servers:
//
//	leaf_alloc(biz_tag varchar(128) PRIMARY KEY, max_id bigint NOT NULL DEFAULT 1,
//	           step int NOT NULL, description varchar(256) NULL,
//	           update_time timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE …)
//
// A row added to leaf_alloc by hand is a segment key like any other. Keys
// of other strategies (snowflake) live in idforge_keys(biz_tag, strategy,
// description, update_time). A name is unique across both tables. Serial
// definitions (idforge.SerialStore) live in idforge_serials(name,
// template, time_zone, description, update_time), a namespace of their
// own; operators' definitions (idforge.DefinitionStore: sources,
// counters, …) in idforge_definitions(kind, name, spec, description,
// retired, update_time).
//
// Open never creates tables: on a database server the schema belongs to
// its administrators. `idforge migrate` (Store.Migrate) creates whichever
// of the four tables is missing and leaves existing ones, with their
// rows, as they are. So:
//
//   - an empty database: Open fails, saying to run `idforge migrate`;
//   - a Leaf database (leaf_alloc only): Open succeeds and serves segment
//     keys; creating a snowflake key or using serials fails, saying to run
//     `idforge migrate`, which adds idforge_keys, idforge_serials and
//     idforge_definitions and leaves leaf_alloc as it is;
//   - a database migrated by an older idforge (no idforge_serials or no
//     idforge_definitions): Open succeeds and serves keys; serial or
//     definition calls fail, saying to run `idforge migrate`, which adds
//     the missing table;
//   - a database migrated by idforge: everything works.
//
// Tables idforge creates compare names byte for byte (utf8mb4_bin), so
// "Order" and "order" are two keys, or two serials. An existing Leaf
// table keeps its own collation: with MySQL's default, case-insensitive
// one, "Order" and "order" name one row, CreateKey refuses the second as
// taken, and Key returns the name as stored. Leaf's older DDL, which
// names the description column desc, is accepted too.
//
// # Store URL
//
// Importing this package registers the "mysql" scheme with store.Open,
// for the idforge binary:
//
//	mysql://user:password@host:port/database?param=value&…
//	mysql://user:password@host1:port,host2:port/database  (follows the writable host)
//
// See ParseURL for the details. idforge's own parameters, removed before
// the rest reach the driver:
//
//	max_open_conns=10      connections to the server at most
//	max_idle_conns=5       idle connections kept
//	conn_max_lifetime=30m  connections are replaced once this old (0: never)
//	timeout=3s             bound on each call whose context has no earlier deadline
//	retries=2              retries of a claim after a transient failure,
//	                       waiting 50 ms, 100 ms, … (with jitter) in between
//
// Every other parameter is the driver's, e.g. tls=true. Programs that
// embed idforge call ParseURL and Open, or fill a Config, directly.
//
// # Transactions and durability
//
// A claim is Leaf's: UPDATE leaf_alloc SET max_id = max_id + step WHERE
// biz_tag = ?, then SELECT max_id, step in the same transaction, at the
// server's default isolation (REPEATABLE READ). The UPDATE's exclusive row
// lock serialises concurrent claims and makes the SELECT exact; overflow
// past the largest int64 is refused inside the UPDATE's WHERE clause.
// Deadlocks, lock wait timeouts and broken connections are retried.
//
// A claim is as durable as the server makes a commit: keep InnoDB's
// defaults innodb_flush_log_at_trx_commit=1 and sync_binlog=1.
//
// # Fail-over
//
// A replica promoted after a fail-over may lack the last claims; claiming
// there would hand out again ranges the old primary gave. Migrate creates
// idforge_fence, whose one row names the server claims are made on
// (@@server_id, and @@server_uuid on MySQL), and every claim's UPDATE
// matches nothing unless that row names the server it runs on. On a
// promoted replica the replicated row names the old primary, so every
// claim fails with an error wrapping idforge.ErrStoreFailedOver until
// Store.RepairFailover (`idforge keys repair`) raises the keys above every
// ID handed out and records the new server. A database without
// idforge_fence (migrated by an older idforge) is not fenced; Open logs a
// warning.
//
// Several hosts in the URL (mysql://user@h1:3306,h2:3306/database) make
// every new connection go to the first host that takes writes
// (@@read_only = 0), so that a Store follows the primary after a
// fail-over without being reopened.
package mysql
