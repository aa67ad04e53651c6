package redis

import (
	"context"
	"math"
	"net/url"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/idforge/idforge/internal/closeonce"
	"github.com/idforge/idforge/internal/dsn"
	"github.com/idforge/idforge/internal/redisconn"
	"github.com/idforge/idforge/sequence"
)

func init() {
	for _, base := range []string{"redis", "rediss"} {
		for _, scheme := range redisconn.Schemes(base) {
			sequence.Register(sequence.Scheme{Name: scheme, Form: form(scheme, "key=orders"),
				Doc: "INCR on one Redis key"}, openSource)
			sequence.RegisterCounter(sequence.Scheme{Name: scheme, Form: form(scheme, "name=orders&period=day"),
				Doc: "per-period counters in Redis keys"}, openCounterStore)
		}
	}
}

// form is the URL form of scheme in the registry's listing.
func form(scheme, query string) string {
	switch _, t := redisconn.SplitScheme(scheme); t {
	case redisconn.Sentinel:
		return scheme + "://[user:password@]sentinel1:26379,sentinel2:26379/mymaster?db=0&" + query
	case redisconn.Cluster:
		return scheme + "://[user:password@]node1:6379,node2:6379?" + query
	}
	return scheme + "://[user:password@]host:6379/0?" + query
}

// client opens a go-redis client from u and the parameters left in q
// (go-redis's own, such as pool_size or dial_timeout, and min_replicas
// and wait_timeout) and pings it.
func client(ctx context.Context, u *url.URL, q *dsn.Query) (goredis.UniversalClient, redisconn.Replication, error) {
	if err := q.Err(); err != nil {
		return nil, redisconn.Replication{}, err
	}
	base, _ := redisconn.SplitScheme(u.Scheme)
	o, err := redisconn.Parse(u, q, base == "rediss", true, redisconn.FailFast)
	if err != nil {
		return nil, redisconn.Replication{}, err
	}
	cl := o.NewClient()
	if err := cl.Ping(ctx).Err(); err != nil {
		cl.Close()
		return nil, redisconn.Replication{}, q.Errorf("ping: %v", err)
	}
	return cl, o.Replication, nil
}

// openSource is the sequence.Opener of the redis schemes.
func openSource(ctx context.Context, u *url.URL) (sequence.Source, error) {
	q := dsn.NewQuery(u, "redis source URL")
	cfg := SourceConfig{
		Key:      q.Required("key"),
		Start:    q.Int("start", 1, 1, math.MaxInt64),
		NoCreate: !q.Bool("create", true),
	}
	cl, rep, err := client(ctx, u, q)
	if err != nil {
		return nil, err
	}
	cfg.MinReplicas, cfg.WaitTimeout = rep.MinReplicas, rep.Timeout
	s, err := NewSource(ctx, cl, cfg)
	if err := closeonce.Adopt(err, cl, func() *closeonce.Owned { return &s.owned }); err != nil {
		return nil, err
	}
	return s, nil
}

// openCounterStore is the sequence.CounterOpener of the redis schemes.
func openCounterStore(ctx context.Context, u *url.URL, _ string) (sequence.CounterStore, error) {
	q := dsn.NewQuery(u, "redis counter URL")
	cfg := CounterStoreConfig{Prefix: q.String("prefix", DefaultPrefix), Keep: int(q.Int("keep", DefaultKeep, 1, 1000))}
	cl, rep, err := client(ctx, u, q)
	if err != nil {
		return nil, err
	}
	cfg.MinReplicas, cfg.WaitTimeout = rep.MinReplicas, rep.Timeout
	s := NewCounterStore(cl, cfg)
	closeonce.Adopt(nil, cl, func() *closeonce.Owned { return &s.owned })
	return s, nil
}

// writer is the Writer of a source or counter store: WAIT for
// minReplicas after each write that hands out values.
func writer(c goredis.UniversalClient, minReplicas int, timeout time.Duration) redisconn.Writer {
	if timeout <= 0 {
		timeout = redisconn.DefaultWaitTimeout
	}
	return redisconn.Writer{Client: c, Replication: redisconn.Replication{MinReplicas: minReplicas, Timeout: timeout}}
}
