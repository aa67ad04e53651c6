package redis

import (
	"context"
	"math"
	"net/url"
	"strings"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/dsn"
	"github.com/idforge/idforge/internal/redisconn"
	"github.com/idforge/idforge/store"
)

// Scheme is the store URL scheme this package registers with store.Open.
const Scheme = "redisseg"

func init() {
	forms := map[redisconn.Topology]string{
		redisconn.Single:   "://[user:password@]host:6379/0?store=<store URL>",
		redisconn.Sentinel: "://[user:password@]sentinel1:26379,sentinel2:26379/mymaster?db=0&store=<store URL>",
		redisconn.Cluster:  "://[user:password@]node1:6379,node2:6379?store=<store URL>",
	}
	for _, scheme := range redisconn.Schemes(Scheme) {
		_, t := redisconn.SplitScheme(scheme)
		doc := "segments reserved in Redis in front of a durable store"
		if t != redisconn.Single {
			doc = "redisseg through Redis " + map[redisconn.Topology]string{redisconn.Sentinel: "Sentinel", redisconn.Cluster: "Cluster"}[t]
		}
		store.Register(store.Scheme{Name: scheme, Form: scheme + forms[t], Doc: doc}, openURL)
	}
}

// urlConfig is what a store URL says.
type urlConfig struct {
	cfg      Config // without Redis, DB and Logger
	storeURL string
	redis    *redisconn.Options
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
	cfg.Redis, cfg.DB, cfg.Logger = p.redis.NewClient(), db, opts.Logger
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
	q := dsn.NewQuery(u, Scheme+" URL")
	if base, _ := redisconn.SplitScheme(u.Scheme); base != Scheme {
		return urlConfig{}, q.Errorf("scheme is not %s", Scheme)
	}
	p := urlConfig{storeURL: q.NonEmpty("store", ""), cfg: Config{
		Prefix:     q.NonEmpty("prefix", ""),
		Factor:     q.Int("factor", 0, 1, math.MaxInt64),
		Reserve:    q.Int("reserve", 0, 0, math.MaxInt64),
		RetryAfter: q.Duration("retry_after", 0, time.Millisecond),
	}}
	useTLS := q.Bool("tls", false)
	if err := q.Err(); err != nil {
		return urlConfig{}, err
	}
	if p.storeURL == "" {
		return urlConfig{}, q.Errorf("the store parameter, the URL of the durable store, is required (e.g. store=sqlite:///var/lib/idforge/idforge.db)")
	}
	inner, err := url.Parse(p.storeURL)
	if err != nil || inner.Scheme == "" {
		return urlConfig{}, q.Errorf("the store parameter is not a store URL")
	}
	if strings.EqualFold(inner.Scheme, Scheme) {
		return urlConfig{}, q.Errorf("the durable store cannot be another %s store", Scheme)
	}
	// A Redis that does not answer should send claims to the database
	// quickly, not hold them.
	p.redis, err = redisconn.Parse(u, q, useTLS, false, redisconn.FailFast)
	if err != nil {
		return urlConfig{}, err
	}
	return p, nil
}
