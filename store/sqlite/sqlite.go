package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/datadir"
	"github.com/idforge/idforge/internal/sqldb"
	"github.com/idforge/idforge/internal/sqldb/sqlite"
	"github.com/idforge/idforge/store/internal/sqlstore"
)

// DefaultFileName is the name of the database file in the data directory
// when a store URL gives no path.
const DefaultFileName = datadir.SQLiteFile

// DefaultBusyTimeout is how long a write waits for another process holding
// the file's write lock, unless WithBusyTimeout says otherwise.
const DefaultBusyTimeout = sqldb.DefaultBusyTimeout

// Store is an idforge.Store kept in one SQLite file. It is safe for
// concurrent use, and several Stores, in one process or in several, may
// share one file. Create it with Open and release it with Close.
//
// Its methods are those of idforge.Store, idforge.SegmentReturner,
// idforge.Migrator and idforge.SerialStore, as those interfaces and the
// package documentation describe them: every write holds the file's write
// lock (BEGIN IMMEDIATE), a claim is one UPDATE … RETURNING, durable when
// it returns, and Close makes later calls fail with idforge.ErrClosed.
type Store struct {
	*shared
	path string
	// w and r are the pools shared runs on: one writer connection and
	// the read-only readers.
	w, r *sql.DB
}

// shared is the SQL store every backend is made of; embedded under this
// unexported name, it lends Store its methods and nothing else.
type shared = sqlstore.Store

// Option configures Open.
type Option func(*options)

type options struct {
	logger      *slog.Logger
	busyTimeout time.Duration
}

// WithLogger sets the logger the store reports to. The default is
// slog.Default().
func WithLogger(l *slog.Logger) Option {
	return func(o *options) {
		if l != nil {
			o.logger = l
		}
	}
}

// WithBusyTimeout sets how long a statement waits for a lock held by
// another connection to the same file (another Store or process) before it
// fails with SQLITE_BUSY. It is rounded down to whole milliseconds; d ≤ 0
// keeps DefaultBusyTimeout. Waiting also ends when the call's context does.
func WithBusyTimeout(d time.Duration) Option {
	return func(o *options) {
		if d > 0 {
			o.busyTimeout = d
		}
	}
}

// Open opens (creating when absent) the SQLite database at path, creates
// the parent directory and the tables when they do not exist, and returns
// a Store using it. A relative path is taken relative to the working
// directory. It returns an error wrapping idforge.ErrInvalidArgument when
// path is empty or contains '?', the driver's error when the file cannot
// be opened, and an error naming the columns when an existing table
// (leaf_alloc, idforge_keys or idforge_serials) lacks one idforge needs.
// Nothing is left open when Open fails.
func Open(ctx context.Context, path string, opts ...Option) (*Store, error) {
	o := options{logger: slog.Default(), busyTimeout: DefaultBusyTimeout}
	for _, opt := range opts {
		opt(&o)
	}
	if path == "" {
		return nil, fmt.Errorf("%w: sqlite: empty database path", idforge.ErrInvalidArgument)
	}
	// The driver treats everything after '?' as parameters.
	if strings.ContainsRune(path, '?') {
		return nil, fmt.Errorf("%w: sqlite: database path %q contains '?'", idforge.ErrInvalidArgument, path)
	}
	abs, err := sqlite.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	// Connections are made when first used.
	w := sqlite.OpenDB(abs, o.busyTimeout, true)
	r := sqlite.OpenDB(abs, o.busyTimeout, false)
	n := max(4, runtime.GOMAXPROCS(0))
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(n)
	if err := checkJournal(ctx, w, abs, o.logger); err != nil {
		r.Close()
		w.Close()
		return nil, err
	}
	// One writer connection, kept forever; no timeout but the caller's
	// context and busy_timeout; no retries, as waiting for the file's
	// write lock is busy_timeout's work.
	set := sqlstore.Settings{MaxOpenConns: 1, MaxIdleConns: 1, ConnMaxLifetime: -1, Timeout: -1, Retries: -1, Logger: o.logger}
	s, err := sqlstore.Open(ctx, sqlstore.Pools{Write: w, Read: r}, abs, set, backend)
	if err != nil {
		return nil, err
	}
	return &Store{shared: s, path: abs, w: w, r: r}, nil
}

// checkJournal connects the writer, which switches the file to WAL, and
// warns when that did not take.
func checkJournal(ctx context.Context, w *sql.DB, path string, log *slog.Logger) error {
	var mode string
	if err := w.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	if !strings.EqualFold(mode, "wal") {
		// Still durable (synchronous=FULL), only readers and the writer
		// now wait for each other.
		log.Warn("sqlite: WAL journal mode unavailable; readers will block the writer",
			"path", path, "journal_mode", mode)
	}
	return nil
}

// Path returns the absolute path of the database file.
func (s *Store) Path() string { return s.path }
