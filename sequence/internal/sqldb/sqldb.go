// Package sqldb is the SQL plumbing the sequence backends share: opening
// MySQL/MariaDB, PostgreSQL and SQLite from URLs, telling the dialects
// apart, quoting, placeholders, per-call timeouts and retries of
// transient failures.
package sqldb

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	mysqldrv "github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/dsn"
	"github.com/idforge/idforge/internal/dsn/mysqldsn"
	"github.com/idforge/idforge/internal/placeholder"
	"github.com/idforge/idforge/internal/wait"
)

// Dialect is an SQL database family.
type Dialect uint8

// The dialects.
const (
	MySQL    Dialect = iota + 1 // MySQL and MariaDB, go-sql-driver/mysql
	Postgres                    // PostgreSQL, pgx through database/sql
	SQLite                      // SQLite, modernc.org/sqlite
)

// String returns the dialect's URL scheme.
func (d Dialect) String() string {
	switch d {
	case MySQL:
		return "mysql"
	case Postgres:
		return "postgres"
	case SQLite:
		return "sqlite"
	}
	return "unknown"
}

// Forms are the URLs Open takes, by scheme, for help texts.
var Forms = map[string]string{
	"mysql":      "mysql://user:password@host:3306/database",
	"postgres":   "postgres://user:password@host:5432/database",
	"postgresql": "postgresql://user:password@host:5432/database",
	"sqlite":     "sqlite:///abs/path/seq.db",
}

// DefaultTimeout bounds each call whose context has no deadline.
const DefaultTimeout = 5 * time.Second

// DB is a pool with its dialect.
type DB struct {
	*sql.DB
	// Dialect is the database family.
	Dialect Dialect
	// Where names the database in messages, without secrets.
	Where string
	// Timeout bounds calls whose context has no deadline (see Ctx).
	Timeout time.Duration
	owned   bool
}

// Wrap returns db with its dialect, found from its driver. The caller
// keeps owning db: Close does not close it.
func Wrap(db *sql.DB) (*DB, error) {
	var d Dialect
	switch db.Driver().(type) {
	case *mysqldrv.MySQLDriver:
		d = MySQL
	case *stdlib.Driver:
		d = Postgres
	case *sqlite.Driver:
		d = SQLite
	default:
		return nil, fmt.Errorf("unsupported database driver %T (want go-sql-driver/mysql, pgx stdlib or modernc sqlite)", db.Driver())
	}
	return &DB{DB: db, Dialect: d, Where: d.String() + " database", Timeout: DefaultTimeout}, nil
}

// Migrate is the body of the backends' exported Migrate functions, which
// take a plain pool: it finds db's dialect, checks the table name and
// runs create. Its errors wrap idforge.ErrInvalidArgument and start with
// who ("sqlrow").
func Migrate(ctx context.Context, db *sql.DB, who, table string, create func(context.Context, *DB, string) error) error {
	d, err := Wrap(db)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", idforge.ErrInvalidArgument, who, err)
	}
	if !ValidIdent(table) {
		return fmt.Errorf("%w: %s: table name %q (want letters, digits and _)", idforge.ErrInvalidArgument, who, table)
	}
	return create(ctx, d, table)
}

// Close closes the pool if Open opened it.
func (db *DB) Close() error {
	if db.owned {
		return db.DB.Close()
	}
	return nil
}

// Open opens the database of u, whose scheme is "mysql", "postgres",
// "postgresql" or "sqlite" (the caller strips its own prefix, such as
// "sqlrow+"), and pings it. It takes these parameters from q, leaving the
// rest for the driver:
//
//	timeout         bound on each call without an earlier deadline (5s)
//	max_open_conns  connections at most (MySQL, PostgreSQL; 16 by default)
//	busy_timeout    how long SQLite waits for another writer (10s)
//
// SQLite runs in WAL mode with synchronous=FULL and takes its write lock
// when a transaction begins, through one connection per pool.
func Open(ctx context.Context, u *url.URL, q *dsn.Query) (*DB, error) {
	timeout := q.Duration("timeout", DefaultTimeout, time.Millisecond)
	where := *u
	where.RawQuery, where.Fragment = "", ""
	db := &DB{Timeout: timeout, Where: dsn.Redacted(&where), owned: true}
	var err error
	switch u.Scheme {
	case "mysql":
		maxOpen := q.Int("max_open_conns", 16, 1, 10000)
		var cfg *mysqldrv.Config
		if cfg, err = MySQLConfig(u, q); err != nil {
			return nil, err
		}
		var conn driver.Connector
		if conn, err = mysqldrv.NewConnector(cfg); err != nil {
			return nil, q.Errorf("%v", err)
		}
		db.DB, db.Dialect = sql.OpenDB(conn), MySQL
		db.SetMaxOpenConns(int(maxOpen))
		db.SetMaxIdleConns(int(maxOpen))
	case "postgres", "postgresql":
		maxOpen := q.Int("max_open_conns", 16, 1, 10000)
		if err := q.Err(); err != nil {
			return nil, err
		}
		pg := *u
		pg.Scheme = "postgres"
		pg.RawQuery = q.Rest().Encode()
		pg.Fragment = ""
		if db.DB, err = sql.Open("pgx", pg.String()); err != nil {
			return nil, q.Errorf("%v", err)
		}
		db.Dialect = Postgres
		db.SetMaxOpenConns(int(maxOpen))
		db.SetMaxIdleConns(int(maxOpen))
	case "sqlite":
		busy := q.Duration("busy_timeout", 10*time.Second, time.Millisecond)
		if err := q.Done(); err != nil {
			return nil, err
		}
		path, err := q.SQLitePath("")
		if err != nil {
			return nil, err
		}
		v := url.Values{}
		v.Add("_pragma", "busy_timeout("+strconv.FormatInt(busy.Milliseconds(), 10)+")")
		v.Add("_pragma", "journal_mode(WAL)")
		v.Add("_pragma", "synchronous(FULL)")
		v.Set("_txlock", "immediate")
		if db.DB, err = sql.Open("sqlite", path+"?"+v.Encode()); err != nil {
			return nil, q.Errorf("%v", err)
		}
		db.Dialect = SQLite
		db.SetMaxOpenConns(1) // one writer per pool; file locks order the pools
		db.SetMaxIdleConns(1)
	default:
		return nil, q.Errorf("database scheme %q (want mysql, postgres or sqlite)", u.Scheme)
	}
	pctx, cancel := db.Ctx(ctx)
	defer cancel()
	if err := db.PingContext(pctx); err != nil {
		db.DB.Close()
		return nil, fmt.Errorf("%s: %w", db.Where, err)
	}
	return db, nil
}

// MySQLConfig converts u (mysql://user:password@host:port/database) and
// the parameters left in q into the driver's configuration. Parameters
// the driver does not know become session variables. Unless the URL says
// otherwise, the driver interpolates arguments into statements
// (interpolateParams=true), saving two round trips per statement. q must hold no
// error and nothing else the caller wants.
func MySQLConfig(u *url.URL, q *dsn.Query) (*mysqldrv.Config, error) {
	if err := q.Err(); err != nil {
		return nil, err
	}
	database := strings.TrimPrefix(u.Path, "/")
	if database == "" || strings.Contains(database, "/") {
		return nil, q.Errorf("name one database: mysql://user:password@host:port/database")
	}
	rest := q.Rest()
	cfg, err := mysqldsn.Config(u, rest, database)
	if err != nil {
		return nil, q.Errorf("%v", err)
	}
	if _, set := rest["interpolateParams"]; !set {
		// One round trip per statement instead of prepare, execute, close.
		cfg.InterpolateParams = true
	}
	return cfg, nil
}

// Ctx bounds ctx by the pool's timeout unless it has a deadline.
func (db *DB) Ctx(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, db.Timeout)
}

// Rebind turns the ? placeholders of query into $1, $2 … for PostgreSQL.
// Queries must not contain a literal '?'.
func (db *DB) Rebind(query string) string {
	if db.Dialect != Postgres {
		return query
	}
	return placeholder.Numbered(query)
}

// Quote quotes an identifier checked by ValidIdent.
func (db *DB) Quote(ident string) string {
	if db.Dialect == MySQL {
		return "`" + ident + "`"
	}
	return `"` + ident + `"`
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,62}$`)

// ValidIdent reports whether name can be a table name: a letter or '_'
// and up to 62 more letters, digits or '_'.
func ValidIdent(name string) bool { return identRE.MatchString(name) }

// Retry runs fn, bounded by the pool's timeout, and again (at most twice
// more, after 20 and 40 ms) while it fails with a transient error. fn
// must be safe to repeat: a repeated increment may leave a gap, never a
// duplicate.
func (db *DB) Retry(ctx context.Context, fn func(ctx context.Context) error) error {
	ctx, cancel := db.Ctx(ctx)
	defer cancel()
	for attempt := 0; ; attempt++ {
		err := fn(ctx)
		if err == nil || attempt == 2 || !Transient(err) {
			return err
		}
		if wait.For(ctx, time.Duration(20<<attempt)*time.Millisecond) != nil {
			return err
		}
	}
}

// Transient reports whether retrying err may succeed: a deadlock, a lock
// wait timeout, a busy SQLite file or a broken connection. Context errors
// never are.
func Transient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var me *mysqldrv.MySQLError
	if errors.As(err, &me) {
		switch me.Number {
		case 1205, 1213, 1040, 1053, 1927, 2006, 2013:
			return true
		}
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code == "40001" || pe.Code == "40P01" || pe.Code == "55P03" || pe.Code == "53300" ||
			strings.HasPrefix(pe.Code, "08") || strings.HasPrefix(pe.Code, "57P")
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		c := se.Code() & 0xff
		return c == sqlite3.SQLITE_BUSY || c == sqlite3.SQLITE_LOCKED
	}
	if pgconn.SafeToRetry(err) {
		return true
	}
	switch {
	case errors.Is(err, driver.ErrBadConn), errors.Is(err, mysqldrv.ErrInvalidConn),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return true
	}
	var ne net.Error
	return errors.As(err, &ne)
}

// OutOfRange reports whether err says a value overflowed its column.
func OutOfRange(err error) bool {
	var me *mysqldrv.MySQLError
	if errors.As(err, &me) {
		return me.Number == 1690 || me.Number == 1264 || me.Number == 167
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code == "22003" || pe.Code == "2200H" // numeric_value_out_of_range, sequence_generator_limit_exceeded
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code()&0xff == sqlite3.SQLITE_FULL
	}
	return false
}

// StripScheme returns a copy of u with the prefix "<strategy>+" removed
// from its scheme ("sqlrow+mysql" → "mysql").
func StripScheme(u *url.URL) *url.URL {
	c := *u
	if i := strings.IndexByte(c.Scheme, '+'); i >= 0 {
		c.Scheme = c.Scheme[i+1:]
	}
	return &c
}

// Places returns the databases a URL names: its own, then one per item
// of also, which for MySQL and PostgreSQL is "host:port/database" (the
// user, password and parameters are base's) and for SQLite a file path.
func Places(base *url.URL, also []string) ([]*url.URL, error) {
	out := []*url.URL{base}
	for _, a := range also {
		p := *base
		if base.Scheme == "sqlite" {
			p.Opaque, p.Path = "", a
			if !strings.HasPrefix(a, "/") {
				p.Opaque, p.Path = url.PathEscape(a), ""
			}
		} else {
			host, db, ok := strings.Cut(a, "/")
			if !ok || host == "" || db == "" || strings.Contains(db, "/") {
				return nil, fmt.Errorf("also=%q: want host:port/database", a)
			}
			p.Host, p.Path, p.RawPath = host, "/"+db, ""
		}
		out = append(out, &p)
	}
	return out, nil
}
