// Package sqldb is idforge's one owner of SQL: every SQL-backed store,
// sequence source, counter and worker-ID provider codes against it and
// imports no driver.
//
// A Dialect is one engine (MySQL/MariaDB, PostgreSQL, SQLite): how a URL
// becomes a connection pool, its SQL (placeholders, quoting, upserts, row
// locks, DDL types), what its errors mean (KindOf, Transient) and how it
// names the server for the fail-over fence (Fence). Each engine lives in
// a sub-package (sqldb/mysql, sqldb/postgres, sqldb/sqlite), the only
// importer of its driver, which registers its Dialect when imported, so
// that a program links only the drivers it uses. Pools opened here share
// one set of defaults (Settings).
package sqldb

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/dsn"
)

// Dialect is what differs from one SQL engine to another. An engine
// package fills one in and registers it (Register); its users read it.
type Dialect struct {
	// Name is the engine's URL scheme and its name in messages: mysql,
	// postgres, sqlite.
	Name string
	// Schemes are the URL schemes Open takes for it (Name and aliases),
	// and Form the URL a user writes, for help texts.
	Schemes []string
	Form    string

	// Numbered says that placeholders are $1, $2 … rather than '?' (see
	// Rebind), QuoteChar quotes an identifier.
	Numbered  bool
	QuoteChar string
	// FileLock says that a write transaction locks the whole database
	// (SQLite): there are no row locks, and a transaction that reads
	// before it writes must take the write lock first.
	FileLock bool
	// Returning says that UPDATE and INSERT take RETURNING; without it
	// (MySQL) a new value comes back as LAST_INSERT_ID(expr).
	Returning bool
	// OnDuplicateKey says the engine's upsert is INSERT … ON DUPLICATE KEY
	// UPDATE (MySQL) rather than ON CONFLICT (see InsertIgnore, Upsert).
	OnDuplicateKey bool
	// PrepareHot says that preparing a hot statement once saves round trips
	// (the driver would prepare and close it on every call).
	PrepareHot bool
	// Greatest is the two-argument maximum function; Now the current UTC
	// time with milliseconds, as stored in a Time column; Ago(d) the
	// expression of Now minus d, with one placeholder, and its argument;
	// Age(col) the milliseconds from a Time column to Now, an integer.
	Greatest, Now string
	Ago           func(d time.Duration) (expr string, arg any)
	Age           func(col string) string

	// DDL: TableOptions ends a CREATE TABLE (" ENGINE=InnoDB"); Text(n)
	// is a column of up to n characters compared byte for byte; Time a
	// column holding Now; Stamp a time column set on insert; AutoID an
	// auto-increment primary key column (without its name).
	TableOptions   string
	Text           func(n int) string
	Time, Stamp    string
	AutoID         string
	TableExists    string // one boolean: does the table (one argument) exist
	MaxOpenDefault int    // Settings.MaxOpenConns when left zero

	// Kind judges an error of the engine's driver; Other for any other.
	Kind func(err error) Kind
	// Owns reports whether a pool's driver is the engine's (see Wrap).
	Owns func(driver.Driver) bool
	// Open opens the pool of a URL of Schemes, taking the engine's own
	// parameters from q and giving the rest to the driver. set has its
	// defaults; dataDir is where "sqlite:" points. It does not connect.
	Open func(u *url.URL, q *dsn.Query, set Settings, dataDir string) (*sql.DB, error)
	// FenceServer returns an expression naming the server a connection is
	// on (see Fence), or is nil when the engine has no replicas to fail
	// over to. CreateFence creates the fence's table holding its row in
	// one step no reader can see half done.
	FenceServer func(ctx context.Context, q Querier) (string, error)
	CreateFence func(ctx context.Context, db *sql.DB, server string) error
	// RaiseAutoID makes an AutoID column's next value above floor, never
	// lowering it.
	RaiseAutoID func(ctx context.Context, q Querier, table string, floor int64) error
}

// Querier is a *sql.DB, *sql.Conn or *sql.Tx.
type Querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

var dialects []*Dialect

// Register makes d known to Open, Wrap, Lookup and KindOf. Engine
// packages call it from init, before anything reads the list.
func Register(d *Dialect) { dialects = append(dialects, d) }

// Dialects returns the registered dialects.
func Dialects() []*Dialect { return dialects }

// Lookup returns the dialect of a URL scheme, nil when none is registered.
func Lookup(scheme string) *Dialect {
	for _, d := range Dialects() {
		for _, s := range d.Schemes {
			if s == scheme {
				return d
			}
		}
	}
	return nil
}

// Rebind turns the '?' placeholders of query into $1, $2 … where the
// engine numbers them. query must not hold a literal '?'.
func (d *Dialect) Rebind(query string) string {
	if !d.Numbered {
		return query
	}
	var b strings.Builder
	n := 0
	for _, part := range strings.SplitAfter(query, "?") {
		if p, ok := strings.CutSuffix(part, "?"); ok {
			n++
			part = p + "$" + strconv.Itoa(n)
		}
		b.WriteString(part)
	}
	return b.String()
}

// Quote quotes an identifier checked by ValidIdent.
func (d *Dialect) Quote(ident string) string { return d.QuoteChar + ident + d.QuoteChar }

// ForUpdate is the suffix that locks the rows a SELECT reads until the
// transaction ends; "" where the transaction locks the file (FileLock).
func (d *Dialect) ForUpdate() string {
	if d.FileLock {
		return ""
	}
	return " FOR UPDATE"
}

// InsertIgnore makes insert (INSERT INTO t (…) VALUES (…)) do nothing
// when a row with the same key column exists.
func (d *Dialect) InsertIgnore(insert, key string) string {
	if d.OnDuplicateKey {
		return insert + " ON DUPLICATE KEY UPDATE " + key + " = " + key
	}
	return insert + " ON CONFLICT (" + key + ") DO NOTHING"
}

// Upsert makes insert set cols to the inserted values when a row with the
// same key column exists.
func (d *Dialect) Upsert(insert, key string, cols ...string) string {
	set := make([]string, len(cols))
	for i, c := range cols {
		set[i] = c + " = EXCLUDED." + c
		if d.OnDuplicateKey {
			set[i] = c + " = VALUES(" + c + ")"
		}
	}
	if d.OnDuplicateKey {
		return insert + " ON DUPLICATE KEY UPDATE " + strings.Join(set, ", ")
	}
	return insert + " ON CONFLICT (" + key + ") DO UPDATE SET " + strings.Join(set, ", ")
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,62}$`)

// ValidIdent reports whether name can be a table name: a letter or '_'
// and up to 62 more letters, digits or '_'.
func ValidIdent(name string) bool { return identRE.MatchString(name) }

// Kind is what an error of a database means to its caller.
type Kind uint8

// The kinds of errors.
const (
	Other      Kind = iota
	Transient       // retrying may succeed: a deadlock, lock wait timeout, busy file, lost or refused connection
	Duplicate       // a unique key was violated (or two sessions created one object at once)
	OutOfRange      // a value overflowed its column
	NoTable         // the table does not exist
	NoDatabase      // the database does not exist (see NoDatabaseError)
)

// KindOf returns what err means, asking each registered engine; a
// connection that failed at the network level is Transient, and a
// context's end never is.
func KindOf(err error) Kind {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return Other
	}
	for _, d := range Dialects() {
		if k := d.Kind(err); k != Other {
			return k
		}
	}
	var ne net.Error
	switch {
	case errors.Is(err, driver.ErrBadConn), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, net.ErrClosed), errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.EPIPE), errors.As(err, &ne):
		return Transient
	}
	return Other
}

// IsTransient reports whether retrying err may succeed (KindOf is
// Transient).
func IsTransient(err error) bool { return KindOf(err) == Transient }

// NoDatabaseError is how a pool of this package fails to connect to a
// database that does not exist: its text says so and gives the command
// that creates it.
type NoDatabaseError struct {
	Err    error
	Create string // the shell command that creates the database
}

func (e *NoDatabaseError) Error() string {
	return e.Err.Error() + "\nthe database does not exist: create it with\n    " + e.Create
}

func (e *NoDatabaseError) Unwrap() error { return e.Err }

// Connector wraps an engine's connector so that a refused connection to a
// missing database fails with a *NoDatabaseError whose Create is create.
func Connector(c driver.Connector, create string) driver.Connector {
	return noDatabase{c, create}
}

type noDatabase struct {
	driver.Connector
	create string
}

func (c noDatabase) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil && KindOf(err) == NoDatabase {
		return nil, &NoDatabaseError{Err: err, Create: c.create}
	}
	return conn, err
}

// Defaults of the Settings fields left zero. A server pool keeps at most
// 10 connections: the stores' long-documented figure, and enough for a
// source, whose increments queue on one row's lock. A call is bounded by
// 3 s, the stores' figure: a request waits on a source's call, and a
// failing database should fail it (or fail over) soon.
const (
	DefaultMaxOpenConns    = 10
	DefaultMaxIdleConns    = 5
	DefaultConnMaxLifetime = 30 * time.Minute
	DefaultTimeout         = 3 * time.Second
	DefaultRetries         = 2
	// DefaultBusyTimeout is how long SQLite waits for another
	// connection's write lock.
	DefaultBusyTimeout = 5 * time.Second
)

// Settings configure a pool and its calls. Every field may be left zero
// for its default.
type Settings struct {
	// MaxOpenConns caps the connections to the server. 0 means the
	// dialect's default (DefaultMaxOpenConns; 1 for SQLite's writer).
	MaxOpenConns int
	// MaxIdleConns is how many idle connections are kept for reuse. 0
	// means DefaultMaxIdleConns; a negative value keeps none.
	MaxIdleConns int
	// ConnMaxLifetime closes connections once they are this old. 0 means
	// DefaultConnMaxLifetime; a negative value keeps them forever.
	ConnMaxLifetime time.Duration
	// Timeout bounds each call (with its retries) whose context has no
	// earlier deadline. 0 means DefaultTimeout. A store's Migrate is
	// bounded by its context only: DDL may legitimately wait for locks.
	// (store/sqlite sets it negative: no bound but the context;
	// WithDefaults refuses that for a server.)
	Timeout time.Duration
	// Retries is how many times a store's ClaimSegment tries again after
	// a transient failure (Transient), waiting 50 ms, then 100 ms, and so
	// on. 0 means DefaultRetries; a negative value disables retries.
	Retries int
	// BusyTimeout is how long SQLite waits for another connection's
	// lock. 0 means the URL's busy_timeout, or DefaultBusyTimeout.
	BusyTimeout time.Duration
	// ForMigrate lets a store open on a database that has no leaf_alloc
	// table yet, so that Migrate can create it (this is what
	// `idforge migrate` does). Until the table exists, every other call
	// fails with an error saying to run `idforge migrate`.
	ForMigrate bool
	// Logger receives the store's log records. Nil means slog.Default().
	Logger *slog.Logger
}

// WithDefaults checks s and fills in the fields left zero. It returns an
// error wrapping idforge.ErrInvalidArgument, starting with name, for a
// negative MaxOpenConns or Timeout.
func (s Settings) WithDefaults(name string) (Settings, error) {
	if s.MaxOpenConns < 0 || s.Timeout < 0 {
		return s, fmt.Errorf("%w: %s: negative MaxOpenConns or Timeout", idforge.ErrInvalidArgument, name)
	}
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&s.MaxOpenConns, DefaultMaxOpenConns)
	def(&s.MaxIdleConns, DefaultMaxIdleConns)
	def(&s.Retries, DefaultRetries)
	if s.ConnMaxLifetime == 0 {
		s.ConnMaxLifetime = DefaultConnMaxLifetime
	}
	if s.Timeout == 0 {
		s.Timeout = DefaultTimeout
	}
	if s.Logger == nil {
		s.Logger = slog.Default()
	}
	return s, nil
}

// Apply sets db's pool to s (whose defaults are applied).
func (s Settings) Apply(db *sql.DB) {
	db.SetMaxOpenConns(s.MaxOpenConns)
	db.SetMaxIdleConns(max(s.MaxIdleConns, 0))
	db.SetConnMaxLifetime(max(s.ConnMaxLifetime, 0))
}
