// Package postgres is idforge's PostgreSQL store, using pgx v5
// (github.com/jackc/pgx/v5) through database/sql, so that its code and
// its connection pool settings mirror those of store/mysql. Any number of
// idforge nodes share one database; the server's row locks keep their
// segment claims apart.
//
// # Schema
//
// Segment keys live in leaf_alloc, the table of Meituan's Leaf in
// PostgreSQL's types, so a Leaf database ported to PostgreSQL can be used
// in place:
//
//	leaf_alloc(biz_tag varchar(128) PRIMARY KEY, max_id bigint NOT NULL DEFAULT 1,
//	           step integer NOT NULL, description varchar(256) NULL,
//	           update_time timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP)
//
// A row added to leaf_alloc by hand is a segment key like any other. Keys
// of other strategies (snowflake) live in idforge_keys(biz_tag, strategy,
// description, update_time). A name is unique across both tables. Serial
// definitions (idforge.SerialStore) live in idforge_serials(name,
// template, time_zone, description, update_time), a namespace of their
// own. Tables are found through the connection's search_path.
//
// Open never creates tables: on a database server the schema belongs to
// its administrators. `idforge migrate` (Store.Migrate) creates whichever
// of the four tables the search path does not find, in the first schema
// of the search path, and leaves existing ones, with their rows, as they
// are. So:
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
// Names are case-sensitive, as text always is in PostgreSQL; tables
// idforge creates give their name columns the "C" collation, so that the
// index orders names byte by byte. An existing table keeps its collation. update_time
// may be timestamptz (an instant, like MySQL's TIMESTAMP) or a plain
// timestamp, which, as for every other client, holds the wall-clock time
// of the session's TimeZone (the server's or database's default unless the
// URL sets timezone). Leaf's older column name desc is accepted for
// description.
//
// # Store URL
//
// Importing this package registers the "postgres" and "postgresql"
// schemes with store.Open, for the idforge binary:
//
//	postgres://user:password@host:port/database?sslmode=require&…
//
// See ParseURL for the details. idforge's own parameters, removed before
// the rest reach pgx:
//
//	max_open_conns=10      connections to the server at most
//	max_idle_conns=5       idle connections kept
//	conn_max_lifetime=30m  connections are replaced once this old (0: never)
//	timeout=3s             bound on each call whose context has no earlier deadline
//	retries=2              retries of a claim after a transient failure,
//	                       waiting 50 ms, 100 ms, … (with jitter) in between
//
// Every other parameter is pgx's or libpq's, e.g. sslmode. Programs that
// embed idforge call ParseURL and Open, or fill a Config, directly.
//
// # Transactions and durability
//
// A claim is a single UPDATE leaf_alloc SET max_id = max_id + step …
// RETURNING max_id, step, at the server's default isolation (READ
// COMMITTED): concurrent claims queue on the row lock, and each adds to
// the value its predecessor committed. Overflow past the largest int64 is
// refused inside the UPDATE's WHERE clause. Deadlocks, serialization
// failures and broken connections are retried. pgx prepares each
// statement once per connection and reuses it.
//
// A claim is as durable as the server makes a commit: keep
// synchronous_commit on.
//
// # Fail-over
//
// A standby promoted after a fail-over may lack the last claims; claiming
// there would hand out again ranges the old primary gave. Migrate creates
// idforge_fence, whose one row names the server claims are made on (the
// cluster's system identifier and the current timeline, which a promotion
// changes), and every claim's UPDATE matches nothing unless that row names
// the server it runs on. On a promoted standby every claim therefore
// fails with an error wrapping idforge.ErrStoreFailedOver until
// Store.RepairFailover (`idforge keys repair`) raises the keys above every
// ID handed out and records the new server. A database without
// idforge_fence (migrated by an older idforge) is not fenced; Open logs a
// warning. The fence reads pg_control_system() and
// pg_walfile_name(pg_current_wal_lsn()), which every role may call by
// default.
//
// Several hosts with target_session_attrs=read-write
// (postgres://user@h1:5432,h2:5432/database?target_session_attrs=read-write,
// pgx's own form) make every new connection go to the primary, so that a
// Store follows it after a fail-over without being reopened.
package postgres
