package postgres

import (
	"net/url"

	"github.com/idforge/idforge/internal/sqldb/postgres"
	"github.com/idforge/idforge/store"
	"github.com/idforge/idforge/store/internal/sqlstore"
)

// form is the URL this package's schemes take, after the scheme.
const form = "://user:password@host:port/database"

func init() {
	open := sqlstore.URLOpener(fromURL, Open)
	for _, scheme := range []string{"postgres", "postgresql"} {
		store.Register(store.Scheme{Name: scheme, Form: scheme + form + "?sslmode=require", Doc: "PostgreSQL"}, open)
	}
}

// ParseURL converts a store URL into a Config:
//
//	postgres://user:password@host:port/database?sslmode=…&param=value&…
//
// ("postgresql://" is the same). idforge's own query parameters, listed
// in the package documentation, set the Config field of the same
// meaning. The rest of the URL goes to pgx.ParseConfig, which knows
// libpq's parameters (sslmode, sslrootcert, connect_timeout,
// application_name, several hosts "h1:5432,h2:5432" with
// target_session_attrs, …), sends any other parameter to the server as a
// run-time setting (search_path, …), and, like libpq, fills what the URL
// leaves out from the PG* environment variables and ~/.pgpass. Special
// characters in the password are percent-encoded, as in any URL.
//
// It returns an error wrapping idforge.ErrInvalidArgument for a URL that
// does not parse, has another scheme, a fragment, a bad idforge parameter
// value or anything pgx rejects. Errors show the URL with the password
// replaced by "xxxxx".
func ParseURL(rawURL string) (Config, error) { return sqlstore.ParseURL(rawURL, "postgres", fromURL) }

// fromURL is ParseURL's work, with the Options of store.Open.
func fromURL(u *url.URL, opts store.Options) (Config, error) {
	set, drv, err := sqlstore.ServerURL(u, opts, postgres.Dialect, postgres.FromURL)
	return Config{Driver: drv, Settings: set}, err
}
