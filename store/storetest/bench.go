package storetest

import (
	"context"
	"testing"

	"github.com/idforge/idforge"
)

// Bench runs the benchmark suite against the stores open returns: one
// claim at a time, claims from GOMAXPROCS goroutines at once (run with
// -cpu to vary that), and a key lookup. Each benchmark reports allocations.
func Bench(b *testing.B, open func(b *testing.B) idforge.Store) {
	setup := func(b *testing.B) idforge.Store {
		b.Helper()
		st := open(b)
		b.Cleanup(func() { st.Close() })
		k := idforge.Key{Name: "bench", Strategy: idforge.StrategySegment, Step: 1000, MaxID: 1}
		if err := st.CreateKey(context.Background(), k); err != nil {
			b.Fatalf("CreateKey: %v", err)
		}
		return st
	}

	b.Run("ClaimSegment/Serial", func(b *testing.B) {
		st := setup(b)
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			if _, err := st.ClaimSegment(ctx, "bench", 0); err != nil {
				b.Fatal(err)
			}
		}
	})

	b.Run("ClaimSegment/Parallel", func(b *testing.B) {
		st := setup(b)
		ctx := context.Background()
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := st.ClaimSegment(ctx, "bench", 0); err != nil {
					b.Error(err) // Fatal must not be called off the benchmark goroutine
					return
				}
			}
		})
	})

	b.Run("Key", func(b *testing.B) {
		st := setup(b)
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			if _, err := st.Key(ctx, "bench"); err != nil {
				b.Fatal(err)
			}
		}
	})
}
