package redis

import (
	"context"
	"math"
	"net/url"

	goredis "github.com/redis/go-redis/v9"

	"github.com/idforge/idforge/internal/dsn"
	"github.com/idforge/idforge/sequence"
)

func init() {
	for _, scheme := range []string{"redis", "rediss"} {
		sequence.Register(sequence.Scheme{Name: scheme, Form: scheme + "://[user:password@]host:6379/0?key=orders",
			Doc: "INCR on one Redis key"}, openSource)
		sequence.RegisterCounter(sequence.Scheme{Name: scheme, Form: scheme + "://[user:password@]host:6379/0?name=orders&period=day",
			Doc: "per-period counters in Redis keys"}, openCounterStore)
	}
}

// client opens a go-redis client from u and the parameters left in q
// (go-redis's own, such as pool_size or dial_timeout).
func client(ctx context.Context, u *url.URL, q *dsn.Query) (*goredis.Client, error) {
	if err := q.Err(); err != nil {
		return nil, err
	}
	c := *u
	c.RawQuery = q.Rest().Encode()
	opts, err := goredis.ParseURL(c.String())
	if err != nil {
		return nil, q.Errorf("%v", err)
	}
	cl := goredis.NewClient(opts)
	if err := cl.Ping(ctx).Err(); err != nil {
		cl.Close()
		return nil, q.Errorf("ping: %v", err)
	}
	return cl, nil
}

// openSource is the sequence.Opener of "redis" and "rediss".
func openSource(ctx context.Context, u *url.URL) (sequence.Source, error) {
	q := dsn.NewQuery(u, "redis source URL")
	cfg := SourceConfig{
		Key:      q.String("key", ""),
		Start:    q.Int("start", 1, 1, math.MaxInt64),
		NoCreate: !q.Bool("create", true),
	}
	if cfg.Key == "" && q.Err() == nil {
		return nil, q.Errorf("parameter key is required")
	}
	cl, err := client(ctx, u, q)
	if err != nil {
		return nil, err
	}
	s, err := NewSource(ctx, cl, cfg)
	if err != nil {
		cl.Close()
		return nil, err
	}
	s.owned = true
	return s, nil
}

// openCounterStore is the sequence.CounterOpener of "redis" and "rediss".
func openCounterStore(ctx context.Context, u *url.URL, _ string) (sequence.CounterStore, error) {
	q := dsn.NewQuery(u, "redis counter URL")
	cfg := CounterStoreConfig{Prefix: q.String("prefix", DefaultPrefix), Keep: int(q.Int("keep", DefaultKeep, 1, 1000))}
	cl, err := client(ctx, u, q)
	if err != nil {
		return nil, err
	}
	s := NewCounterStore(cl, cfg)
	s.owned = true
	return s, nil
}
