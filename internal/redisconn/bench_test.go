package redisconn_test

import (
	"context"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/idforge/idforge/internal/testsvc"
	"github.com/idforge/idforge/sequence"
	seqredis "github.com/idforge/idforge/sequence/redis"
)

// BenchmarkWait measures what WAIT costs the writes that hand out values:
// an INCR source's Next and a per-period counter's Next, each without
// WAIT and with WAIT 1 against a real primary and replica on this
// machine, next to a PING round trip on the same client (the floor).
func BenchmarkWait(b *testing.B) {
	primary := testsvc.StartRedisServer(b)
	replica := testsvc.StartRedisServer(b)
	replica.ReplicaOf(primary.Addr())
	ctx := context.Background()
	client := goredis.NewClient(&goredis.Options{Addr: primary.Addr()})
	b.Cleanup(func() { client.Close() })

	b.Run("floor=PING", func(b *testing.B) {
		for b.Loop() {
			if err := client.Ping(ctx).Err(); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, n := range []int{0, 1} {
		name := map[int]string{0: "min_replicas=0", 1: "min_replicas=1"}[n]
		src, err := seqredis.NewSource(ctx, client, seqredis.SourceConfig{Key: "bench:incr", MinReplicas: n})
		if err != nil {
			b.Fatal(err)
		}
		b.Run("INCR/"+name, func(b *testing.B) {
			for b.Loop() {
				if _, err := src.Next(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("INCR-parallel/"+name, func(b *testing.B) {
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := src.Next(ctx); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
		st := seqredis.NewCounterStore(client, seqredis.CounterStoreConfig{Prefix: "bench:ctr:", MinReplicas: n})
		c, err := sequence.NewCounter(ctx, st, sequence.CounterSettings{Name: "order", Period: sequence.Day})
		if err != nil {
			b.Fatal(err)
		}
		b.Run("counter/"+name, func(b *testing.B) {
			for b.Loop() {
				if _, _, err := c.Next(ctx, time.Time{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
