// Package sqlite is SQLite's sqldb.Dialect, and the only importer of
// modernc.org/sqlite: the file a URL names, the pragmas every connection
// runs, and the meaning of the library's result codes.
package sqlite

import (
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/datadir"
	"github.com/idforge/idforge/internal/dsn"
	"github.com/idforge/idforge/internal/sqldb"
)

// Form is the URL this engine takes.
const Form = "sqlite:///abs/path/idforge.db"

// Dialect is SQLite's: a file with one writer at a time, whose write
// transactions lock the whole file.
var Dialect = &sqldb.Dialect{
	Name: "sqlite", Schemes: []string{"sqlite"}, Form: Form,
	QuoteChar: `"`, FileLock: true, Returning: true,
	PrepareHot: true, // saves compiling a hot statement each time
	Greatest:   "max",
	Now:        "strftime('%Y-%m-%d %H:%M:%f', 'now')",
	Ago: func(d time.Duration) (string, any) {
		return "strftime('%Y-%m-%d %H:%M:%f', 'now', ?)", "-" + strconv.FormatFloat(d.Seconds(), 'f', 3, 64) + " seconds"
	},
	Age: func(col string) string {
		return "CAST((julianday('now') - julianday(" + col + ")) * 86400000 AS INTEGER)"
	},
	Text:           func(n int) string { return fmt.Sprintf("varchar(%d)", n) },
	Time:           "TEXT",
	Stamp:          "text NOT NULL DEFAULT CURRENT_TIMESTAMP",
	AutoID:         "INTEGER PRIMARY KEY AUTOINCREMENT",
	TableExists:    "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?)",
	MaxOpenDefault: 1, // one writer per pool; file locks order the pools
	Kind:           kind,
	Owns:           func(d driver.Driver) bool { _, ok := d.(*sqlite.Driver); return ok },
	Open:           openURL,
}

func init() { sqldb.Register(Dialect) }

func kind(err error) sqldb.Kind {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return sqldb.Other
	}
	switch se.Code() {
	case sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY, sqlite3.SQLITE_CONSTRAINT_UNIQUE:
		return sqldb.Duplicate
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
		// Also what a connection that read the catalog gets at once, busy
		// timeout or not, when it must write it while another holds the
		// write lock: waiting there could deadlock.
		return sqldb.Transient
	case sqlite3.SQLITE_FULL:
		return sqldb.OutOfRange
	}
	return sqldb.Other
}

// Path returns the database file a SQLite URL names:
//
//	sqlite:///abs/path/idforge.db   /abs/path/idforge.db
//	sqlite:relative/path.db         relative/path.db (from the working directory;
//	                                a definition's is made absolute first: InDataDir)
//	sqlite: or sqlite://            <dataDir>/idforge.db (datadir.SQLiteFile)
//
// Its error (q's) says when the URL has a host or a user
// ("sqlite://name.db" is a host, not a file: write "sqlite:name.db"), or
// no path while dataDir is empty. The query is not examined.
func Path(u *url.URL, q *dsn.Query, dataDir string) (string, error) {
	const write = "write sqlite:relative/file.db or sqlite:///absolute/file.db"
	if u.Host != "" || u.User != nil {
		return "", q.Errorf("has a host; %s", write)
	}
	path := u.Path
	if u.Opaque != "" {
		p, err := url.PathUnescape(u.Opaque)
		if err != nil {
			return "", q.Errorf("%v", err)
		}
		path = p
	}
	if path == "" {
		if dataDir == "" {
			return "", q.Errorf("gives no file and no data directory is set; %s", write)
		}
		path = filepath.Join(dataDir, datadir.SQLiteFile)
	}
	return filepath.FromSlash(path), nil
}

// InDataDir returns raw, the URL of a source or counter a node defines
// (in its configuration file or through the API), with a relative SQLite
// file (sqlite:counters.db, sqlrow+sqlite:seq.db) made absolute in
// dataDir: a definition has no working directory of its own, and means
// the same file wherever the node was started. Any other URL, and any
// URL when dataDir is empty, is returned as it is (its opener checks it).
// A relative file that exists in the working directory but not in
// dataDir is refused with an error wrapping idforge.ErrInvalidArgument
// that says to move it: opening a new, empty one in its place could
// repeat the numbers it counted.
func InDataDir(raw, dataDir string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || dataDir == "" || u.Host != "" || u.User != nil {
		return raw, nil
	}
	if scheme := strings.ToLower(u.Scheme); scheme != "sqlite" && !strings.HasSuffix(scheme, "+sqlite") {
		return raw, nil
	}
	rel := u.Path
	if u.Opaque != "" {
		if rel, err = url.PathUnescape(u.Opaque); err != nil {
			return raw, nil
		}
	}
	rel = filepath.FromSlash(rel)
	if rel == "" || filepath.IsAbs(rel) {
		return raw, nil
	}
	abs, err := filepath.Abs(filepath.Join(dataDir, rel))
	if err != nil {
		return raw, nil
	}
	if _, err := os.Stat(rel); err == nil {
		if _, err := os.Stat(abs); errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("%w: %s: a definition's relative SQLite file opens in the data directory, as %s, but %s is in the working directory: move it there, or give its absolute path (sqlite:///…), so that nothing it counted is counted again",
				idforge.ErrInvalidArgument, dsn.RedactedString(raw), abs, rel)
		}
	}
	u.Opaque, u.Path, u.RawPath = "", filepath.ToSlash(abs), ""
	return u.String(), nil
}

// Abs returns the absolute form of path, which also keeps SQLite from
// reading a name that starts with "file:" as a URI, once its directory
// exists. It refuses a path holding '?', which the driver would read as
// parameters.
func Abs(path string) (string, error) {
	if strings.ContainsRune(path, '?') {
		return "", fmt.Errorf("database path %q contains '?'", path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("database path %q: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o750); err != nil {
		return "", fmt.Errorf("create directory for %s: %w", abs, err)
	}
	return abs, nil
}

// OpenDB returns a pool on the file at abs (see Abs). Every connection
// waits up to busy for another's lock (rounded down to milliseconds, at
// least one). A writer's connections run in WAL mode with
// synchronous=FULL and take the write lock when a transaction begins
// (BEGIN IMMEDIATE), so that a transaction never has to upgrade a read
// lock, which SQLite would refuse with SQLITE_BUSY whatever the busy
// timeout; a reader's connections are query_only. It does not connect.
func OpenDB(abs string, busy time.Duration, writer bool) *sql.DB {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout("+strconv.FormatInt(max(1, busy.Milliseconds()), 10)+")")
	if writer {
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_pragma", "synchronous(FULL)")
		q.Set("_txlock", "immediate")
	} else {
		q.Add("_pragma", "query_only(1)")
	}
	db, _ := sql.Open("sqlite", abs+"?"+q.Encode()) // fails only for an unknown driver
	return db
}

// openURL is Dialect.Open: a writer pool on the file of u, which takes no
// parameter but the busy wait.
func openURL(u *url.URL, q *dsn.Query, set sqldb.Settings, dataDir string) (*sql.DB, error) {
	busy := set.BusyTimeout
	if busy == 0 {
		busy = q.Duration("busy_timeout", sqldb.DefaultBusyTimeout, time.Millisecond)
	}
	if err := q.Done(); err != nil {
		return nil, err
	}
	path, err := Path(u, q, dataDir)
	if err != nil {
		return nil, err
	}
	abs, err := Abs(path)
	if err != nil {
		return nil, q.Errorf("%v", err)
	}
	return OpenDB(abs, busy, true), nil
}
