package mysql

import (
	"context"
	"net/url"
	"strings"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/dsn/mysqldsn"
	"github.com/idforge/idforge/store"
	"github.com/idforge/idforge/store/internal/sqlstore"
)

func init() { store.Register("mysql", openURL) }

// openURL is the store.Opener for the "mysql" scheme; see ParseURL.
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
//	mysql://user:password@host:port/database?param=value&…
//
// The host defaults to 127.0.0.1 and the port to 3306; the database is
// required. These query parameters are idforge's own, and set the Config
// field of the same meaning:
//
//	max_open_conns     MaxOpenConns, an integer ≥ 1
//	max_idle_conns     MaxIdleConns, an integer ≥ 0
//	conn_max_lifetime  ConnMaxLifetime, a Go duration ≥ 0 (0: forever)
//	timeout            Timeout, a Go duration > 0
//	retries            Retries, an integer ≥ 0
//
// Every other parameter is go-sql-driver/mysql's (tls, charset,
// readTimeout, or a session variable such as innodb_lock_wait_timeout);
// note that the driver's own dial "timeout" is not available, as the name
// is idforge's (dialing is bounded by Timeout instead). Special characters
// in the password are percent-encoded, as in any URL.
//
// It returns an error wrapping idforge.ErrInvalidArgument for a URL that
// does not parse, has another scheme, no database, a fragment, a bad
// idforge parameter value or a parameter the driver rejects. Errors show
// the URL with the password replaced by "xxxxx".
func ParseURL(rawURL string) (Config, error) {
	u, err := sqlstore.ParseURL("mysql", rawURL)
	if err != nil {
		return Config{}, err
	}
	return fromURL(u)
}

func fromURL(u *url.URL) (Config, error) {
	set, query, err := sqlstore.ServerURL(u, "mysql://user:password@host:port/database", "mysql")
	if err != nil {
		return Config{}, err
	}
	db := strings.TrimPrefix(u.Path, "/")
	if db == "" {
		return Config{}, sqlstore.BadURL("mysql", u, "names no database; write mysql://user:password@host:port/database")
	}
	if strings.Contains(db, "/") {
		return Config{}, sqlstore.BadURL("mysql", u, "database name %q contains '/'", db)
	}
	drv, err := mysqldsn.Config(u, query, db)
	if err != nil {
		return Config{}, sqlstore.BadURL("mysql", u, "%v", err)
	}
	return Config{Driver: drv, MaxOpenConns: set.MaxOpenConns, MaxIdleConns: set.MaxIdleConns,
		ConnMaxLifetime: set.ConnMaxLifetime, Timeout: set.Timeout, Retries: set.Retries}, nil
}
