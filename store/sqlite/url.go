package sqlite

import (
	"context"
	"net/url"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/dsn"
	"github.com/idforge/idforge/internal/sqldb/sqlite"
	"github.com/idforge/idforge/store"
)

func init() {
	store.Register(store.Scheme{Name: "sqlite", Form: "sqlite:///abs/path/idforge.db?busy_timeout=5s",
		Doc: "SQLite; sqlite: is idforge.db in the data directory"}, openURL)
}

// openURL is the store.Opener for the "sqlite" scheme: the file is
// sqlite.Path's (see the package documentation), and the query may
// set busy_timeout to a Go duration ("busy_timeout=10s").
func openURL(ctx context.Context, u *url.URL, opts store.Options) (idforge.Store, error) {
	q := dsn.NewQuery(u, "sqlite URL")
	if u.Fragment != "" {
		return nil, q.Errorf("has a fragment")
	}
	path, err := sqlite.Path(u, q, opts.DataDir)
	if err != nil {
		return nil, err
	}
	busy := q.Duration("busy_timeout", DefaultBusyTimeout, time.Nanosecond)
	if err := q.Done(); err != nil {
		return nil, err
	}
	s, err := Open(ctx, path, WithLogger(opts.Logger), WithBusyTimeout(busy))
	if err != nil {
		return nil, err
	}
	return s, nil
}
