package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idforge/idforge"
	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

// DefaultFileName is the name of the database file in the data directory
// when a store URL gives no path.
const DefaultFileName = "idforge.db"

// DefaultBusyTimeout is how long a write waits for another process holding
// the file's write lock, unless WithBusyTimeout says otherwise.
const DefaultBusyTimeout = 5 * time.Second

// Store is an idforge.Store kept in one SQLite file. It is safe for
// concurrent use. Create it with Open and release it with Close.
type Store struct {
	path string
	log  *slog.Logger
	// descCol is the description column of leaf_alloc, quoted for SQL:
	// "description" (Leaf's scripts) or "desc" (older copies of its DDL).
	descCol string

	w *sql.DB // exactly one connection; every write goes through it
	r *sql.DB // read-only connections (query_only)

	// Statements naming the description column, built by Open.
	keysSQL, insertSegmentSQL string
	// Prepared once: the claim on the writer, the lookup on the readers.
	claimStmt, keyStmt *sql.Stmt

	closed    atomic.Bool
	closeOnce sync.Once
	closeErr  error
}

var (
	_ idforge.Store           = (*Store)(nil)
	_ idforge.SegmentReturner = (*Store)(nil)
	_ idforge.Migrator        = (*Store)(nil)
	_ idforge.SerialStore     = (*Store)(nil)
)

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
// path is empty or contains '?', and the driver's error when the file
// cannot be opened or an existing leaf_alloc table lacks a column idforge
// needs. Nothing is left open when Open fails.
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
	// An absolute path also keeps SQLite from reading a name that starts
	// with "file:" as a URI.
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("sqlite: database path %q: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o750); err != nil {
		return nil, fmt.Errorf("sqlite: create directory for %s: %w", abs, err)
	}

	s := &Store{path: abs, log: o.logger}
	if err := s.open(ctx, o); err != nil {
		s.closeDBs()
		return nil, err
	}
	s.log.Debug("sqlite store opened", "path", abs)
	return s, nil
}

// dsn returns the driver's data source name for path. Every connection the
// pool opens runs these pragmas. The writer takes its write lock when a
// transaction begins (BEGIN IMMEDIATE), so a transaction never has to
// upgrade a read lock, which SQLite would refuse with SQLITE_BUSY whatever
// the busy timeout; readers are query_only.
func dsn(path string, busy time.Duration, writer bool) string {
	q := url.Values{}
	ms := max(1, busy.Milliseconds()) // 0 would turn waiting off
	q.Add("_pragma", "busy_timeout("+strconv.FormatInt(ms, 10)+")")
	if writer {
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_pragma", "synchronous(FULL)")
		q.Set("_txlock", "immediate")
	} else {
		q.Add("_pragma", "query_only(1)")
	}
	return path + "?" + q.Encode()
}

func (s *Store) open(ctx context.Context, o options) error {
	var err error
	if s.w, err = sql.Open("sqlite", dsn(s.path, o.busyTimeout, true)); err != nil {
		return fmt.Errorf("sqlite: open %s: %w", s.path, err)
	}
	s.w.SetMaxOpenConns(1)
	s.w.SetMaxIdleConns(1)

	var mode string
	if err := s.w.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return fmt.Errorf("sqlite: open %s: %w", s.path, err)
	}
	if !strings.EqualFold(mode, "wal") {
		// Still durable (synchronous=FULL), only readers and the writer
		// now wait for each other.
		s.log.Warn("sqlite: WAL journal mode unavailable; readers will block the writer",
			"path", s.path, "journal_mode", mode)
	}
	if _, err := s.w.ExecContext(ctx, schema); err != nil {
		return fmt.Errorf("sqlite: create tables in %s: %w", s.path, err)
	}
	if s.descCol, err = s.checkLeafAlloc(ctx); err != nil {
		return err
	}
	s.keysSQL = fmt.Sprintf(keysSQL, s.descCol)
	s.insertSegmentSQL = fmt.Sprintf(insertSegmentSQL, s.descCol)

	if s.r, err = sql.Open("sqlite", dsn(s.path, o.busyTimeout, false)); err != nil {
		return fmt.Errorf("sqlite: open %s: %w", s.path, err)
	}
	n := max(4, runtime.GOMAXPROCS(0))
	s.r.SetMaxOpenConns(n)
	s.r.SetMaxIdleConns(n)
	if s.claimStmt, err = s.w.PrepareContext(ctx, claimSQL); err != nil {
		return fmt.Errorf("sqlite: open %s: prepare claim: %w", s.path, err)
	}
	if s.keyStmt, err = s.r.PrepareContext(ctx, fmt.Sprintf(keySQL, s.descCol)); err != nil {
		return fmt.Errorf("sqlite: open %s: prepare key lookup: %w", s.path, err)
	}
	return nil
}

// checkLeafAlloc verifies that leaf_alloc (possibly created by Leaf or by
// hand) has the columns idforge uses and returns the name of its
// description column, quoted.
func (s *Store) checkLeafAlloc(ctx context.Context) (string, error) {
	rows, err := s.w.QueryContext(ctx, "SELECT name FROM pragma_table_info('leaf_alloc')")
	if err != nil {
		return "", fmt.Errorf("sqlite: inspect leaf_alloc in %s: %w", s.path, err)
	}
	defer rows.Close()
	cols := map[string]bool{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return "", fmt.Errorf("sqlite: inspect leaf_alloc in %s: %w", s.path, err)
		}
		cols[strings.ToLower(name)] = true
	}
	if err := rows.Err(); err != nil {
		return "", fmt.Errorf("sqlite: inspect leaf_alloc in %s: %w", s.path, err)
	}
	var missing []string
	for _, c := range []string{"biz_tag", "max_id", "step", "update_time"} {
		if !cols[c] {
			missing = append(missing, c)
		}
	}
	desc := `"description"`
	switch {
	case cols["description"]:
	case cols["desc"]:
		desc = `"desc"`
	default:
		missing = append(missing, "description")
	}
	if len(missing) > 0 {
		return "", fmt.Errorf("sqlite: table leaf_alloc in %s lacks column(s) %s; it is not Leaf's table",
			s.path, strings.Join(missing, ", "))
	}
	return desc, nil
}

// Path returns the absolute path of the database file.
func (s *Store) Path() string { return s.path }

// Ping reports whether the database file can be read. It returns an error
// wrapping idforge.ErrClosed after Close.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.checkOpen(); err != nil {
		return err
	}
	var one int
	if err := s.r.QueryRowContext(ctx, "SELECT 1 FROM leaf_alloc UNION ALL SELECT 1 LIMIT 1").Scan(&one); err != nil {
		return s.wrap(ctx, err, "ping")
	}
	return nil
}

// Close closes the database. It is idempotent: later calls return the
// first call's result. Calls made after Close return an error wrapping
// idforge.ErrClosed.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.closed.Store(true)
		s.closeErr = s.closeDBs()
		s.log.Debug("sqlite store closed", "path", s.path)
	})
	return s.closeErr
}

func (s *Store) closeDBs() error {
	var errs []error
	for _, st := range []*sql.Stmt{s.claimStmt, s.keyStmt} {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	if s.r != nil {
		errs = append(errs, s.r.Close())
	}
	if s.w != nil {
		errs = append(errs, s.w.Close())
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("sqlite: close %s: %w", s.path, err)
	}
	return nil
}

func (s *Store) checkOpen() error {
	if s.closed.Load() {
		return fmt.Errorf("%w: sqlite store %s", idforge.ErrClosed, s.path)
	}
	return nil
}

// wrap adds what was being done to a driver error. An error caused by
// Close or by the context ending wraps idforge.ErrClosed or the context's
// error, whatever the driver made of it.
func (s *Store) wrap(ctx context.Context, err error, what string) error {
	if s.closed.Load() {
		return fmt.Errorf("%w: sqlite store %s: %s: %v", idforge.ErrClosed, s.path, what, err)
	}
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		return fmt.Errorf("sqlite: %s: %w (%v)", what, cerr, err)
	}
	return fmt.Errorf("sqlite: %s: %w", what, err)
}
