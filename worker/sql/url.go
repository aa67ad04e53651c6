package sql

import (
	"cmp"
	"context"
	"errors"
	"net/url"
	"strings"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/closeonce"
	"github.com/idforge/idforge/internal/dsn"
	"github.com/idforge/idforge/internal/sqldb"
	"github.com/idforge/idforge/worker"
	"github.com/idforge/idforge/worker/internal/coord"
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
		worker.Register(worker.Scheme{Name: "ip+" + s.Name, Form: "ip+" + s.Form + "&bits=16&net=10.0.0.0/8",
			Doc: "the ID of ip://, held as a row in the " + s.Name + " table: a second live node with the same ID is refused"}, openURL)
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
	name, pin := dsn.Redacted(u), (*worker.IP)(nil)
	if base, ok := strings.CutPrefix(u.Scheme, "ip+"); ok {
		ip, err := worker.ParseIP(q)
		if err != nil {
			return nil, err
		}
		plain := *u
		plain.Scheme, u, pin = base, &plain, &ip
	}
	cfg := Config{
		Name:       name,
		IP:         pin,
		StaleAfter: q.Duration("stale_after", 0, time.Millisecond),
		Timeout:    q.Duration("timeout", 0, time.Nanosecond),
		MaxDrift:   coord.MaxDrift(q),
	}
	if err := q.Err(); err != nil {
		return nil, err
	}
	timeout := cmp.Or(cfg.Timeout, DefaultTimeout)

	// A node renews one row at a time: two connections. SQLite waits for
	// the file's lock as long as a call may take.
	db, err := sqldb.OpenPool(u, q, sqldb.Settings{MaxOpenConns: maxConns, MaxIdleConns: maxConns, Timeout: timeout, BusyTimeout: timeout}, opts.DataDir)
	if err != nil {
		if !errors.Is(err, idforge.ErrInvalidArgument) {
			err = q.Errorf("%v", err)
		}
		return nil, err
	}
	cfg.DB, cfg.Dialect = db.DB, Dialect(db.Name)
	p, err := New(cfg, opts)
	if err := closeonce.Adopt(err, cfg.DB, func() *closeonce.Owned { return &p.held.Owned }); err != nil {
		return nil, err
	}
	return p, nil
}
