package postgres

import (
	"context"
	"net/url"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/dsn/pgdsn"
	"github.com/idforge/idforge/store"
	"github.com/idforge/idforge/store/internal/sqlstore"
)

func init() {
	store.Register("postgres", openURL)
	store.Register("postgresql", openURL)
}

// openURL is the store.Opener for the "postgres" and "postgresql"
// schemes; see ParseURL.
func openURL(ctx context.Context, u *url.URL, opts store.Options) (idforge.Store, error) {
	cfg, err := fromURL(u)
	if err != nil {
		return nil, err
	}
	cfg.Logger = opts.Logger
	cfg.ForMigrate = opts.ForMigrate
	s, err := Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// ParseURL converts a store URL into a Config:
//
//	postgres://user:password@host:port/database?sslmode=…&param=value&…
//
// ("postgresql://" is the same). These query parameters are idforge's
// own, and set the Config field of the same meaning:
//
//	max_open_conns     MaxOpenConns, an integer ≥ 1
//	max_idle_conns     MaxIdleConns, an integer ≥ 0
//	conn_max_lifetime  ConnMaxLifetime, a Go duration ≥ 0 (0: forever)
//	timeout            Timeout, a Go duration > 0
//	retries            Retries, an integer ≥ 0
//
// The rest of the URL goes to pgx.ParseConfig, which knows libpq's
// parameters (sslmode, sslrootcert, connect_timeout, application_name,
// several hosts "h1:5432,h2:5432" with target_session_attrs, …), sends any
// other parameter to the server as a run-time setting (search_path, …),
// and, like libpq, fills what the URL leaves out from the PG* environment
// variables and ~/.pgpass. Special characters in the password are
// percent-encoded, as in any URL.
//
// It returns an error wrapping idforge.ErrInvalidArgument for a URL that
// does not parse, has another scheme, a fragment, a bad idforge parameter
// value or anything pgx rejects. Errors show the URL with the password
// replaced by "xxxxx".
func ParseURL(rawURL string) (Config, error) {
	u, err := sqlstore.ParseURL("postgres", rawURL)
	if err != nil {
		return Config{}, err
	}
	return fromURL(u)
}

func fromURL(u *url.URL) (Config, error) {
	set, query, err := sqlstore.ServerURL(u, "postgres://user:password@host:port/database", "postgres", "postgresql")
	if err != nil {
		return Config{}, err
	}
	drv, err := pgdsn.Config(u, query)
	if err != nil {
		return Config{}, sqlstore.BadURL("postgres", u, "%v", err)
	}
	return Config{Driver: drv, MaxOpenConns: set.MaxOpenConns, MaxIdleConns: set.MaxIdleConns,
		ConnMaxLifetime: set.ConnMaxLifetime, Timeout: set.Timeout, Retries: set.Retries}, nil
}
