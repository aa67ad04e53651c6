package mysql

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"math"
	"time"

	"github.com/idforge/idforge/store/internal/sqlstore"
)

// The tables Migrate creates when absent (CREATE TABLE IF NOT EXISTS). leaf_alloc is Leaf's DDL
// (scripts/leaf_alloc.sql) with one change: biz_tag compares byte for byte
// (utf8mb4_bin), so "Order" and "order" are two keys; so do the names in
// idforge_keys, idforge_serials and idforge_definitions. A leaf_alloc that
// exists already, Leaf's own included, is left as it is, collation and all.
// Display widths (bigint(20), int(11)) are kept as Leaf wrote them; MySQL
// 8 ignores them with a warning.
const (
	createLeafAllocSQL = "CREATE TABLE IF NOT EXISTS leaf_alloc (\n" +
		"  biz_tag     varchar(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL DEFAULT '',\n" +
		"  max_id      bigint(20)   NOT NULL DEFAULT 1,\n" +
		"  step        int(11)      NOT NULL,\n" +
		"  description varchar(256) DEFAULT NULL,\n" +
		"  update_time timestamp    NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,\n" +
		"  PRIMARY KEY (biz_tag)\n" +
		") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4"
	createKeysSQL = "CREATE TABLE IF NOT EXISTS idforge_keys (\n" +
		"  biz_tag     varchar(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,\n" +
		"  strategy    varchar(32)  NOT NULL,\n" +
		"  description varchar(256) DEFAULT NULL,\n" +
		"  update_time timestamp    NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,\n" +
		"  PRIMARY KEY (biz_tag)\n" +
		") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4"
	createSerialsSQL = "CREATE TABLE IF NOT EXISTS idforge_serials (\n" +
		"  name        varchar(128)  CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,\n" +
		"  template    varchar(1024) NOT NULL,\n" +
		"  time_zone   varchar(64)   DEFAULT NULL,\n" +
		"  description varchar(256)  DEFAULT NULL,\n" +
		"  update_time timestamp     NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,\n" +
		"  PRIMARY KEY (name)\n" +
		") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4"
	createDefinitionsSQL = "CREATE TABLE IF NOT EXISTS idforge_definitions (\n" +
		"  kind        varchar(128)  CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,\n" +
		"  name        varchar(257)  CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,\n" +
		"  spec        text          NOT NULL,\n" +
		"  description varchar(256)  DEFAULT NULL,\n" +
		"  retired     boolean       NOT NULL DEFAULT FALSE,\n" +
		"  update_time timestamp     NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,\n" +
		"  PRIMARY KEY (kind, name)\n" +
		") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4"
)

// statements is MySQL's SQL; sqlstore.Statements says what each one
// takes and returns.
var statements = sqlstore.Statements{
	// The columns of idforge's tables in the connection's database.
	// Table names are matched exactly, as the statements below name them;
	// column names are case-insensitive in MySQL.
	Columns: `
SELECT table_name, LOWER(column_name) FROM information_schema.columns
 WHERE table_schema = DATABASE() AND table_name IN ('leaf_alloc', 'idforge_keys', 'idforge_serials', 'idforge_definitions', 'idforge_fence')`,

	// The claim, as Leaf makes it: in one transaction, an UPDATE that adds
	// the step to max_id, then a SELECT (Read) of the new max_id and the
	// step. The UPDATE takes the row's exclusive lock, which is held until
	// COMMIT, so no other transaction can change the row in between and
	// the SELECT (which sees the transaction's own write) reads exactly
	// the value this claim set, whatever the isolation level.
	//
	// The WHERE clause refuses, by matching nothing, a step that is not
	// positive and an increase that would pass the largest int64 (MySQL
	// would fail with "BIGINT value is out of range" instead). GREATEST
	// keeps the subtraction itself from overflowing on a negative stored
	// step, since SQL does not promise to evaluate AND from left to right.
	ClaimStored: `
UPDATE leaf_alloc
   SET max_id = max_id + step, update_time = CURRENT_TIMESTAMP
 WHERE biz_tag = ? AND step > 0 AND max_id <= 9223372036854775807 - GREATEST(step, 1)`,
	// LAST_INSERT_ID(expr) makes the new max_id the statement's insert
	// ID, which its OK packet carries (Dialect.ClaimInsertID).
	ClaimStep: `
UPDATE leaf_alloc
   SET max_id = LAST_INSERT_ID(max_id + ?), update_time = CURRENT_TIMESTAMP
 WHERE biz_tag = ? AND max_id <= 9223372036854775807 - ?`,
	Read: `SELECT max_id, step FROM leaf_alloc WHERE biz_tag = ?`,
	// With clientFoundRows (set by Open) the affected-row count is the
	// matched rows, so from == to still reports one row.
	Return: `
UPDATE leaf_alloc SET max_id = ?, update_time = CURRENT_TIMESTAMP
 WHERE biz_tag = ? AND max_id = ?`,
	Raise: `UPDATE leaf_alloc SET max_id = ?, update_time = CURRENT_TIMESTAMP WHERE biz_tag = ? AND max_id < ?`,

	KeySegment:  "SELECT biz_tag, max_id, step, %s, update_time FROM leaf_alloc WHERE biz_tag = ?",
	KeysSegment: "SELECT biz_tag, max_id, step, %s, update_time FROM leaf_alloc",
}

// Named locks (GET_LOCK) serialise CreateKey per name across every
// idforge process, so that the check that a name is free in both tables
// and the insert into one of them cannot interleave with another creator
// of that name. lockPrefix starts every lock name; see nameLocker.
const (
	lockSQL    = `SELECT GET_LOCK(?, ?)`
	unlockSQL  = `SELECT RELEASE_LOCK(?)`
	lockPrefix = "idforge:key:"
)

// createTables is sqlstore.Backend.CreateTables: CREATE TABLE IF NOT
// EXISTS, which leaves an existing table as it is.
func createTables(ctx context.Context, db *sql.DB) error {
	for _, ddl := range []string{createLeafAllocSQL, createKeysSQL, createSerialsSQL, createDefinitionsSQL} {
		if _, err := db.ExecContext(ctx, ddl); err != nil {
			return err
		}
	}
	return nil
}

// nameLocker takes MySQL's named locks for key names in one database.
type nameLocker struct{ dbName string }

// withLock is sqlstore.Backend.WithNameLock: it runs fn on a connection
// of its own that holds the server's named lock for name, waiting for the
// lock as long as ctx allows. Lock names are at most 64 characters, so
// the name is hashed, together with the database, whose keys are the only
// ones that conflict.
func (l nameLocker) withLock(ctx context.Context, db *sql.DB, name string, fn func(sqlstore.Querier) error) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	sum := sha256.Sum256([]byte(l.dbName + "\x00" + name))
	lock := lockPrefix + hex.EncodeToString(sum[:20])
	wait := 1.0
	if dl, ok := ctx.Deadline(); ok {
		wait = max(1, math.Ceil(time.Until(dl).Seconds()))
	}
	var got sql.NullInt64
	if err := conn.QueryRowContext(ctx, lockSQL, lock, int64(wait)).Scan(&got); err != nil {
		return err
	}
	if got.Int64 != 1 {
		return fmt.Errorf("lock %s not granted within %vs (GET_LOCK returned %v)", lock, wait, got)
	}
	defer sqlstore.Unlock(ctx, conn, unlockSQL, lock)
	return fn(conn)
}
