// Package param reads the query parameters of sequence URLs: typed values
// with defaults and bounds, errors that name the parameter and show the
// URL without secrets, and a check that nothing unknown is left over.
package param

import (
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/idforge/idforge"
)

// Query holds the parameters of one URL not yet taken. It records the
// first error; later reads return their defaults. It is not safe for
// concurrent use.
type Query struct {
	u    *url.URL
	what string
	v    url.Values
	err  error
}

// New returns the parameters of u. what names the URL in messages
// ("redis source URL").
func New(u *url.URL, what string) *Query {
	return &Query{u: u, what: what, v: u.Query()}
}

// Parse parses rawURL; the error (wrapping idforge.ErrInvalidArgument)
// never repeats the URL, which may hold a password.
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

// Redact returns u as text with the password of its user information and
// of any password parameter replaced by "xxxxx".
func Redact(u *url.URL) string {
	c := *u
	q := c.Query()
	changed := false
	for name := range q {
		if strings.EqualFold(name, "password") {
			q.Set(name, "xxxxx")
			changed = true
		}
	}
	if changed {
		c.RawQuery = q.Encode()
	}
	return c.Redacted()
}

// Errorf returns an error wrapping idforge.ErrInvalidArgument that names
// the URL (redacted).
func (q *Query) Errorf(format string, args ...any) error {
	return fmt.Errorf("%w: %s %q: %s", idforge.ErrInvalidArgument, q.what, Redact(q.u), fmt.Sprintf(format, args...))
}

func (q *Query) fail(name, val, want string) {
	if q.err == nil {
		q.err = q.Errorf("parameter %s=%q: want %s", name, val, want)
	}
}

// take removes name and returns its last value.
func (q *Query) take(name string) (string, bool) {
	vals, ok := q.v[name]
	if !ok {
		return "", false
	}
	delete(q.v, name)
	return vals[len(vals)-1], true
}

// String returns the value of name, or def when absent.
func (q *Query) String(name, def string) string {
	if v, ok := q.take(name); ok {
		return v
	}
	return def
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
		q.fail(name, v, fmt.Sprintf("an integer in [%d, %d]", lo, hi))
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
		q.fail(name, v, fmt.Sprintf("a Go duration of at least %v", lo))
		return def
	}
	return d
}

// List returns the comma-separated values of every occurrence of name,
// empty items dropped.
func (q *Query) List(name string) []string {
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

// Err returns the first error met, or nil.
func (q *Query) Err() error { return q.err }

// Rest returns the parameters not taken.
func (q *Query) Rest() url.Values { return q.v }

// Done returns the first error met or, failing that, an error naming the
// parameters nobody took.
func (q *Query) Done() error {
	if q.err != nil {
		return q.err
	}
	if len(q.v) == 0 {
		return nil
	}
	names := make([]string, 0, len(q.v))
	for n := range q.v {
		names = append(names, n)
	}
	sort.Strings(names)
	return q.Errorf("unknown parameter(s) %s", strings.Join(names, ", "))
}
