package sqlstore

import (
	"context"
	"math"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/dsn"
	"github.com/idforge/idforge/internal/sqldb"
	"github.com/idforge/idforge/store"
)

// ParseURL is a backend's ParseURL: it parses rawURL, whose errors name
// the backend, and reads it with fromURL, without the registry's Options.
func ParseURL[C any](rawURL, name string, fromURL func(*url.URL, store.Options) (C, error)) (C, error) {
	u, err := dsn.Parse(rawURL, name+" URL")
	if err != nil {
		var zero C
		return zero, err
	}
	return fromURL(u, store.Options{})
}

// ServerURL is a server backend's reading of its store URL, with the
// Options of store.Open: it checks what every server backend asks (one of
// d's schemes, the hierarchical form, no fragment), takes idforge's own
// parameters from its query (TakeSettings) and gives the rest to the
// engine's driver configuration. Its errors about u are named after d.
func ServerURL[D any](u *url.URL, opts store.Options, d *sqldb.Dialect, driver func(*url.URL, *dsn.Query) (*D, error)) (Settings, *D, error) {
	q := dsn.NewQuery(u, d.Name+" URL")
	switch {
	case !slices.Contains(d.Schemes, u.Scheme):
		return Settings{}, nil, q.Errorf("scheme is not %s", strings.Join(d.Schemes, " or "))
	case u.Opaque != "":
		return Settings{}, nil, q.Errorf("write %s", d.Form)
	case u.Fragment != "":
		return Settings{}, nil, q.Errorf("has a fragment")
	}
	set := TakeSettings(q)
	drv, err := driver(u, q)
	if err != nil {
		return Settings{}, nil, err
	}
	set.ForMigrate, set.Logger = opts.ForMigrate, opts.Logger
	return set, drv, nil
}

// TakeSettings takes idforge's own parameters from a store URL's query
// and returns the Settings they set; the rest of the query is the
// driver's. The backends' package documentation lists them:
//
//	max_open_conns     MaxOpenConns, an integer ≥ 1
//	max_idle_conns     MaxIdleConns, an integer ≥ 0
//	conn_max_lifetime  ConnMaxLifetime, a Go duration ≥ 0 (0: forever)
//	timeout            Timeout, a Go duration > 0
//	retries            Retries, an integer ≥ 0
//
// An explicit 0 of max_idle_conns, conn_max_lifetime or retries becomes
// -1, which means "none" in Settings, where 0 means the default. A bad
// value is q's error.
func TakeSettings(q *dsn.Query) Settings {
	return Settings{
		MaxOpenConns:    int(q.Int("max_open_conns", 0, 1, math.MaxInt)),
		MaxIdleConns:    noneIfZero(q.Has("max_idle_conns"), int(q.Int("max_idle_conns", 0, 0, math.MaxInt))),
		ConnMaxLifetime: noneIfZero(q.Has("conn_max_lifetime"), q.Duration("conn_max_lifetime", 0, 0)),
		Timeout:         q.Duration("timeout", 0, time.Nanosecond),
		Retries:         noneIfZero(q.Has("retries"), int(q.Int("retries", 0, 0, math.MaxInt))),
	}
}

// noneIfZero maps an explicit (present) 0 from a URL to the Settings
// value that means "none" (negative), as 0 there means "the default".
// Its callers rely on Go evaluating arguments left to right: present is
// read before the value is taken out of the query.
func noneIfZero[T int | time.Duration](present bool, v T) T {
	if present && v == 0 {
		return -1
	}
	return v
}

// URLOpener returns the store.Opener of a backend: config reads a URL,
// with the registry's Options, into the backend's configuration, and
// open opens a store from it.
func URLOpener[C any, S idforge.Store](config func(u *url.URL, opts store.Options) (C, error),
	open func(ctx context.Context, cfg C) (S, error)) store.Opener {
	return func(ctx context.Context, u *url.URL, opts store.Options) (idforge.Store, error) {
		cfg, err := config(u, opts)
		if err != nil {
			return nil, err
		}
		s, err := open(ctx, cfg)
		if err != nil {
			return nil, err // not a typed nil in the interface
		}
		return s, nil
	}
}
