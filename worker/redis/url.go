package redis

import (
	"context"
	"fmt"
	"net/url"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/dsn"
	"github.com/idforge/idforge/worker"
)

func init() {
	worker.Register("redis", openURL)
	worker.Register("rediss", openURL)
}

// poolSize is the connection pool of a client opened from a URL that
// sets no pool_size: one call at a time is all a node needs.
const poolSize = 2

// openURL is the worker.Opener for "redis" and "rediss" URLs (see the
// package doc). It builds the client but does not connect.
func openURL(ctx context.Context, u *url.URL, opts worker.Options) (worker.Provider, error) {
	cfg, err := parseURL(u)
	if err != nil {
		return nil, err
	}
	p, err := New(cfg, opts)
	if err != nil {
		cfg.Client.Close()
		return nil, err
	}
	p.owns = true
	return p, nil
}

// parseURL turns a worker URL into a Config with a new client.
func parseURL(u *url.URL) (Config, error) {
	bad := func(format string, args ...any) (Config, error) {
		return Config{}, fmt.Errorf("%w: redis worker URL %q: %s", idforge.ErrInvalidArgument, u.Redacted(), fmt.Sprintf(format, args...))
	}
	if u.Scheme != "redis" && u.Scheme != "rediss" {
		return bad("scheme is not redis or rediss")
	}
	if u.Opaque != "" {
		return bad("write redis://[:password@]host:port/db")
	}
	if u.Fragment != "" {
		return bad("has a fragment")
	}
	cfg := Config{Name: u.Redacted()}
	query := u.Query()
	err := dsn.Take(query,
		dsn.Param{Name: "prefix", Set: func(v string) bool { cfg.Prefix = v; return v != "" }},
		dsn.Duration("ttl", &cfg.TTL, time.Millisecond),
		dsn.Duration("timeout", &cfg.Timeout, time.Nanosecond))
	if err != nil {
		return bad("%v", err)
	}
	rest := *u
	rest.RawQuery = query.Encode()
	o, err := goredis.ParseURL(rest.String())
	if err != nil {
		return bad("%v", err)
	}
	if o.PoolSize == 0 {
		o.PoolSize = poolSize
	}
	cfg.Client = goredis.NewClient(o)
	return cfg, nil
}
