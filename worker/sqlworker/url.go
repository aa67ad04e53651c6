package sqlworker

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	mysqldrv "github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/datadir"
	"github.com/idforge/idforge/internal/dsn"
	"github.com/idforge/idforge/internal/dsn/mysqldsn"
	"github.com/idforge/idforge/internal/dsn/pgdsn"
	"github.com/idforge/idforge/worker"
)

func init() {
	worker.Register("mysql", openURL)
	worker.Register("postgres", openURL)
	worker.Register("postgresql", openURL)
	worker.Register("sqlite", openURL)
}

// maxConns is the pool of a database opened from a URL: a node renews
// one row at a time.
const maxConns = 2

// openURL is the worker.Opener for the package's schemes (see the package
// doc). It opens the pool but does not connect.
func openURL(ctx context.Context, u *url.URL, opts worker.Options) (worker.Provider, error) {
	bad := func(format string, args ...any) (worker.Provider, error) {
		return nil, fmt.Errorf("%w: %s worker URL %q: %s", idforge.ErrInvalidArgument, u.Scheme, dsn.Redacted(u), fmt.Sprintf(format, args...))
	}
	if u.Fragment != "" {
		return bad("has a fragment")
	}
	cfg := Config{Name: dsn.Redacted(u)}
	query := u.Query()
	err := dsn.Take(query,
		dsn.Duration("stale_after", &cfg.StaleAfter, time.Millisecond),
		dsn.Duration("timeout", &cfg.Timeout, time.Nanosecond))
	if err != nil {
		return bad("%v", err)
	}
	timeout := cfg.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}

	switch u.Scheme {
	case "mysql":
		cfg.Dialect = MySQL
		cfg.DB, err = openMySQL(u, query, timeout)
	case "postgres", "postgresql":
		cfg.Dialect = Postgres
		cfg.DB, err = openPostgres(u, query, timeout)
	case "sqlite":
		cfg.Dialect = SQLite
		cfg.DB, err = openSQLite(u, query, timeout, opts.DataDir)
	default:
		err = fmt.Errorf("unknown scheme")
	}
	if err != nil {
		return bad("%v", err)
	}
	cfg.DB.SetMaxOpenConns(maxConns)
	cfg.DB.SetMaxIdleConns(maxConns)
	p, err := New(cfg, opts)
	if err != nil {
		cfg.DB.Close()
		return nil, err
	}
	p.owns = true
	return p, nil
}

// openMySQL opens mysql://user:password@host:port/database; query holds
// the driver's parameters.
func openMySQL(u *url.URL, query url.Values, timeout time.Duration) (*sql.DB, error) {
	if u.Opaque != "" {
		return nil, fmt.Errorf("write mysql://user:password@host:port/database")
	}
	db := strings.TrimPrefix(u.Path, "/")
	if db == "" || strings.Contains(db, "/") {
		return nil, fmt.Errorf("names no database; write mysql://user:password@host:port/database")
	}
	drv, err := mysqldsn.Config(u, query, db)
	if err != nil {
		return nil, err
	}
	// Renewals count matched rows, not changed ones.
	drv.ClientFoundRows = true
	if drv.Timeout == 0 {
		drv.Timeout = timeout
	}
	c, err := mysqldrv.NewConnector(drv)
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(c), nil
}

// openPostgres opens postgres://user:password@host:port/database; query
// holds pgx's parameters.
func openPostgres(u *url.URL, query url.Values, timeout time.Duration) (*sql.DB, error) {
	if u.Opaque != "" {
		return nil, fmt.Errorf("write postgres://user:password@host:port/database")
	}
	cc, err := pgdsn.Config(u, query)
	if err != nil {
		return nil, err
	}
	if cc.ConnectTimeout == 0 {
		cc.ConnectTimeout = timeout
	}
	return stdlib.OpenDB(*cc), nil
}

// openSQLite opens the file of sqlite:///abs/path.db, sqlite:rel/path.db,
// or the node's own database file for "sqlite:" and "sqlite://".
func openSQLite(u *url.URL, query url.Values, timeout time.Duration, dataDir string) (*sql.DB, error) {
	if u.Host != "" || u.User != nil {
		return nil, fmt.Errorf("has a host; write sqlite:relative/file.db or sqlite:///absolute/file.db")
	}
	for name := range query {
		return nil, fmt.Errorf("unknown parameter %q (known: stale_after, timeout)", name)
	}
	path := u.Path
	if u.Opaque != "" {
		p, err := url.PathUnescape(u.Opaque)
		if err != nil {
			return nil, err
		}
		path = p
	}
	if path == "" {
		if dataDir == "" {
			return nil, fmt.Errorf("gives no file and no data directory is set")
		}
		path = filepath.Join(dataDir, datadir.SQLiteFile)
	}
	if strings.ContainsRune(path, '?') {
		return nil, fmt.Errorf("path %q contains '?'", path)
	}
	abs, err := filepath.Abs(filepath.FromSlash(path))
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o750); err != nil {
		return nil, err
	}
	q := url.Values{}
	q.Add("_pragma", "busy_timeout("+strconv.FormatInt(max(1, timeout.Milliseconds()), 10)+")")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(FULL)")
	return sql.Open("sqlite", abs+"?"+q.Encode())
}
