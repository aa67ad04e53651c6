package sqlite

import (
	"context"
	"database/sql"

	"github.com/idforge/idforge/internal/sqldb/sqlite"
	"github.com/idforge/idforge/store/internal/sqlstore"
)

// schema creates the tables when absent: leaf_alloc, idforge_keys and
// idforge_serials (serial definitions) and idforge_definitions
// (operators' definitions: sources, counters, …). leaf_alloc is Leaf's table as
// published with Leaf (MySQL DDL), in SQLite's words: bigint and int both
// have INTEGER affinity, varchar lengths are documentation only (CreateKey
// and CreateSerial enforce them), names compare byte for byte (SQLite's
// BINARY collation), and update_time holds CURRENT_TIMESTAMP's UTC text
// "YYYY-MM-DD HH:MM:SS". SQLite has no ON UPDATE clause; every UPDATE sets
// update_time itself.
const schema = `
CREATE TABLE IF NOT EXISTS leaf_alloc (
    biz_tag     varchar(128) NOT NULL PRIMARY KEY,
    max_id      bigint       NOT NULL DEFAULT 1,
    step        int          NOT NULL,
    description varchar(256) NULL,
    update_time timestamp    NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE TABLE IF NOT EXISTS idforge_keys (
    biz_tag     varchar(128) NOT NULL PRIMARY KEY,
    strategy    varchar(32)  NOT NULL,
    description varchar(256) NULL,
    update_time timestamp    NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE TABLE IF NOT EXISTS idforge_serials (
    name        varchar(128)  NOT NULL PRIMARY KEY,
    template    varchar(1024) NOT NULL,
    time_zone   varchar(64)   NULL,
    description varchar(256)  NULL,
    update_time timestamp     NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE TABLE IF NOT EXISTS idforge_definitions (
    kind        varchar(128)  NOT NULL,
    name        varchar(257)  NOT NULL,
    spec        text          NOT NULL,
    description varchar(256)  NULL,
    retired     boolean       NOT NULL DEFAULT 0,
    update_time timestamp     NOT NULL DEFAULT CURRENT_TIMESTAMP,
    PRIMARY KEY (kind, name)
);
`

// backend is the store's SQLite backend: a file the store owns, so Open
// creates the tables (an embedded store needs no administrator), and one
// writer connection whose transactions begin IMMEDIATE (sqlite.OpenDB),
// so that the write lock is the lock on every name and every claim.
var backend = &sqlstore.Backend{
	Dialect:            sqlite.Dialect,
	SQL:                statements,
	WithNameLock:       withWriteLock,
	CreateTables:       createTables,
	CreateTablesOnOpen: true,
}

// Hand edits can store anything in any column: max_id and step read as
// NULL unless they hold integers, and the claims match no such row, so
// that the shared store refuses them with a clear error.
const (
	maxIDIfInteger = `CASE typeof(max_id) WHEN 'integer' THEN max_id END`
	stepIfInteger  = `CASE typeof(step) WHEN 'integer' THEN step END`
)

// statements is SQLite's SQL; sqlstore.Statements says what each one
// takes and returns.
var statements = sqlstore.Statements{
	Columns: `
SELECT m.name, lower(c.name) FROM sqlite_schema m, pragma_table_info(m.name) c
 WHERE m.type = 'table' AND m.name IN ('leaf_alloc', 'idforge_keys', 'idforge_serials', 'idforge_definitions')`,

	// The claim: one UPDATE … RETURNING, atomic on its own and durable
	// (synchronous=FULL) when it completes. The WHERE clause refuses, by
	// matching nothing, a row whose max_id or step is not an integer, a
	// step that is not positive, and an increase that would pass the
	// largest int64: SQLite does not fail on integer overflow, it
	// silently makes the sum a REAL, which would corrupt the row.
	ClaimStored: `
UPDATE leaf_alloc
   SET max_id = max_id + step, update_time = CURRENT_TIMESTAMP
 WHERE biz_tag = ?1 AND typeof(max_id) = 'integer' AND typeof(step) = 'integer'
   AND step > 0 AND max_id <= 9223372036854775807 - max(step, 1)
RETURNING max_id, step`,
	ClaimStep: `
UPDATE leaf_alloc
   SET max_id = max_id + ?1, update_time = CURRENT_TIMESTAMP
 WHERE biz_tag = ?2 AND typeof(max_id) = 'integer' AND typeof(step) = 'integer'
   AND max_id <= 9223372036854775807 - ?3
RETURNING max_id, step`,
	Read: `SELECT ` + maxIDIfInteger + `, ` + stepIfInteger + ` FROM leaf_alloc WHERE biz_tag = ?1`,
	Return: `
UPDATE leaf_alloc SET max_id = ?1, update_time = CURRENT_TIMESTAMP
 WHERE biz_tag = ?2 AND max_id = ?3`,

	KeySegment:  `SELECT biz_tag, ` + maxIDIfInteger + `, ` + stepIfInteger + `, %s, update_time FROM leaf_alloc WHERE biz_tag = ?1`,
	KeysSegment: `SELECT biz_tag, ` + maxIDIfInteger + `, ` + stepIfInteger + `, %s, update_time FROM leaf_alloc`,
}

// createTables is sqlstore.Backend.CreateTables: CREATE TABLE IF NOT
// EXISTS, which leaves an existing table as it is.
func createTables(ctx context.Context, db *sql.DB) error {
	_, err := db.ExecContext(ctx, schema)
	return err
}

// withWriteLock is sqlstore.Backend.WithNameLock: a transaction on the
// writer, whose BEGIN IMMEDIATE takes the file's write lock, so that the
// check that a name is free and the insert hold it together, also against
// other processes.
func withWriteLock(ctx context.Context, db *sql.DB, _ string, fn func(sqlstore.Querier) error) error {
	return sqlstore.InTx(ctx, db, func(tx *sql.Tx) error { return fn(tx) })
}
