package sql

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/idforge/idforge/internal/placeholder"
)

// Dialect names the SQL of a database.
type Dialect string

// The dialects this package speaks.
const (
	MySQL    Dialect = "mysql" // MySQL and MariaDB
	Postgres Dialect = "postgres"
	SQLite   Dialect = "sqlite"
)

// Table is the name of the provider's table.
const Table = "idforge_workers"

// lockOwner is the owner of the row −1, which claims lock.
const lockOwner = "#claim-lock"

// statements are the SQL of one dialect. Placeholders appear in the
// order of the arguments given in each comment.
type statements struct {
	// create creates the table when missing.
	create string
	// probe tells whether the table exists, for accounts that may not
	// create tables.
	probe string
	// lockRow inserts the row −1 when missing.
	lockRow string
	// lock locks row −1 for the claim transaction ("" on SQLite, which
	// locks the whole file with BEGIN IMMEDIATE).
	lock string
	// scan (stale, max) → worker_id, owner, stale (0/1), last_ms of
	// every row in 0..max, locked.
	scan string
	// claim (owner, id) takes an existing row.
	claim string
	// insert (id, owner, last_ms) takes an absent row.
	insert string
	// renew (last, id, owner) refreshes our row.
	renew string
	// state (stale, id) → owner, stale (0/1), last_ms of one row.
	state string
	// retake (owner, last, id, stale, last) takes a free row back if no
	// newer time was recorded on it.
	retake string
	// release (owner, last, id) gives our row back and raises last_ms.
	release string

	// staleArg converts stale_after into the argument stale expressions
	// take.
	staleArg func(d time.Duration) any
	// transient reports errors after which a claim transaction is worth
	// repeating (deadlocks, serialization failures).
	transient func(err error) bool
	// schemaRace reports errors of creating the table while another
	// session does the same, after which the next attempt sees it.
	schemaRace func(err error) bool
}

func (d Dialect) statements() (*statements, error) {
	var (
		now, stale, schema, lockRow string
		s                           statements
		// GREATEST and FOR UPDATE are MySQL's and PostgreSQL's; SQLite
		// has max() and, locking the whole database, no row locks.
		greatest, forUpdate = "GREATEST", " FOR UPDATE"
		// lockValues is the lock row, which no worker ID can be.
		lockValues = "INTO idforge_workers (worker_id, owner, last_ms) VALUES (-1, '" + lockOwner + "', 0)"
	)
	switch d {
	case MySQL:
		// DATETIME in UTC: a TIMESTAMP would be converted through the
		// session time zone, where daylight saving makes NOW() jump.
		now = "UTC_TIMESTAMP(3)"
		stale = "UTC_TIMESTAMP(3) - INTERVAL ? MICROSECOND"
		schema = `CREATE TABLE IF NOT EXISTS idforge_workers (
	worker_id INT NOT NULL PRIMARY KEY,
	owner VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
	claimed_at DATETIME(3) NULL DEFAULT NULL,
	heartbeat_at DATETIME(3) NULL DEFAULT NULL,
	last_ms BIGINT NOT NULL DEFAULT 0
) ENGINE=InnoDB`
		lockRow = "INSERT " + lockValues + " ON DUPLICATE KEY UPDATE worker_id = worker_id"
		s.staleArg = func(d time.Duration) any { return d.Microseconds() }
		s.transient = func(err error) bool {
			var me *mysql.MySQLError
			// 1213 deadlock, 1205 lock wait timeout.
			return errors.As(err, &me) && (me.Number == 1213 || me.Number == 1205)
		}
	case Postgres:
		now = "now()"
		stale = "now() - make_interval(secs => ?)"
		schema = `CREATE TABLE IF NOT EXISTS idforge_workers (
	worker_id integer PRIMARY KEY,
	owner varchar(255) NOT NULL,
	claimed_at timestamptz,
	heartbeat_at timestamptz,
	last_ms bigint NOT NULL DEFAULT 0
)`
		lockRow = "INSERT " + lockValues + " ON CONFLICT (worker_id) DO NOTHING"
		s.staleArg = func(d time.Duration) any { return d.Seconds() }
		s.transient = func(err error) bool {
			var pe *pgconn.PgError
			// serialization_failure, deadlock_detected
			return errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01")
		}
		s.schemaRace = func(err error) bool {
			// CREATE TABLE IF NOT EXISTS checks for the table before it
			// inserts into the catalogs, so two sessions at once can
			// fail with unique_violation, duplicate_object (the row
			// type) or duplicate_table.
			var pe *pgconn.PgError
			return errors.As(err, &pe) && (pe.Code == "23505" || pe.Code == "42710" || pe.Code == "42P07")
		}
	case SQLite:
		now = "strftime('%Y-%m-%d %H:%M:%f', 'now')"
		stale = "strftime('%Y-%m-%d %H:%M:%f', 'now', ?)"
		greatest, forUpdate = "max", ""
		schema = `CREATE TABLE IF NOT EXISTS idforge_workers (
	worker_id INTEGER PRIMARY KEY,
	owner TEXT NOT NULL,
	claimed_at TEXT,
	heartbeat_at TEXT,
	last_ms INTEGER NOT NULL DEFAULT 0
)`
		lockRow = "INSERT OR IGNORE " + lockValues
		s.staleArg = func(d time.Duration) any {
			return "-" + strconv.FormatFloat(d.Seconds(), 'f', 3, 64) + " seconds"
		}
		s.transient = func(error) bool { return false }
		s.schemaRace = func(err error) bool {
			// A connection that read the catalog and must then write it
			// while another holds the write lock gets SQLITE_BUSY at once,
			// whatever the busy timeout: SQLite refuses to wait there, as
			// waiting could deadlock. The other creator finishes soon.
			var se *sqlite.Error
			return errors.As(err, &se) && (se.Code()&0xff == sqlite3.SQLITE_BUSY || se.Code()&0xff == sqlite3.SQLITE_LOCKED)
		}
	default:
		return nil, fmt.Errorf("unknown SQL dialect %q (known: mysql, postgres, sqlite)", string(d))
	}
	isStale := "CASE WHEN heartbeat_at IS NULL OR heartbeat_at < " + stale + " THEN 1 ELSE 0 END"
	r := strings.NewReplacer("{now}", now, "{stale}", stale, "{is_stale}", isStale, "{greatest}", greatest, "{for_update}", forUpdate)
	sql := func(q string) string {
		q = r.Replace(q)
		if d == Postgres {
			q = placeholder.Numbered(q)
		}
		return q
	}
	if s.schemaRace == nil {
		s.schemaRace = func(error) bool { return false }
	}
	s.create = schema
	s.probe = "SELECT COUNT(*) FROM idforge_workers WHERE worker_id = -1"
	s.lockRow = lockRow
	if forUpdate != "" {
		s.lock = sql("SELECT worker_id FROM idforge_workers WHERE worker_id = -1{for_update}")
	}
	s.scan = sql("SELECT worker_id, owner, {is_stale}, last_ms FROM idforge_workers WHERE worker_id BETWEEN 0 AND ? ORDER BY worker_id{for_update}")
	s.claim = sql("UPDATE idforge_workers SET owner = ?, claimed_at = {now}, heartbeat_at = {now} WHERE worker_id = ?")
	s.insert = sql("INSERT INTO idforge_workers (worker_id, owner, claimed_at, heartbeat_at, last_ms) VALUES (?, ?, {now}, {now}, ?)")
	s.renew = sql("UPDATE idforge_workers SET heartbeat_at = {now}, last_ms = {greatest}(last_ms, ?) WHERE worker_id = ? AND owner = ?")
	s.state = sql("SELECT owner, {is_stale}, last_ms FROM idforge_workers WHERE worker_id = ?")
	s.retake = sql("UPDATE idforge_workers SET owner = ?, claimed_at = {now}, heartbeat_at = {now}, last_ms = {greatest}(last_ms, ?)" +
		" WHERE worker_id = ? AND (owner = '' OR heartbeat_at IS NULL OR heartbeat_at < {stale}) AND last_ms <= ?")
	s.release = sql("UPDATE idforge_workers SET owner = CASE WHEN owner = ? THEN '' ELSE owner END, last_ms = {greatest}(last_ms, ?) WHERE worker_id = ?")
	return &s, nil
}
