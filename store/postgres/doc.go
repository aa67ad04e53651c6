// Package postgres is idforge's PostgreSQL store, through internal/sqldb
// (pgx v5 under database/sql). Any number of nodes share one database;
// the server's row locks keep their segment claims apart.
//
// Segment keys are rows of Meituan Leaf's table leaf_alloc(biz_tag,
// max_id, step, description, update_time) in PostgreSQL's types, so a
// Leaf database ported to PostgreSQL serves as it is, and a row added by
// hand is a key. Keys of other strategies live in idforge_keys (a name is
// unique across both tables), serial definitions in idforge_serials,
// operators' definitions (idforge.DefinitionStore) in
// idforge_definitions; the search path finds them. Open never creates
// tables; Migrate (`idforge migrate`) adds the missing ones in the first
// schema of the search path and leaves existing ones as they are. Names
// are case-sensitive; tables idforge creates give them the "C" collation,
// so the index orders them byte by byte. update_time may be timestamptz
// or a plain timestamp (read in the session's TimeZone); Leaf's older
// column name desc is accepted for description.
//
// The store URL, registered with store.Open as "postgres" and
// "postgresql":
//
//	postgres://user:password@host:port/database?sslmode=require&…
//	postgres://user:password@h1:5432,h2:5432/database?target_session_attrs=read-write
//
// max_open_conns, max_idle_conns, conn_max_lifetime, timeout and retries
// set the Settings fields of the same meaning; every other parameter is
// pgx's or libpq's (see ParseURL). With several hosts and
// target_session_attrs=read-write every new connection goes to the
// primary, so the Store follows it without reopening.
//
// A claim is one UPDATE leaf_alloc SET max_id = max_id + step …
// RETURNING max_id, step at READ COMMITTED: concurrent claims queue on the
// row lock and each adds to the value its predecessor committed; overflow
// past the largest int64 is refused inside the WHERE clause. Transient
// failures (deadlocks, serialization failures, broken connections) are
// retried. A claim is as durable as a commit: keep synchronous_commit on.
//
// Fail-over: Migrate creates idforge_fence, whose one row names the
// server claims are made on (the system identifier and the current
// timeline, which a promotion changes); every claim matches nothing
// unless the row names the server it runs on. On a promoted standby,
// which may lack the last claims, every claim therefore fails with
// idforge.ErrStoreFailedOver until Store.RepairFailover (`idforge keys
// repair`) raises the keys above every ID handed out and accepts the new
// server. A database migrated before the fence existed is not fenced;
// Open logs a warning.
package postgres
