package segment

import (
	"context"
	"sync/atomic"
	"testing"
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
	a := newAllocator(b, st, "bench", Settings{MinStep: 1_000_000, MaxStep: 10_000_000})
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
