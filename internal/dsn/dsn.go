// Package dsn owns how idforge reads the URLs that name its backends
// (stores, worker-ID providers, sequence sources): parsing a URL without
// repeating it in errors, the text of a URL with its passwords hidden,
// and idforge's own typed query parameters, taken out of a query whose
// other parameters may be a driver's. Each technology's own package
// (internal/sqldb's engines, internal/redisconn, …) turns the rest into
// its driver's configuration.
package dsn

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/idforge/idforge"
)

// Parse parses rawURL. Its error wraps idforge.ErrInvalidArgument,
// starts with what ("store URL") and never repeats the URL, which may
// hold a password: url.Error's text would.
func Parse(rawURL, what string) (*url.URL, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("%w: %s: %v", idforge.ErrInvalidArgument, what, err)
	}
	return u, nil
}

// PasswordParams are the query parameters that hold a password (libpq's
// password and sslpassword, Redis Sentinel's sentinel_password); Redacted
// hides them whatever their case.
var PasswordParams = []string{"password", "sslpassword", "sentinel_password"}

// Redacted returns u as text with every password replaced by "xxxxx":
// the user's, those of PasswordParams, and those of URLs nested in query
// parameters (redisseg://…?store=mysql://user:password@…). A nested value
// that looks like a URL but does not parse is hidden whole.
func Redacted(u *url.URL) string {
	c := *u
	q := c.Query()
	changed := false
	for key, vals := range q {
		for i, v := range vals {
			red := v
			switch {
			case isPasswordParam(key):
				red = "xxxxx"
			case strings.Contains(v, "://"):
				if inner, err := url.Parse(v); err != nil {
					red = "xxxxx"
				} else {
					red = Redacted(inner)
				}
			}
			if red != v {
				vals[i], changed = red, true
			}
		}
	}
	if changed {
		c.RawQuery = q.Encode()
	}
	return c.Redacted()
}

// RedactedString is Redacted of rawURL, for text that was never parsed;
// a URL that does not parse shows as "(unparsable URL)".
func RedactedString(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "(unparsable URL)"
	}
	return Redacted(u)
}

func isPasswordParam(key string) bool {
	for _, p := range PasswordParams {
		if strings.EqualFold(key, p) {
			return true
		}
	}
	return false
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

// Query holds the query parameters of one URL not taken yet. Each read
// takes its parameter out (the last of repeated values counts), so that
// what is left is the driver's (Rest) or unknown (Done). It records the
// first invalid value; later reads return their defaults. It is not safe
// for concurrent use.
type Query struct {
	u     *url.URL
	what  string
	v     url.Values
	err   error
	known []string
	// missing is the first parameter Required found absent.
	missing string
}

// NewQuery returns the parameters of u. what names the URL in messages
// ("redis source URL").
func NewQuery(u *url.URL, what string) *Query {
	return &Query{u: u, what: what, v: u.Query()}
}

// Errorf returns an error wrapping idforge.ErrInvalidArgument that names
// the URL, redacted: `<what> "<url>": <message>`.
func (q *Query) Errorf(format string, args ...any) error {
	return fmt.Errorf("%w: %s %q: %s", idforge.ErrInvalidArgument, q.what, Redacted(q.u), fmt.Sprintf(format, args...))
}

// fail records that parameter name has the invalid value val.
func (q *Query) fail(name, val, want string) {
	if q.err == nil {
		q.err = q.Errorf("parameter %s=%q: want %s", name, val, want)
	}
}

// take removes name and returns its last value.
func (q *Query) take(name string) (string, bool) {
	q.note(name)
	vals, ok := q.v[name]
	if !ok {
		return "", false
	}
	delete(q.v, name)
	return vals[len(vals)-1], true
}

// note records that the URL knows parameter name, for Done's message.
func (q *Query) note(name string) {
	if !slices.Contains(q.known, name) {
		q.known = append(q.known, name)
	}
}

// Has reports whether name is present and not taken yet.
func (q *Query) Has(name string) bool { return q.v.Has(name) }

// String returns the value of name, or def when absent.
func (q *Query) String(name, def string) string {
	if v, ok := q.take(name); ok {
		return v
	}
	return def
}

// NonEmpty is String, refusing an empty value.
func (q *Query) NonEmpty(name, def string) string {
	v, ok := q.take(name)
	if !ok {
		return def
	}
	if v == "" {
		q.fail(name, v, "a value")
		return def
	}
	return v
}

// Int returns the integer value of name within [lo, hi], or def when
// absent.
func (q *Query) Int(name string, def, lo, hi int64) int64 {
	v, ok := q.take(name)
	if !ok {
		return def
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < lo || n > hi {
		want := fmt.Sprintf("an integer in [%d, %d]", lo, hi)
		if hi == math.MaxInt64 {
			want = fmt.Sprintf("an integer ≥ %d", lo)
		}
		q.fail(name, v, want)
		return def
	}
	return n
}

// Bool returns the boolean value of name (true/false/1/0), or def.
func (q *Query) Bool(name string, def bool) bool {
	v, ok := q.take(name)
	if !ok {
		return def
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		q.fail(name, v, "true or false")
		return def
	}
	return b
}

// Duration returns the Go duration value of name, at least lo, or def.
func (q *Query) Duration(name string, def, lo time.Duration) time.Duration {
	v, ok := q.take(name)
	if !ok {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < lo {
		want := fmt.Sprintf("a Go duration of at least %v", lo)
		if lo == time.Nanosecond {
			want = "a positive Go duration such as 3s"
		}
		q.fail(name, v, want)
		return def
	}
	return d
}

// Func hands the value of name, when present, to parse; parse's error
// says what is wanted ("a duration such as 10s").
func (q *Query) Func(name string, parse func(v string) error) {
	v, ok := q.take(name)
	if !ok {
		return
	}
	if err := parse(v); err != nil {
		q.fail(name, v, err.Error())
	}
}

// List returns the comma-separated values of every occurrence of name,
// empty items dropped.
func (q *Query) List(name string) []string {
	q.note(name)
	vals, ok := q.v[name]
	if !ok {
		return nil
	}
	delete(q.v, name)
	var out []string
	for _, v := range vals {
		for _, item := range strings.Split(v, ",") {
			if item = strings.TrimSpace(item); item != "" {
				out = append(out, item)
			}
		}
	}
	return out
}

// Required returns the value of name; when it is absent or empty, Err
// and Done report "parameter <name> is required", after any invalid
// value met.
func (q *Query) Required(name string) string {
	v := q.String(name, "")
	if v == "" && q.missing == "" {
		q.missing = name
	}
	return v
}

// Err returns the first error met, or nil.
func (q *Query) Err() error {
	if q.err == nil && q.missing != "" {
		q.err = q.Errorf("parameter %s is required", q.missing)
	}
	return q.err
}

// Rest returns the parameters not taken: a driver's.
func (q *Query) Rest() url.Values { return q.v }

// Done returns the first error met or, failing that, an error naming the
// parameters nobody took and those the URL knows.
func (q *Query) Done() error {
	if q.Err() != nil || len(q.v) == 0 {
		return q.err
	}
	names := make([]string, 0, len(q.v))
	for n := range q.v {
		names = append(names, strconv.Quote(n))
	}
	sort.Strings(names)
	s := ""
	if len(names) > 1 {
		s = "s"
	}
	known := "none"
	if len(q.known) > 0 {
		known = strings.Join(q.known, ", ")
	}
	return q.Errorf("unknown parameter%s %s (known: %s)", s, strings.Join(names, ", "), known)
}
