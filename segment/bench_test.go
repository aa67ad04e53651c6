package segment

import (
	"context"
	"fmt"
	"math"
	"sync/atomic"
	"testing"

	"github.com/idforge/idforge"
)

// The baseline: one bare atomic add, the floor any in-memory issuer pays.
func BenchmarkAtomicAdd(b *testing.B) {
	var n atomic.Int64
	b.ReportAllocs()
	for b.Loop() {
		n.Add(1)
	}
}

func BenchmarkAtomicAddParallel(b *testing.B) {
	var n atomic.Int64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			n.Add(1)
		}
	})
}

func benchAllocator(b *testing.B) *Allocator {
	st := newTestStore(b, "bench", 1, 1_000_000)
	a := newAllocator(b, st, "bench", Settings{MinStep: 100_000_000})
	if err := a.Warm(context.Background()); err != nil {
		b.Fatal(err)
	}
	return a
}

func BenchmarkNext(b *testing.B) {
	a := benchAllocator(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := a.Next(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkNextParallel(b *testing.B) {
	a := benchAllocator(b)
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := a.Next(ctx); err != nil {
				panic(err)
			}
		}
	})
}

func BenchmarkNextN100(b *testing.B) {
	a := benchAllocator(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := a.NextN(ctx, 100); err != nil {
			b.Fatal(err)
		}
	}
}

// benchBatch draws batches of n IDs with draw and reports the cost per ID
// (ns/id), the figure to set beside Next's ns/op.
func benchBatch(b *testing.B, n int, draw func(a *Allocator, ctx context.Context) error) {
	a := benchAllocator(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := draw(a, ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/id")
}

func BenchmarkNextInto(b *testing.B) {
	for _, n := range []int{100, 10_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			dst := make([]int64, n)
			benchBatch(b, n, func(a *Allocator, ctx context.Context) error {
				_, err := a.NextInto(ctx, dst)
				return err
			})
		})
	}
}

func BenchmarkNextNBatch(b *testing.B) {
	for _, n := range []int{100, 10_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			benchBatch(b, n, func(a *Allocator, ctx context.Context) error {
				_, err := a.NextN(ctx, n)
				return err
			})
		})
	}
}

func BenchmarkAppendRanges10000(b *testing.B) {
	var dst []idforge.Segment
	benchBatch(b, 10_000, func(a *Allocator, ctx context.Context) error {
		var err error
		dst, err = a.AppendRangesBelow(ctx, dst[:0], 10_000, math.MaxInt64)
		return err
	})
}
