// Package mysql is idforge's MySQL and MariaDB store (MySQL 8, MariaDB
// 10.11 and later), through internal/sqldb. Any number of nodes share one
// database; the server's row locks keep their segment claims apart.
//
// Segment keys are rows of Meituan Leaf's table leaf_alloc(biz_tag,
// max_id, step, description, update_time), so a Leaf database serves as
// it is, beside running Leaf servers, and a row added by hand is a key.
// Keys of other strategies live in idforge_keys (a name is unique across
// both tables), serial definitions in idforge_serials, operators'
// definitions (idforge.DefinitionStore) in idforge_definitions. Open
// never creates tables; Migrate (`idforge migrate`) adds the missing ones
// and leaves existing ones, rows and collation, as they are. Tables
// idforge creates compare names byte for byte (utf8mb4_bin); in a Leaf
// table with MySQL's case-insensitive default "Order" and "order" are one
// key. Leaf's older column name desc is accepted for description.
//
// The store URL, registered with store.Open as "mysql":
//
//	mysql://user:password@host:port/database?param=value&…
//	mysql://user:password@h1:3306,h2:3306/database   (follows the writable host)
//
// max_open_conns, max_idle_conns, conn_max_lifetime, timeout and retries
// set the Settings fields of the same meaning; every other parameter is
// the driver's (see ParseURL).
//
// A claim of a given step is one autocommitted UPDATE leaf_alloc SET
// max_id = LAST_INSERT_ID(max_id + step), whose new max_id comes back in
// its reply; a claim of the row's stored step is Leaf's UPDATE then
// SELECT in one transaction. Either way the row lock serialises claims,
// and overflow past the largest int64 is refused inside the WHERE clause.
// Transient failures (deadlocks, lock wait timeouts, broken connections)
// are retried. A claim is as durable as a commit: keep
// innodb_flush_log_at_trx_commit=1 and sync_binlog=1.
//
// Fail-over: Migrate creates idforge_fence, whose one row names the
// server claims are made on (@@server_id, and @@server_uuid on MySQL);
// every claim matches nothing unless the row names the server it runs
// on. On a promoted replica, which may lack the last claims, every claim
// therefore fails with idforge.ErrStoreFailedOver until
// Store.RepairFailover (`idforge keys repair`) raises the keys above every
// ID handed out and accepts the new server. A database migrated before
// the fence existed is not fenced; Open logs a warning. With several
// hosts in the URL every new connection goes to the first host with
// @@read_only = 0, so the Store follows the primary without reopening.
package mysql
