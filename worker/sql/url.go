package sql

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/closeonce"
	"github.com/idforge/idforge/internal/dsn"
	"github.com/idforge/idforge/internal/dsn/mysqldsn"
	"github.com/idforge/idforge/internal/dsn/pgdsn"
	"github.com/idforge/idforge/worker"
)

func init() {
	for _, s := range []worker.Scheme{
		{Name: "mysql", Form: "mysql://user:password@host:3306/database?stale_after=30s", Doc: "a row in a MySQL or MariaDB table"},
		{Name: "postgres", Form: "postgres://user:password@host:5432/database?stale_after=30s", Doc: "a row in a PostgreSQL table"},
		{Name: "postgresql", Form: "postgresql://user:password@host:5432/database?stale_after=30s", Doc: "a row in a PostgreSQL table"},
		{Name: "sqlite", Form: "sqlite:///abs/path/idforge.db?stale_after=30s",
			Doc: "a row in a SQLite table, for the processes of one host (sqlite: is the node's own idforge.db)"},
	} {
		worker.Register(s, openURL)
	}
}

// maxConns is the pool of a database opened from a URL: a node renews
// one row at a time.
const maxConns = 2

// openURL is the worker.Opener for the package's schemes (see the package
// doc). It opens the pool but does not connect.
func openURL(ctx context.Context, u *url.URL, opts worker.Options) (worker.Provider, error) {
	q := dsn.NewQuery(u, u.Scheme+" worker URL")
	if u.Fragment != "" {
		return nil, q.Errorf("has a fragment")
	}
	cfg := Config{
		Name:       dsn.Redacted(u),
		StaleAfter: q.Duration("stale_after", 0, time.Millisecond),
		Timeout:    q.Duration("timeout", 0, time.Nanosecond),
	}
	if err := q.Err(); err != nil {
		return nil, err
	}
	timeout := cmp.Or(cfg.Timeout, DefaultTimeout)

	var err error
	switch u.Scheme {
	case "mysql":
		cfg.Dialect = MySQL
		cfg.DB, err = openMySQL(u, q.Rest(), timeout)
	case "postgres", "postgresql":
		cfg.Dialect = Postgres
		cfg.DB, err = openPostgres(u, q.Rest(), timeout)
	case "sqlite":
		cfg.Dialect = SQLite
		cfg.DB, err = openSQLite(q, timeout, opts.DataDir)
	default:
		err = fmt.Errorf("unknown scheme")
	}
	if err != nil {
		if !errors.Is(err, idforge.ErrInvalidArgument) {
			err = q.Errorf("%v", err)
		}
		return nil, err
	}
	cfg.DB.SetMaxOpenConns(maxConns)
	cfg.DB.SetMaxIdleConns(maxConns)
	p, err := New(cfg, opts)
	if err := closeonce.Adopt(err, cfg.DB, func() *closeonce.Owned { return &p.held.Owned }); err != nil {
		return nil, err
	}
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
	c, err := mysqldsn.Connector(drv)
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
// or the node's own database file for "sqlite:" and "sqlite://"
// (dsn's SQLitePath). Its errors about the URL are q's.
func openSQLite(q *dsn.Query, timeout time.Duration, dataDir string) (*sql.DB, error) {
	path, err := q.SQLitePath(dataDir)
	if err != nil {
		return nil, err
	}
	if err := q.Done(); err != nil {
		return nil, err
	}
	if strings.ContainsRune(path, '?') {
		return nil, fmt.Errorf("path %q contains '?'", path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o750); err != nil {
		return nil, err
	}
	pragmas := url.Values{}
	pragmas.Add("_pragma", "busy_timeout("+strconv.FormatInt(max(1, timeout.Milliseconds()), 10)+")")
	pragmas.Add("_pragma", "journal_mode(WAL)")
	pragmas.Add("_pragma", "synchronous(FULL)")
	return sql.Open("sqlite", abs+"?"+pragmas.Encode())
}
