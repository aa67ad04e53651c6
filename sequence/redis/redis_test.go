package redis_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/redisconn"
	"github.com/idforge/idforge/internal/testsvc"
	"github.com/idforge/idforge/sequence"
	"github.com/idforge/idforge/sequence/internal/seqtest"
	"github.com/idforge/idforge/sequence/redis"
)

// server returns the test server's URL without testsvc's prefix parameter,
// and the prefix, which every key of the test must contain.
func server(tb testing.TB) (string, string) {
	tb.Helper()
	u, err := url.Parse(testsvc.Redis(tb))
	if err != nil {
		tb.Fatal(err)
	}
	prefix := u.Query().Get("prefix")
	u.RawQuery = ""
	return u.String(), prefix
}

func client(tb testing.TB, raw string) *goredis.Client {
	tb.Helper()
	opts, err := goredis.ParseURL(raw)
	if err != nil {
		tb.Fatal(err)
	}
	c := goredis.NewClient(opts)
	tb.Cleanup(func() { c.Close() })
	return c
}

func TestSourceConcurrent(t *testing.T) {
	raw, prefix := server(t)
	src := raw + "?key=" + prefix + ":orders"
	got := seqtest.Collect(t, func(tb testing.TB) idforge.Generator {
		s, err := sequence.Open(context.Background(), src) // an independent client each time
		if err != nil {
			tb.Fatal(err)
		}
		return s
	}, 4, 8, 150)
	seqtest.Unique(t, got)
	if len(got) != 4*8*150 {
		t.Fatalf("%d values", len(got))
	}
}

func TestSourceStartAndNoCreate(t *testing.T) {
	raw, prefix := server(t)
	ctx := context.Background()
	s, err := sequence.Open(ctx, raw+"?key="+prefix+":a&start=1000")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if v, err := s.Next(ctx); err != nil || v != 1000 {
		t.Fatalf("first value %d, %v; want 1000", v, err)
	}
	_, err = sequence.Open(ctx, raw+"?key="+prefix+":missing&create=false")
	if !errors.Is(err, sequence.ErrCounterLost) {
		t.Fatalf("missing key without creation: %v, want ErrCounterLost", err)
	}
	s.Close()
	if _, err := s.Next(ctx); !errors.Is(err, idforge.ErrClosed) {
		t.Fatalf("Next after Close: %v", err)
	}
}

// TestSourceLostKey: a key that is evicted, flushed or restored lower is
// reported, never restarted.
func TestSourceLostKey(t *testing.T) {
	raw, prefix := server(t)
	ctx := context.Background()
	c := client(t, raw)
	key := prefix + ":lost"
	s, err := redis.NewSource(ctx, c, redis.SourceConfig{Key: key})
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if _, err := s.Next(ctx); err != nil {
			t.Fatal(err)
		}
	}
	c.Del(ctx, key) // evicted
	if _, err := s.Next(ctx); !errors.Is(err, sequence.ErrCounterLost) || !errors.Is(err, idforge.ErrUnavailable) {
		t.Fatalf("after the key vanished: %v, want ErrCounterLost", err)
	}
	if n, _ := c.Exists(ctx, key).Result(); n != 0 {
		t.Fatal("Next re-created the lost key")
	}
	c.Set(ctx, key, 2, 0) // a stale replica took over
	if _, err := s.Next(ctx); !errors.Is(err, sequence.ErrCounterLost) {
		t.Fatalf("after the key went back: %v, want ErrCounterLost", err)
	}
	c.Set(ctx, key, 100, 0) // an operator set it above every value issued
	if v, err := s.Next(ctx); err != nil || v != 101 {
		t.Fatalf("after repair: %d, %v", v, err)
	}
}

func TestSourceOverflow(t *testing.T) {
	raw, prefix := server(t)
	ctx := context.Background()
	c := client(t, raw)
	key := prefix + ":big"
	c.Set(ctx, key, "9223372036854775806", 0)
	s, err := redis.NewSource(ctx, c, redis.SourceConfig{Key: key})
	if err != nil {
		t.Fatal(err)
	}
	if v, err := s.Next(ctx); err != nil || v != 9223372036854775807 {
		t.Fatalf("%d, %v", v, err)
	}
	if _, err := s.Next(ctx); !errors.Is(err, idforge.ErrSpaceExhausted) {
		t.Fatalf("past the largest int64: %v", err)
	}
}

func TestCounterStore(t *testing.T) {
	raw, prefix := server(t)
	seqtest.CounterSuite(t, func(tb testing.TB) sequence.CounterStore {
		return redis.NewCounterStore(client(tb, raw), redis.CounterStoreConfig{Prefix: prefix + ":"})
	}, func(tb testing.TB, name string) {
		c := client(tb, raw)
		ctx := context.Background()
		keys, err := c.Keys(ctx, prefix+":"+name+":*").Result()
		if err != nil || len(keys) == 0 {
			tb.Fatalf("keys of %s: %v %v", name, keys, err)
		}
		c.Del(ctx, keys...)
	})
}

// TestCounterExpiredKey: the count key of the mark's period has expired
// when the clock goes back past it; the mark key carries the count on.
func TestCounterExpiredKey(t *testing.T) {
	raw, prefix := server(t)
	ctx := context.Background()
	c := client(t, raw)
	st := redis.NewCounterStore(c, redis.CounterStoreConfig{Prefix: prefix + ":"})
	req := sequence.CountRequest{Name: "exp", Period: sequence.Second, Stamp: 20250413120000}
	for i := int64(1); i <= 3; i++ {
		res, err := st.Count(ctx, req)
		if err != nil || res.N != i {
			t.Fatalf("count %d: %+v, %v", i, res, err)
		}
	}
	c.Del(ctx, prefix+":exp:20250413120000") // expired
	req.Stamp = 20250413110000               // clock an hour behind, no floor
	res, err := st.Count(ctx, req)
	if err != nil || res.Stamp != 20250413120000 || res.N != 4 {
		t.Fatalf("after expiry, clock behind: %+v, %v; want 4 in 20250413120000", res, err)
	}
}

func TestOpenCounterURL(t *testing.T) {
	raw, prefix := server(t)
	ctx := context.Background()
	c, err := sequence.OpenCounter(ctx, raw+"?name=order_seq&period=second&cap=16383&over_cap=refuse&tz=Asia/Shanghai&prefix="+prefix+":&dir="+t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	n, p, err := c.Next(ctx, seqtest.T0)
	if err != nil || n != 1 {
		t.Fatalf("%d, %v", n, err)
	}
	if got := p.Format("060102150405"); got != "250413200000" {
		t.Fatalf("period %s, want 250413200000 (Shanghai)", got)
	}
	keys, _ := client(t, raw).Keys(ctx, prefix+":order_seq:*").Result()
	if len(keys) != 2 {
		t.Fatalf("keys %v, want the period's count and the mark", keys)
	}
	for _, bad := range []string{
		raw + "?period=second",               // no name
		raw + "?name=x&period=fortnight",     // bad period
		raw + "?name=x&period=day&cap=-1",    // bad cap
		raw + "?name=x&period=day&tz=Mars/X", // bad zone
	} {
		if _, err := sequence.OpenCounter(ctx, bad); !errors.Is(err, idforge.ErrInvalidArgument) {
			t.Errorf("OpenCounter(%s): %v, want ErrInvalidArgument", bad, err)
		}
	}
}

func BenchmarkSourceNext(b *testing.B) {
	raw, prefix := server(b)
	ctx := context.Background()
	s, err := redis.NewSource(ctx, client(b, raw), redis.SourceConfig{Key: prefix + ":bench"})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Next(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPlainINCR is the baseline: an unguarded INCR, which would
// restart an evicted key at 1.
func BenchmarkPlainINCR(b *testing.B) {
	raw, prefix := server(b)
	ctx := context.Background()
	c := client(b, raw)
	b.ReportAllocs()
	for b.Loop() {
		if err := c.Incr(ctx, prefix+":plain").Err(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSourceNextParallel(b *testing.B) {
	raw, prefix := server(b)
	ctx := context.Background()
	s, err := redis.NewSource(ctx, client(b, raw), redis.SourceConfig{Key: prefix + ":benchp"})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := s.Next(ctx); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func BenchmarkCounterNext(b *testing.B) {
	raw, prefix := server(b)
	ctx := context.Background()
	c, err := sequence.NewCounter(ctx, redis.NewCounterStore(client(b, raw), redis.CounterStoreConfig{Prefix: prefix + ":"}),
		sequence.CounterSettings{Name: "bench", Period: sequence.Second})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := c.Next(ctx, seqtest.T0); err != nil {
			b.Fatal(err)
		}
	}
}

// TestSentinel runs the source and the counter suite through Redis
// Sentinel (a primary, one replica, three sentinels started by the
// test), where every value waits for the replica (min_replicas
// defaults to 1), and checks that Backwards counts a counter that went
// back.
func TestSentinel(t *testing.T) {
	testsvc.Slow(t)
	ss, primary := testsvc.StartRedisSentinelSet(t, 1)
	ctx := context.Background()
	got := seqtest.Collect(t, func(tb testing.TB) idforge.Generator {
		s, err := sequence.Open(ctx, ss.URL("redis+sentinel", "key=orders"))
		if err != nil {
			tb.Fatal(err)
		}
		return s
	}, 4, 4, 50)
	seqtest.Unique(t, got)

	fo, err := goredis.ParseFailoverURL("redis://" + ss.Addrs()[0] + "?master_name=" + ss.Master)
	if err != nil {
		t.Fatal(err)
	}
	c := goredis.NewFailoverClient(fo)
	t.Cleanup(func() { c.Close() })
	seqtest.CounterSuite(t, func(tb testing.TB) sequence.CounterStore {
		return redis.NewCounterStore(c, redis.CounterStoreConfig{Prefix: "ctr:", MinReplicas: 1})
	}, func(tb testing.TB, name string) {
		keys, err := c.Keys(ctx, "ctr:"+name+":*").Result()
		if err != nil || len(keys) == 0 {
			tb.Fatalf("keys of %s: %v %v", name, keys, err)
		}
		c.Del(ctx, keys...)
	})

	s, err := redis.NewSource(ctx, c, redis.SourceConfig{Key: "back", MinReplicas: 1})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := s.Next(ctx); err != nil {
			t.Fatal(err)
		}
	}
	primary.Do("SET", "back", 1) // as a promoted replica without the latest increments
	if _, err := s.Next(ctx); !errors.Is(err, sequence.ErrCounterLost) || s.Backwards() != 1 {
		t.Fatalf("counter went back: %v, Backwards %d; want ErrCounterLost, 1", err, s.Backwards())
	}
}

// TestNotReplicated: a value no replica acknowledged is not handed out
// (503, a gap); once a replica has the writes, values flow again.
func TestNotReplicated(t *testing.T) {
	srv := testsvc.StartRedisServer(t)
	ctx := context.Background()
	c := client(t, srv.URL())
	s, err := redis.NewSource(ctx, c, redis.SourceConfig{Key: "k", MinReplicas: 1, WaitTimeout: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var nr *redisconn.NotReplicatedError
	if _, err := s.Next(ctx); !errors.As(err, &nr) || idforge.ErrorCode(err) != idforge.CodeUnavailable {
		t.Fatalf("without a replica: %v, want a NotReplicatedError with code unavailable", err)
	}
	st := redis.NewCounterStore(c, redis.CounterStoreConfig{Prefix: "c:", MinReplicas: 1, WaitTimeout: 20 * time.Millisecond})
	if _, err := st.Count(ctx, sequence.CountRequest{Name: "n", Period: sequence.Day, Stamp: 20260101}); !errors.As(err, &nr) {
		t.Fatalf("count without a replica: %v, want a NotReplicatedError", err)
	}
	srv.Do("CONFIG", "SET", "repl-ping-replica-period", "1") // the replica's first acknowledgement comes after a ping
	testsvc.StartRedisServer(t).ReplicaOf(srv.Addr())
	// The replica's link being up does not mean the primary counts it yet,
	// and 20ms is too short for WAIT on a loaded machine: a second source
	// on the same counter, with the default timeout, once the primary has
	// heard from its replica.
	// Nor that the replica has acknowledged anything yet: it does once a
	// second, and until then the primary shows it at offset 0.
	acked := func() bool {
		slave := srv.Info("replication", "slave0")
		return strings.Contains(slave, "state=online") && !strings.Contains(slave, "offset=0,")
	}
	for deadline := time.Now().Add(30 * time.Second); !acked(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the primary never saw its replica acknowledge")
		}
	}
	s, err = redis.NewSource(ctx, c, redis.SourceConfig{Key: "k", MinReplicas: 1})
	if err != nil {
		t.Fatal(err)
	}
	if v, err := s.Next(ctx); err != nil || v != 2 {
		t.Fatalf("with a replica: %d, %v; want 2 (1 was not handed out: a gap)", v, err)
	}
}
