package postgres

import (
	"context"
	"database/sql"
	"hash/fnv"

	"github.com/idforge/idforge/store/internal/sqlstore"
)

// The tables Migrate creates when the search path finds none: Leaf's
// leaf_alloc in PostgreSQL's types, idforge_keys, idforge_serials and
// idforge_definitions.
// Names (biz_tag, and idforge_serials' name) use the "C" collation, so
// they compare and sort byte for byte ("Order" and "order" are two keys,
// as under any deterministic collation). update_time is timestamptz, the
// equivalent of MySQL's TIMESTAMP (an instant); PostgreSQL has no ON
// UPDATE clause, so every statement that changes a row sets it. A
// leaf_alloc that exists already is left as it is.
const (
	createLeafAllocSQL = `
CREATE TABLE leaf_alloc (
    biz_tag     varchar(128) COLLATE "C" NOT NULL DEFAULT '',
    max_id      bigint       NOT NULL DEFAULT 1,
    step        integer      NOT NULL,
    description varchar(256) DEFAULT NULL,
    update_time timestamptz  NOT NULL DEFAULT CURRENT_TIMESTAMP,
    PRIMARY KEY (biz_tag)
)`
	createKeysSQL = `
CREATE TABLE idforge_keys (
    biz_tag     varchar(128) COLLATE "C" NOT NULL,
    strategy    varchar(32)  NOT NULL,
    description varchar(256) DEFAULT NULL,
    update_time timestamptz  NOT NULL DEFAULT CURRENT_TIMESTAMP,
    PRIMARY KEY (biz_tag)
)`
	createSerialsSQL = `
CREATE TABLE idforge_serials (
    name        varchar(128)  COLLATE "C" NOT NULL,
    template    varchar(1024) NOT NULL,
    time_zone   varchar(64)   DEFAULT NULL,
    description varchar(256)  DEFAULT NULL,
    update_time timestamptz   NOT NULL DEFAULT CURRENT_TIMESTAMP,
    PRIMARY KEY (name)
)`
	createDefinitionsSQL = `
CREATE TABLE idforge_definitions (
    kind        varchar(128)  COLLATE "C" NOT NULL,
    name        varchar(257)  COLLATE "C" NOT NULL,
    spec        text          NOT NULL,
    description varchar(256)  DEFAULT NULL,
    retired     boolean       NOT NULL DEFAULT FALSE,
    update_time timestamptz   NOT NULL DEFAULT CURRENT_TIMESTAMP,
    PRIMARY KEY (kind, name)
)`
)

// tablesSQL tells whether leaf_alloc, idforge_keys, idforge_serials and
// idforge_definitions exist.
const tablesSQL = `SELECT to_regclass('leaf_alloc') IS NOT NULL, to_regclass('idforge_keys') IS NOT NULL,
       to_regclass('idforge_serials') IS NOT NULL, to_regclass('idforge_definitions') IS NOT NULL`

// statements is PostgreSQL's SQL; sqlstore.Statements says what each one
// takes and returns.
var statements = sqlstore.Statements{
	// The columns of idforge's tables as the search path finds them
	// (the tables the statements below use).
	Columns: `
SELECT c.relname, a.attname
  FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
 WHERE a.attrelid IN (to_regclass('leaf_alloc'), to_regclass('idforge_keys'), to_regclass('idforge_serials'), to_regclass('idforge_definitions'), to_regclass('idforge_fence'))
   AND a.attnum > 0 AND NOT a.attisdropped`,

	// The claim: one UPDATE … RETURNING, atomic on its own. At READ
	// COMMITTED a concurrent claim on the same row waits for the row lock,
	// then re-evaluates its WHERE clause on the row as committed and adds
	// to the new max_id, so claims never overlap. The WHERE clause
	// refuses, by matching nothing, a step that is not positive and an
	// increase that would pass the largest int64 (PostgreSQL would fail
	// with "bigint out of range" instead). GREATEST keeps the subtraction
	// itself from overflowing on a negative stored step, since SQL does
	// not promise to evaluate AND from left to right.
	ClaimStored: `
UPDATE leaf_alloc
   SET max_id = max_id + step, update_time = CURRENT_TIMESTAMP
 WHERE biz_tag = $1 AND step > 0 AND max_id <= 9223372036854775807 - GREATEST(step, 1)
RETURNING max_id, step`,
	// $1 and $3 are the step. The casts keep PostgreSQL from inferring
	// integer for it.
	ClaimStep: `
UPDATE leaf_alloc
   SET max_id = max_id + $1::bigint, update_time = CURRENT_TIMESTAMP
 WHERE biz_tag = $2 AND max_id <= 9223372036854775807 - $3::bigint
RETURNING max_id, step`,
	Read: `SELECT max_id, step FROM leaf_alloc WHERE biz_tag = $1`,
	Return: `
UPDATE leaf_alloc SET max_id = $1::bigint, update_time = CURRENT_TIMESTAMP
 WHERE biz_tag = $2 AND max_id = $3::bigint`,
	Raise: `UPDATE leaf_alloc SET max_id = $1::bigint, update_time = CURRENT_TIMESTAMP WHERE biz_tag = $2 AND max_id < $3::bigint`,

	// The cast makes update_time an instant also in a table where it is a
	// plain timestamp (as in ports of Leaf's DDL): such a value is the
	// wall-clock time of the session's TimeZone, which is the server's or
	// database's default unless the URL sets timezone, as it is for other
	// clients.
	KeySegment:  `SELECT biz_tag, max_id, step, %s, update_time::timestamptz FROM leaf_alloc WHERE biz_tag = $1`,
	KeysSegment: `SELECT biz_tag, max_id, step, %s, update_time::timestamptz FROM leaf_alloc`,
}

// Transaction-scoped advisory locks serialise CreateKey per name (see
// nameLock) across every idforge process using the database:
// at READ COMMITTED a row another transaction has inserted but not
// committed is invisible, so checking both tables for a name is only safe
// while no one else can be between their own check and commit. The lock
// is released by COMMIT or ROLLBACK. Advisory locks are per database.
const lockSQL = `SELECT pg_advisory_xact_lock($1)`

// Migrate holds the session-level advisory lock migrateLock ("idforge" +
// 1) around its transaction; see createTables for why.
const (
	lockSessionSQL   = `SELECT pg_advisory_lock($1)`
	unlockSessionSQL = `SELECT pg_advisory_unlock($1)`

	migrateLock int64 = 0x6964666f72676501
)

// createTables is sqlstore.Backend.CreateTables: in one transaction,
// under the session-level advisory lock migrateLock, it creates each table
// the search path does not find.
func createTables(ctx context.Context, db *sql.DB) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	// A session-level lock, taken before the transaction begins: a
	// transaction sees the tables an earlier Migrate committed only if it
	// starts after that commit (the backend refreshes its catalog caches
	// when a transaction starts, not when an advisory lock is granted).
	if _, err := conn.ExecContext(ctx, lockSessionSQL, migrateLock); err != nil {
		return err
	}
	defer sqlstore.Unlock(ctx, conn, unlockSessionSQL, migrateLock)
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() // no-op after Commit
	// CREATE TABLE IF NOT EXISTS only looks in the schema it would create
	// the table in, the first of the search path: a Leaf table in a later
	// one (public, behind "$user") would be shadowed by a new, empty
	// leaf_alloc, and every key would start again from 1. So a table is
	// created only if the search path finds none.
	var hasLeaf, hasKeys, hasSerials, hasDefs bool
	if err := tx.QueryRowContext(ctx, tablesSQL).Scan(&hasLeaf, &hasKeys, &hasSerials, &hasDefs); err != nil {
		return err
	}
	for _, t := range []struct {
		exists bool
		ddl    string
	}{{hasLeaf, createLeafAllocSQL}, {hasKeys, createKeysSQL}, {hasSerials, createSerialsSQL}, {hasDefs, createDefinitionsSQL}} {
		if t.exists {
			continue
		}
		if _, err := tx.ExecContext(ctx, t.ddl); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// withNameLock is sqlstore.Backend.WithNameLock: it runs fn in a
// transaction that holds the advisory lock for name (see lockSQL), and
// commits it if fn succeeds.
func withNameLock(ctx context.Context, db *sql.DB, name string, fn func(sqlstore.Querier) error) error {
	return sqlstore.InTx(ctx, db, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, lockSQL, nameLock(name)); err != nil {
			return err
		}
		return fn(tx)
	})
}

// nameLock returns the advisory lock key for a key name: a 64-bit FNV-1a
// hash. Two names sharing a hash merely wait for each other.
func nameLock(name string) int64 {
	h := fnv.New64a()
	h.Write([]byte("idforge:key:"))
	h.Write([]byte(name))
	return int64(h.Sum64())
}
