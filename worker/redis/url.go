package redis

import (
	"context"
	"net/url"
	"time"

	"github.com/idforge/idforge/internal/closeonce"
	"github.com/idforge/idforge/internal/dsn"
	"github.com/idforge/idforge/internal/redisconn"
	"github.com/idforge/idforge/worker"
	"github.com/idforge/idforge/worker/internal/coord"
)

func init() {
	forms := map[redisconn.Topology]string{
		redisconn.Single:   "://[:password@]host:6379/0?prefix=idforge:workers&ttl=10s",
		redisconn.Sentinel: "://[:password@]sentinel1:26379,sentinel2:26379/mymaster?db=0&prefix=idforge:workers",
		redisconn.Cluster:  "://[:password@]node1:6379,node2:6379?prefix=idforge:workers",
	}
	for _, base := range []string{"redis", "rediss"} {
		doc := "a key with a TTL in Redis"
		if base == "rediss" {
			doc = "over TLS"
		}
		for _, scheme := range redisconn.Schemes(base) {
			_, t := redisconn.SplitScheme(scheme)
			worker.Register(worker.Scheme{Name: scheme, Form: scheme + forms[t], Doc: doc}, openURL)
		}
	}
}

// poolSize is the connection pool of a client opened from a URL that
// sets no pool_size: one call at a time is all a node needs.
const poolSize = 2

// openURL is the worker.Opener for the redis URLs (see the package doc).
// It builds the client but does not connect.
func openURL(ctx context.Context, u *url.URL, opts worker.Options) (worker.Provider, error) {
	cfg, err := parseURL(u)
	if err != nil {
		return nil, err
	}
	p, err := New(cfg, opts)
	if err := closeonce.Adopt(err, cfg.Client, func() *closeonce.Owned { return &p.held.Owned }); err != nil {
		return nil, err
	}
	return p, nil
}

// parseURL turns a worker URL into a Config with a new client.
func parseURL(u *url.URL) (Config, error) {
	q := dsn.NewQuery(u, "redis worker URL")
	base, _ := redisconn.SplitScheme(u.Scheme)
	if base != "redis" && base != "rediss" {
		return Config{}, q.Errorf("scheme is not redis or rediss")
	}
	cfg := Config{
		Name:     dsn.Redacted(u),
		Prefix:   q.NonEmpty("prefix", ""),
		TTL:      q.Duration("ttl", 0, time.Millisecond),
		Timeout:  q.Duration("timeout", 0, time.Nanosecond),
		MaxDrift: coord.MaxDrift(q),
	}
	o, err := redisconn.Parse(u, q, base == "rediss", true, redisconn.Defaults{PoolSize: poolSize})
	if err != nil {
		return Config{}, err
	}
	cfg.MinReplicas, cfg.WaitTimeout = o.Replication.MinReplicas, o.Replication.Timeout
	cfg.Client = o.NewClient()
	return cfg, nil
}
