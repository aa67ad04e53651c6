package sqlstore

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/dsn"
)

// ParseURL parses a store URL for a backend's ParseURL. It returns an
// error wrapping idforge.ErrInvalidArgument, starting with name, when the
// URL does not parse.
func ParseURL(name, rawURL string) (*url.URL, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		// url.Error repeats the whole URL, password included; keep only
		// the reason.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("%w: %s URL: %v", idforge.ErrInvalidArgument, name, err)
	}
	return u, nil
}

// ServerURL checks what every server backend asks of its store URL (one
// of schemes, the hierarchical form, no fragment) and takes idforge's own
// parameters from its query (TakeSettings). It returns the settings and
// the rest of the query, the driver's. form is the URL form a user should
// write, for the error about an opaque URL. Its errors are BadURL's,
// named after schemes[0].
func ServerURL(u *url.URL, form string, schemes ...string) (Settings, url.Values, error) {
	name := schemes[0]
	switch {
	case !slices.Contains(schemes, u.Scheme):
		return Settings{}, nil, BadURL(name, u, "scheme is not %s", strings.Join(schemes, " or "))
	case u.Opaque != "":
		return Settings{}, nil, BadURL(name, u, "write %s", form)
	case u.Fragment != "":
		return Settings{}, nil, BadURL(name, u, "has a fragment")
	}
	query := u.Query()
	set, err := TakeSettings(query)
	if err != nil {
		return Settings{}, nil, BadURL(name, u, "%v", err)
	}
	return set, query, nil
}

// BadURL returns the error for a store URL the backend name cannot use:
// it wraps idforge.ErrInvalidArgument and shows the URL with its
// passwords replaced by "xxxxx".
func BadURL(name string, u *url.URL, format string, args ...any) error {
	return fmt.Errorf("%w: %s URL %q: %s", idforge.ErrInvalidArgument, name, dsn.Redacted(u), fmt.Sprintf(format, args...))
}

// TakeSettings removes idforge's own parameters from a store URL's query
// and returns the Settings they set; the rest of the query is the
// driver's. The last of repeated values counts:
//
//	max_open_conns     MaxOpenConns, an integer ≥ 1
//	max_idle_conns     MaxIdleConns, an integer ≥ 0
//	conn_max_lifetime  ConnMaxLifetime, a Go duration ≥ 0 (0: forever)
//	timeout            Timeout, a Go duration > 0
//	retries            Retries, an integer ≥ 0
//
// An explicit 0 of max_idle_conns, conn_max_lifetime or retries becomes
// -1, which means "none" in Settings, where 0 means the default. The error
// for a bad value names the first such parameter and its value.
func TakeSettings(query url.Values) (Settings, error) {
	var set Settings
	err := dsn.Take(query,
		dsn.Param{Name: "max_open_conns", Set: func(v string) bool {
			n, err := strconv.Atoi(v)
			set.MaxOpenConns = n
			return err == nil && n >= 1
		}},
		dsn.Param{Name: "max_idle_conns", Set: func(v string) bool {
			n, err := strconv.Atoi(v)
			set.MaxIdleConns = noneIfZero(n)
			return err == nil && n >= 0
		}},
		dsn.Param{Name: "conn_max_lifetime", Set: func(v string) bool {
			d, err := time.ParseDuration(v)
			set.ConnMaxLifetime = noneIfZero(d)
			return err == nil && d >= 0
		}},
		dsn.Duration("timeout", &set.Timeout, time.Nanosecond),
		dsn.Param{Name: "retries", Set: func(v string) bool {
			n, err := strconv.Atoi(v)
			set.Retries = noneIfZero(n)
			return err == nil && n >= 0
		}},
	)
	if err != nil {
		return Settings{}, err
	}
	return set, nil
}

// noneIfZero maps an explicit 0 from a URL to the Settings value that
// means "none" (negative), as 0 there means "the default".
func noneIfZero[T int | time.Duration](v T) T {
	if v == 0 {
		return -1
	}
	return v
}

// Scrub removes a password from an error's text, should a driver message
// ever repeat it. The result keeps the error chain.
func Scrub(err error, password string) error { return dsn.Scrub(err, password) }
