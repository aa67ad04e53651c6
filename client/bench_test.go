package client

import (
	"context"
	"errors"
	"iter"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/httpwire"
	"github.com/idforge/idforge/internal/testsvc"
	"github.com/idforge/idforge/store/memstore"
)

// BenchmarkClient measures Next through each kind of client, side by
// side: embedded, HTTP and gRPC over loopback TCP, and both remote ones
// with a range cache (batch 1000), which turns most calls into local
// ones. RunParallel with 16 goroutines per CPU; segments are large so
// that store claims do not show.
func BenchmarkClient(b *testing.B) {
	st := memstore.New()
	st.CreateKey(context.Background(), idforge.Key{Name: "order", Strategy: idforge.StrategySegment, Step: idforge.MaxStep, MaxID: 1})
	n := newNode(b, st, 1, 100_000_000)
	for _, v := range []struct {
		name string
		mode mode
		opts []Option
	}{
		{"Embedded", modes[0], nil},
		{"HTTP", modes[1], nil},
		{"GRPC", modes[2], nil},
		{"HTTP+RangeCache1000", modes[1], []Option{WithRangeCache(1000, 0.2)}},
		{"HTTP+RangeCache10000", modes[1], []Option{WithRangeCache(10000, 0.2)}},
		{"GRPC+RangeCache1000", modes[2], []Option{WithRangeCache(1000, 0.2)}},
		{"GRPC+RangeCache10000", modes[2], []Option{WithRangeCache(10000, 0.2)}},
	} {
		b.Run(v.name+"/Next", func(b *testing.B) {
			c := v.mode.new(b, []*node{n}, v.opts...)
			defer c.Close()
			ctx := context.Background()
			if _, err := c.Next(ctx, "order"); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.SetParallelism(16)
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := c.Next(ctx, "order"); err != nil {
						panic(err)
					}
				}
			})
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "ids/s")
		})
	}
	// One caller: the cost of a cached ID when refills keep up.
	b.Run("GRPC+RangeCache10000/NextSerial", func(b *testing.B) {
		c := modes[2].new(b, []*node{n}, WithRangeCache(10000, 0.2))
		defer c.Close()
		ctx := context.Background()
		if _, err := c.Next(ctx, "order"); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		start := time.Now()
		for b.Loop() {
			if _, err := c.Next(ctx, "order"); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "ids/s")
	})
}

// localConn is a node without a network: it hands out consecutive
// ranges at once, so that BenchmarkRangeCache measures the cache alone.
type localConn struct{ last atomic.Int64 }

func (l *localConn) next(ctx context.Context, key string) (int64, error) {
	return l.last.Add(1), nil
}

func (l *localConn) nextN(ctx context.Context, key string, n int) ([]int64, error) {
	end := l.last.Add(int64(n))
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = end - int64(n) + int64(i) + 1
	}
	return ids, nil
}

// nextStrings and nextSerial are not measured; a range cache never
// calls them.
func (l *localConn) nextStrings(ctx context.Context, key string, n int) ([]string, error) {
	return nil, errors.New("localConn issues no strings")
}

func (l *localConn) nextSerial(ctx context.Context, name string, n int, params map[string]string) ([]string, error) {
	return nil, errors.New("localConn issues no serials")
}

func (l *localConn) explain(ctx context.Context, id int64) (Explanation, error) {
	return Explanation{}, nil
}

func (l *localConn) explainPacked(ctx context.Context, source string, id int64) (idforge.Unpacked, error) {
	return idforge.Unpacked{}, nil
}

func (l *localConn) key(ctx context.Context, key string) (idforge.Key, error) {
	return idforge.Key{Name: key, Strategy: idforge.StrategySegment}, nil
}

func (l *localConn) updateKey(context.Context, string, idforge.KeyChange) error { return nil }
func (l *localConn) retireKey(context.Context, string) error                    { return nil }

func (l *localConn) stream(ctx context.Context, key string, batch int, _ time.Duration, yield func([]int64) bool) error {
	for {
		ids, err := l.nextN(ctx, key, batch)
		if err != nil {
			return err
		}
		if !yield(ids) {
			return nil
		}
	}
}

func (l *localConn) block(ctx context.Context, key string, n int) ([]int64, error) {
	return l.nextN(ctx, key, n)
}

func (l *localConn) close() error { return nil }

func (l *localConn) reserve(context.Context, string, map[string]string) (idforge.Reservation, error) {
	return idforge.Reservation{}, nil
}
func (l *localConn) end(context.Context, string, string, string, string) (idforge.Reservation, error) {
	return idforge.Reservation{}, nil
}
func (l *localConn) audit(context.Context, string, int64, int64) (httpwire.Audit, error) {
	return httpwire.Audit{}, nil
}

// BenchmarkRangeCache measures what a cached ID costs the caller when
// refills keep up (a node that answers at once): the atomic add of the
// hot path, plus the refills amortised over 10,000 IDs.
func BenchmarkRangeCache(b *testing.B) {
	newClient := func(b *testing.B) Client {
		r := &remote{eps: []*endpoint{{bit: 1, conn: &localConn{}}}, timeout: time.Second}
		c := newCached(r, 10_000, 0.2)
		b.Cleanup(func() { c.Close() })
		if _, err := c.Next(context.Background(), "order"); err != nil {
			b.Fatal(err)
		}
		return c
	}
	b.Run("Next", func(b *testing.B) {
		c := newClient(b)
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.Next(ctx, "order"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("NextParallel", func(b *testing.B) {
		c := newClient(b)
		ctx := context.Background()
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := c.Next(ctx, "order"); err != nil {
					panic(err)
				}
			}
		})
	})
}

// BenchmarkStream measures Client.Stream end to end, the client's
// decoding included: one op is one batch of 10,000 IDs, read by 8
// concurrent streams (as BenchmarkStreamSQLite in server/grpcapi), over
// gRPC (one Stream call each, form ranges) and over HTTP (one
// form=ranges request per batch), with the node on loopback TCP in the
// same process; the floor (expand) is what the client does with each
// batch at the least, a new slice of 10,000 IDs filled from a range,
// without a node. It reports IDs/s and the process's CPU time per ID.
//
//	go test -run '^$' -bench 'BenchmarkStream$' -count 5 ./client/
func BenchmarkStream(b *testing.B) {
	st := memstore.New()
	st.CreateKey(context.Background(), idforge.Key{Name: "order", Strategy: idforge.StrategySegment, Step: idforge.MaxStep, MaxID: 1})
	n := newNode(b, st, 1, 0)
	const batch = 10_000
	// streams returns how to start one of the 8 streams.
	streams := map[string]func(b *testing.B) func() iter.Seq2[[]int64, error]{
		"expand": func(*testing.B) func() iter.Seq2[[]int64, error] {
			return func() iter.Seq2[[]int64, error] {
				return func(yield func([]int64, error) bool) {
					for start := int64(1); yield(appendRun(make([]int64, 0, batch), start, batch), nil); start += batch {
					}
				}
			}
		},
	}
	for _, m := range []mode{modes[1], modes[2]} {
		streams[m.name] = func(b *testing.B) func() iter.Seq2[[]int64, error] {
			c := m.new(b, []*node{n})
			ctx, cancel := context.WithCancel(context.Background())
			b.Cleanup(func() { cancel(); c.Close() })
			return func() iter.Seq2[[]int64, error] { return c.Stream(ctx, "order", batch) }
		}
	}
	for _, name := range []string{"expand", "http", "grpc"} {
		b.Run(name, func(b *testing.B) {
			stream := streams[name](b)
			var left, ids atomic.Int64
			left.Store(int64(b.N))
			var wg sync.WaitGroup
			start, cpu0 := time.Now(), testsvc.CPUTime()
			for range 8 {
				wg.Go(func() {
					for got, err := range stream() {
						if err != nil {
							panic(err)
						}
						ids.Add(int64(len(got)))
						if left.Add(-1) <= 0 {
							return
						}
					}
				})
			}
			wg.Wait()
			b.ReportMetric(float64(ids.Load())/time.Since(start).Seconds(), "ids/s")
			if cpu := testsvc.CPUTime() - cpu0; cpu0 >= 0 {
				b.ReportMetric(float64(cpu.Nanoseconds())/float64(ids.Load()), "cpu-ns/id")
			}
		})
	}
}
