package compose_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/testsvc"
	"github.com/idforge/idforge/sequence"
	"github.com/idforge/idforge/sequence/compose"
)

// mem is the cheapest possible source: one atomic add per value. The
// benchmarks compare each composition with it, so the difference is the
// composition's overhead per ID.
type mem struct{ n atomic.Int64 }

func (m *mem) Next(context.Context) (int64, error) { return m.n.Add(1), nil }

func benchGen(b *testing.B, gen idforge.Generator) {
	ctx := context.Background()
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := gen.Next(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := gen.Next(ctx); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}

// go test -run '^$' -bench . -benchtime 2s ./sequence/compose/
func BenchmarkSource(b *testing.B) {
	b.Run("bare", func(b *testing.B) { benchGen(b, &mem{}) })
	b.Run("balanced4", func(b *testing.B) {
		bal, err := compose.NewBalanced([]idforge.Generator{&mem{}, &mem{}, &mem{}, &mem{}}, compose.BalancedOptions{Logger: quiet})
		if err != nil {
			b.Fatal(err)
		}
		benchGen(b, bal)
	})
	for _, m := range []int{3, 10} {
		for _, prefetch := range []bool{true, false} {
			name := fmt.Sprintf("expanded_m%d", m)
			if !prefetch {
				name += "_noprefetch"
			}
			b.Run(name, func(b *testing.B) {
				e, err := compose.NewExpanded(&mem{}, compose.ExpandedOptions{MemoryBits: m, NoPrefetch: !prefetch, Logger: quiet})
				if err != nil {
					b.Fatal(err)
				}
				defer e.Close()
				benchGen(b, e)
			})
		}
	}
	b.Run("expanded_m3_nextn100", func(b *testing.B) {
		e, err := compose.NewExpanded(&mem{}, compose.ExpandedOptions{MemoryBits: 3, Logger: quiet})
		if err != nil {
			b.Fatal(err)
		}
		defer e.Close()
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			if _, err := e.NextN(ctx, 100); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(100*b.N), "ns/ID")
	})
}

// The same over real Redis sources on a throwaway server: here the inner
// call is a network round trip, which Expanded pays once per 2^m IDs and
// the prefetcher takes off the callers' path.
//
// go test -run '^$' -bench Redis ./sequence/compose/
func BenchmarkRedis(b *testing.B) {
	srv := testsvc.StartRedisServer(b)
	ctx := context.Background()
	open := func(b *testing.B, key string) sequence.Source {
		s, err := sequence.Open(ctx, srv.URL()+"?key="+key)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		return s
	}
	balanced := func(b *testing.B, prefix string) *compose.Balanced {
		srcs := make([]idforge.Generator, 4)
		for i := range srcs {
			srcs[i] = open(b, fmt.Sprintf("%s%d", prefix, i))
		}
		bal, err := compose.NewBalanced(srcs, compose.BalancedOptions{Logger: quiet})
		if err != nil {
			b.Fatal(err)
		}
		return bal
	}
	expanded := func(b *testing.B, inner idforge.Generator, m int) *compose.Expanded {
		e, err := compose.NewExpanded(inner, compose.ExpandedOptions{MemoryBits: m, Logger: quiet})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { e.Close() })
		return e
	}
	b.Run("bare", func(b *testing.B) { benchGen(b, open(b, "bare")) })
	b.Run("balanced4", func(b *testing.B) { benchGen(b, balanced(b, "bal")) })
	b.Run("expanded_m3", func(b *testing.B) { benchGen(b, expanded(b, open(b, "exp3"), 3)) })
	b.Run("expanded_m10", func(b *testing.B) { benchGen(b, expanded(b, open(b, "exp10"), 10)) })
	b.Run("expanded_m3_over_balanced4", func(b *testing.B) { benchGen(b, expanded(b, balanced(b, "eb"), 3)) })
}
