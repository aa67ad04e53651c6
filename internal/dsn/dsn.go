// Package dsn holds what the store backends and the worker-ID providers
// share in turning a URL into a driver's configuration: idforge's own
// query parameters taken out of a URL whose other parameters are the
// driver's, and passwords kept out of text. Its subpackages build the
// MySQL and PostgreSQL drivers' configurations; they are apart so that
// importing one driver does not link (and register) the other.
package dsn

import (
	"fmt"
	"net/url"
	"strings"
	"time"
)

// A Param is one of idforge's own parameters in a URL.
type Param struct {
	Name string
	// Set parses v into its destination and reports whether v is valid.
	Set func(v string) bool
}

// Take removes params from query and sets them; what is left of the
// query is the driver's. The last of repeated values counts. The error
// names the first invalid parameter and its value.
func Take(query url.Values, params ...Param) error {
	for _, p := range params {
		vals, ok := query[p.Name]
		if !ok {
			continue
		}
		delete(query, p.Name)
		if v := vals[len(vals)-1]; !p.Set(v) {
			return fmt.Errorf("%s=%q is not valid", p.Name, v)
		}
	}
	return nil
}

// Duration is a Param holding a Go duration of at least min, parsed into
// *dst.
func Duration(name string, dst *time.Duration, min time.Duration) Param {
	return Param{Name: name, Set: func(v string) bool {
		d, err := time.ParseDuration(v)
		*dst = d
		return err == nil && d >= min
	}}
}

// PasswordParams are the query parameters in which libpq accepts a
// password.
var PasswordParams = []string{"password", "sslpassword"}

// Redacted returns u as text with every password replaced by "xxxxx": the
// user's, those of PasswordParams, and those of URLs nested in query
// parameters (redisseg://…?store=mysql://user:password@…).
func Redacted(u *url.URL) string {
	c := *u
	q := c.Query()
	changed := false
	for _, key := range PasswordParams {
		if q.Has(key) {
			q.Set(key, "xxxxx")
			changed = true
		}
	}
	for key, vals := range q {
		for i, v := range vals {
			if !strings.Contains(v, "://") {
				continue
			}
			if inner, err := url.Parse(v); err == nil && inner.User != nil {
				if red := Redacted(inner); red != v {
					q[key][i] = red
					changed = true
				}
			}
		}
	}
	if changed {
		c.RawQuery = q.Encode()
	}
	return c.Redacted()
}

// Scrub removes a password from an error's text, should a driver message
// ever repeat it. The result keeps the error chain.
func Scrub(err error, password string) error {
	if err == nil || password == "" || !strings.Contains(err.Error(), password) {
		return err
	}
	return &scrubbed{err: err, msg: strings.ReplaceAll(err.Error(), password, "xxxxx")}
}

type scrubbed struct {
	err error
	msg string
}

func (e *scrubbed) Error() string { return e.msg }
func (e *scrubbed) Unwrap() error { return e.err }
