// Package pgdsn builds pgx's configuration from a postgres:// URL, for the
// PostgreSQL store and the SQL worker-ID provider.
package pgdsn

import (
	"net/url"

	"github.com/jackc/pgx/v5"

	"github.com/idforge/idforge/internal/dsn"
)

// Config parses u, with query in place of its parameters (idforge's own
// taken out), with pgx.ParseConfig, which knows libpq's parameters and,
// like libpq, fills what the URL leaves out from the PG* environment
// variables and ~/.pgpass. No password of u or of query (see
// dsn.PasswordParams) shows in the error.
func Config(u *url.URL, query url.Values) (*pgx.ConnConfig, error) {
	rest := *u
	rest.RawQuery = query.Encode()
	cc, err := pgx.ParseConfig(rest.String())
	if err != nil {
		for _, key := range dsn.PasswordParams {
			if v := query.Get(key); v != "" {
				err = dsn.Scrub(err, v)
			}
		}
		pw, _ := u.User.Password()
		return nil, dsn.Scrub(err, pw)
	}
	return cc, nil
}
