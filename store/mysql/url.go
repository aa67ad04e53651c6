package mysql

import (
	"net/url"

	"github.com/idforge/idforge/internal/sqldb/mysql"
	"github.com/idforge/idforge/store"
	"github.com/idforge/idforge/store/internal/sqlstore"
)

func init() {
	store.Register(store.Scheme{Name: "mysql", Form: mysql.Form + "?param=value", Doc: "MySQL or MariaDB"},
		sqlstore.URLOpener(fromURL, Open))
}

// ParseURL converts a store URL into a Config:
//
//	mysql://user:password@host:port/database?param=value&…
//
// The host defaults to 127.0.0.1 and the port to 3306; the database is
// required. idforge's own query parameters, listed in the package
// documentation, set the Config field of the same meaning. Every other
// parameter is go-sql-driver/mysql's (tls, charset, readTimeout, or a
// session variable such as innodb_lock_wait_timeout); note that the
// driver's own dial "timeout" is not available, as the name is idforge's
// (dialing is bounded by Timeout instead). Special characters in the
// password are percent-encoded, as in any URL.
//
// It returns an error wrapping idforge.ErrInvalidArgument for a URL that
// does not parse, has another scheme, no database, a fragment, a bad
// idforge parameter value or a parameter the driver rejects. Errors show
// the URL with the password replaced by "xxxxx".
func ParseURL(rawURL string) (Config, error) { return sqlstore.ParseURL(rawURL, "mysql", fromURL) }

// fromURL is ParseURL's work, with the Options of store.Open.
func fromURL(u *url.URL, opts store.Options) (Config, error) {
	set, drv, err := sqlstore.ServerURL(u, opts, mysql.Dialect, mysql.FromURL)
	return Config{Driver: drv, Settings: set}, err
}
