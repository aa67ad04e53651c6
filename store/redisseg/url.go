package redisseg

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/dsn"
	"github.com/idforge/idforge/store"
)

// Scheme is the store URL scheme this package registers with store.Open.
const Scheme = "redisseg"

// Timeouts of the Redis client opened from a URL, unless the URL sets
// go-redis's own parameters: a Redis that does not answer should send
// claims to the database quickly, not hold them.
const (
	urlDialTimeout  = time.Second
	urlReadTimeout  = 500 * time.Millisecond
	urlWriteTimeout = 500 * time.Millisecond
	urlMaxRetries   = 1
	urlDialRetries  = 1
)

func init() { store.Register(Scheme, openURL) }

// urlConfig is what a store URL says.
type urlConfig struct {
	cfg      Config // without Redis, DB and Logger
	storeURL string
	redis    *goredis.Options
}

// openURL is the store.Opener of Scheme: it opens the durable store named
// by the store parameter with store.Open (the same Options, so
// ForMigrate and the data directory apply to it) and a Redis client, and
// closes both when it fails. A Redis that does not answer is logged, not
// an error: claims go to the database until it answers.
func openURL(ctx context.Context, u *url.URL, opts store.Options) (idforge.Store, error) {
	p, err := parseURL(u)
	if err != nil {
		return nil, err
	}
	db, err := store.Open(ctx, p.storeURL, opts)
	if err != nil {
		return nil, err // "store <scheme>: …", after the registry's "store redisseg: "
	}
	cfg := p.cfg
	cfg.Redis, cfg.DB, cfg.Logger = goredis.NewClient(p.redis), db, opts.Logger
	s, err := New(cfg)
	if err != nil {
		cfg.Redis.Close()
		db.Close()
		return nil, err
	}
	pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := s.rdb.Ping(pctx).Err(); err != nil {
		s.redisFailed(err)
	}
	return s, nil
}

// parseURL reads a store URL of Scheme; see the package documentation.
// Errors wrap idforge.ErrInvalidArgument and show the URL with its
// passwords, and those of the inner store URL, replaced by "xxxxx".
func parseURL(u *url.URL) (urlConfig, error) {
	bad := func(format string, args ...any) (urlConfig, error) {
		return urlConfig{}, fmt.Errorf("%w: %s URL %q: %s", idforge.ErrInvalidArgument, Scheme, redacted(u), fmt.Sprintf(format, args...))
	}
	switch {
	case u.Scheme != Scheme:
		return bad("scheme is not %s", Scheme)
	case u.Opaque != "":
		return bad("write %s://[user:password@]host:port/db?store=…", Scheme)
	case u.Fragment != "":
		return bad("has a fragment")
	}
	q := u.Query()
	var (
		p      urlConfig
		useTLS bool
	)
	err := dsn.Take(q,
		dsn.Param{Name: "store", Set: func(v string) bool { p.storeURL = v; return v != "" }},
		dsn.Param{Name: "prefix", Set: func(v string) bool { p.cfg.Prefix = v; return v != "" }},
		dsn.Param{Name: "factor", Set: func(v string) bool {
			n, err := strconv.ParseInt(v, 10, 64)
			p.cfg.Factor = n
			return err == nil && n >= 1
		}},
		dsn.Param{Name: "reserve", Set: func(v string) bool {
			n, err := strconv.ParseInt(v, 10, 64)
			p.cfg.Reserve = n
			return err == nil && n >= 0
		}},
		dsn.Duration("retry_after", &p.cfg.RetryAfter, time.Millisecond),
		dsn.Param{Name: "tls", Set: func(v string) bool {
			b, err := strconv.ParseBool(v)
			useTLS = b
			return err == nil
		}},
	)
	if err != nil {
		return bad("%v", err)
	}
	if p.storeURL == "" {
		return bad("the store parameter, the URL of the durable store, is required (e.g. store=sqlite:///var/lib/idforge/idforge.db)")
	}
	inner, err := url.Parse(p.storeURL)
	if err != nil || inner.Scheme == "" {
		return bad("the store parameter is not a store URL")
	}
	if strings.EqualFold(inner.Scheme, Scheme) {
		return bad("the durable store cannot be another %s store", Scheme)
	}
	r := url.URL{Scheme: "redis", User: u.User, Host: u.Host, Path: u.Path, RawQuery: q.Encode()}
	if useTLS {
		r.Scheme = "rediss"
	}
	if p.redis, err = goredis.ParseURL(r.String()); err != nil {
		return bad("%v", err)
	}
	o := p.redis
	if o.DialTimeout == 0 {
		o.DialTimeout = urlDialTimeout
	}
	if o.ReadTimeout == 0 {
		o.ReadTimeout = urlReadTimeout
	}
	if o.WriteTimeout == 0 {
		o.WriteTimeout = urlWriteTimeout
	}
	if o.MaxRetries == 0 {
		o.MaxRetries = urlMaxRetries
	}
	if o.DialerRetries == 0 {
		o.DialerRetries = urlDialRetries
	}
	o.ContextTimeoutEnabled = true
	return p, nil
}

// redacted returns u as text with its password and the inner store URL's
// passwords replaced by "xxxxx".
func redacted(u *url.URL) string {
	c := *u
	q := c.Query()
	if v := q.Get("store"); v != "" {
		if inner, err := url.Parse(v); err == nil {
			q.Set("store", dsn.Redacted(inner))
		} else {
			q.Set("store", "xxxxx")
		}
		c.RawQuery = q.Encode()
	}
	return dsn.Redacted(&c)
}
