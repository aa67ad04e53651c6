package redis

import (
	"context"
	"net/url"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/idforge/idforge/internal/dsn"
	"github.com/idforge/idforge/worker"
)

func init() {
	worker.Register(worker.Scheme{Name: "redis", Form: "redis://[:password@]host:6379/0?prefix=idforge:workers&ttl=10s",
		Doc: "a key with a TTL in Redis"}, openURL)
	worker.Register(worker.Scheme{Name: "rediss", Form: "rediss://…", Doc: "redis:// over TLS"}, openURL)
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
	q := dsn.NewQuery(u, "redis worker URL")
	if u.Scheme != "redis" && u.Scheme != "rediss" {
		return Config{}, q.Errorf("scheme is not redis or rediss")
	}
	if u.Opaque != "" {
		return Config{}, q.Errorf("write redis://[:password@]host:port/db")
	}
	if u.Fragment != "" {
		return Config{}, q.Errorf("has a fragment")
	}
	cfg := Config{
		Name:    dsn.Redacted(u),
		Prefix:  q.NonEmpty("prefix", ""),
		TTL:     q.Duration("ttl", 0, time.Millisecond),
		Timeout: q.Duration("timeout", 0, time.Nanosecond),
	}
	if err := q.Err(); err != nil {
		return Config{}, err
	}
	rest := *u
	rest.RawQuery = q.Rest().Encode()
	o, err := goredis.ParseURL(rest.String())
	if err != nil {
		return Config{}, q.Errorf("%v", err)
	}
	if o.PoolSize == 0 {
		o.PoolSize = poolSize
	}
	cfg.Client = goredis.NewClient(o)
	return cfg, nil
}
