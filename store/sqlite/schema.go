package sqlite

// schema creates the tables when absent: leaf_alloc, idforge_keys and
// idforge_serials (serial definitions). leaf_alloc is Leaf's table as
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
`

// claimSQL advances one key's max_id and returns the new value, atomically
// in one statement. ?1 is the key, ?2 the requested step (0: the row's
// step). The WHERE clause refuses, by updating nothing, a row whose
// max_id or step is not an integer (hand edits can store anything), a step
// that is not positive, and an increase that would pass the largest int64:
// SQLite does not fail on integer overflow, it silently makes the sum a
// REAL, which would corrupt the row. max_id ≤ 2⁶³−1 − step cannot itself
// overflow because step > 0.
const claimSQL = `
UPDATE leaf_alloc
   SET max_id = max_id + (CASE WHEN ?2 = 0 THEN step ELSE ?2 END),
       update_time = CURRENT_TIMESTAMP
 WHERE biz_tag = ?1
   AND typeof(max_id) = 'integer'
   AND typeof(step) = 'integer'
   AND (CASE WHEN ?2 = 0 THEN step ELSE ?2 END) > 0
   AND max_id <= 9223372036854775807 - (CASE WHEN ?2 = 0 THEN step ELSE ?2 END)
RETURNING max_id, step`

// returnSQL is ReturnSegment's compare-and-set: ?1 is the key, ?2 from,
// ?3 to.
const returnSQL = `
UPDATE leaf_alloc SET max_id = ?2, update_time = CURRENT_TIMESTAMP
 WHERE biz_tag = ?1 AND max_id = ?3`

// existsSQL tells whether leaf_alloc has a row for a key.
const existsSQL = `SELECT EXISTS (SELECT 1 FROM leaf_alloc WHERE biz_tag = ?1)`

// inspectSQL reads what claimSQL looks at, to explain why it updated nothing.
const inspectSQL = `
SELECT max_id, step, typeof(max_id), typeof(step) FROM leaf_alloc WHERE biz_tag = ?1`

// strategySQL finds a key of another strategy.
const strategySQL = `SELECT strategy FROM idforge_keys WHERE biz_tag = ?1`

// keySQL and keysSQL read keys from both tables; when a name is in both
// (only possible by hand), the leaf_alloc row (src 0) comes first. %s is
// the description column.
const (
	keySQL = `
SELECT 0 AS src, 'segment', step, max_id, %s, update_time FROM leaf_alloc WHERE biz_tag = ?1
UNION ALL
SELECT 1 AS src, strategy, 0, 0, description, update_time FROM idforge_keys WHERE biz_tag = ?1
ORDER BY src LIMIT 1`
	keysSQL = `
SELECT biz_tag, 0 AS src, 'segment', step, max_id, %s, update_time FROM leaf_alloc
UNION ALL
SELECT biz_tag, 1 AS src, strategy, 0, 0, description, update_time FROM idforge_keys
ORDER BY biz_tag, src`
)

// nameTakenSQL tells whether a name is used in either table.
const nameTakenSQL = `
SELECT EXISTS (SELECT 1 FROM leaf_alloc WHERE biz_tag = ?1)
    OR EXISTS (SELECT 1 FROM idforge_keys WHERE biz_tag = ?1)`

// Inserts for CreateKey; %s is leaf_alloc's description column.
const (
	insertSegmentSQL = `
INSERT INTO leaf_alloc (biz_tag, max_id, step, %s, update_time)
VALUES (?1, ?2, ?3, ?4, CURRENT_TIMESTAMP)`
	insertOtherSQL = `
INSERT INTO idforge_keys (biz_tag, strategy, description, update_time)
VALUES (?1, ?2, ?3, CURRENT_TIMESTAMP)`
)

// Statements on idforge_serials. ?1 is the serial's name; insertSerialSQL
// takes name, template, time zone and description.
const (
	insertSerialSQL = `
INSERT INTO idforge_serials (name, template, time_zone, description, update_time)
VALUES (?1, ?2, ?3, ?4, CURRENT_TIMESTAMP)`
	serialSQL  = `SELECT name, template, time_zone, description, update_time FROM idforge_serials WHERE name = ?1`
	serialsSQL = `SELECT name, template, time_zone, description, update_time FROM idforge_serials ORDER BY name`
	// serialsTableSQL tells whether idforge_serials exists.
	serialsTableSQL = `SELECT EXISTS (SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'idforge_serials')`
)
