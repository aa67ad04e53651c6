package sql

import (
	"strings"
	"time"

	"github.com/idforge/idforge/internal/sqldb"
	_ "github.com/idforge/idforge/internal/sqldb/mysql"    // MySQL
	_ "github.com/idforge/idforge/internal/sqldb/postgres" // Postgres
	_ "github.com/idforge/idforge/internal/sqldb/sqlite"   // SQLite
)

// Dialect names the SQL of a database: the scheme of its URLs.
type Dialect string

// The dialects this package speaks.
const (
	MySQL    Dialect = "mysql" // MySQL and MariaDB
	Postgres Dialect = "postgres"
	SQLite   Dialect = "sqlite"
)

// Table is the name of the provider's table.
const Table = "idforge_workers"

// clockColumn holds a holder's clock (unix ms) at its latest heartbeat,
// for the start-up clock check.
const clockColumn = "clock_ms BIGINT NOT NULL DEFAULT 0"

// lockOwner is the owner of the row −1, which claims lock.
const lockOwner = "#claim-lock"

// statements are the SQL of one dialect. Placeholders appear in the
// order of the arguments given in each comment.
type statements struct {
	// create creates the table when missing.
	create string
	// probe tells whether the table exists, for accounts that may not
	// create tables; probeClock whether it has clock_ms, which addClock
	// adds to a table of an earlier version.
	probe, probeClock, addClock string
	// lockRow inserts the row −1 when missing.
	lockRow string
	// lock locks row −1 for the claim transaction ("" on SQLite, which
	// locks the whole file with BEGIN IMMEDIATE).
	lock string
	// scan (stale, max) → worker_id, owner, stale (0/1), last_ms,
	// clock_ms, heartbeat age in ms of every row in 0..max, locked.
	scan string
	// claim (owner, clock, id) takes an existing row.
	claim string
	// insert (id, owner, last_ms, clock_ms) takes an absent row.
	insert string
	// renew (last, clock, id, owner) refreshes our row.
	renew string
	// state (stale, id) → owner, stale (0/1), last_ms of one row.
	state string
	// retake (owner, last, clock, id, stale, last) takes a free row back if no
	// newer time was recorded on it.
	retake string
	// release (owner, last, id) gives our row back and raises last_ms.
	release string
	// staleArg is the argument of the stale expressions: stale_after.
	staleArg any
}

// newStatements returns d's statements for rows stale after staleAfter.
// All times are the database's: d.Now, stored in d.Time columns.
func newStatements(d *sqldb.Dialect, staleAfter time.Duration) *statements {
	stale, arg := d.Ago(staleAfter)
	isStale := "CASE WHEN heartbeat_at IS NULL OR heartbeat_at < " + stale + " THEN 1 ELSE 0 END"
	r := strings.NewReplacer("{now}", d.Now, "{stale}", stale, "{is_stale}", isStale, "{greatest}", d.Greatest, "{for_update}", d.ForUpdate(), "{age}", d.Age("heartbeat_at"))
	sql := func(q string) string { return d.Rebind(r.Replace(q)) }
	s := &statements{staleArg: arg}
	s.create = "CREATE TABLE IF NOT EXISTS idforge_workers (\n\tworker_id INTEGER NOT NULL PRIMARY KEY,\n\towner " + d.Text(255) + " NOT NULL,\n" +
		"\tclaimed_at " + d.Time + ",\n\theartbeat_at " + d.Time + ",\n\tlast_ms BIGINT NOT NULL DEFAULT 0,\n\t" + clockColumn + "\n)" + d.TableOptions
	s.probe = "SELECT COUNT(*) FROM idforge_workers WHERE worker_id = -1"
	s.probeClock = "SELECT COUNT(clock_ms) FROM idforge_workers WHERE worker_id = -1"
	s.addClock = "ALTER TABLE idforge_workers ADD COLUMN " + clockColumn
	// The lock row, which no worker ID can be.
	s.lockRow = d.InsertIgnore("INSERT INTO idforge_workers (worker_id, owner, last_ms) VALUES (-1, '"+lockOwner+"', 0)", "worker_id")
	if !d.FileLock {
		s.lock = sql("SELECT worker_id FROM idforge_workers WHERE worker_id = -1{for_update}")
	}
	s.scan = sql("SELECT worker_id, owner, {is_stale}, last_ms, clock_ms, COALESCE({age}, 0) FROM idforge_workers WHERE worker_id BETWEEN 0 AND ? ORDER BY worker_id{for_update}")
	s.claim = sql("UPDATE idforge_workers SET owner = ?, clock_ms = ?, claimed_at = {now}, heartbeat_at = {now} WHERE worker_id = ?")
	s.insert = sql("INSERT INTO idforge_workers (worker_id, owner, claimed_at, heartbeat_at, last_ms, clock_ms) VALUES (?, ?, {now}, {now}, ?, ?)")
	s.renew = sql("UPDATE idforge_workers SET heartbeat_at = {now}, last_ms = {greatest}(last_ms, ?), clock_ms = ? WHERE worker_id = ? AND owner = ?")
	s.state = sql("SELECT owner, {is_stale}, last_ms FROM idforge_workers WHERE worker_id = ?")
	s.retake = sql("UPDATE idforge_workers SET owner = ?, claimed_at = {now}, heartbeat_at = {now}, last_ms = {greatest}(last_ms, ?), clock_ms = ?" +
		" WHERE worker_id = ? AND (owner = '' OR heartbeat_at IS NULL OR heartbeat_at < {stale}) AND last_ms <= ?")
	s.release = sql("UPDATE idforge_workers SET owner = CASE WHEN owner = ? THEN '' ELSE owner END, last_ms = {greatest}(last_ms, ?) WHERE worker_id = ?")
	return s
}
