package issuer

import (
	"context"
	"testing"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/segment"
	"github.com/idforge/idforge/store/memstore"
)

// BenchmarkNext measures issuing by key name: the lookup of the key's
// allocator on top of the allocator's own Next.
func BenchmarkNext(b *testing.B) {
	st := memstore.New()
	ctx := context.Background()
	st.CreateKey(ctx, idforge.Key{Name: "order", Strategy: idforge.StrategySegment, Step: idforge.MaxStep, MaxID: 1})
	iss := New(st, nil, Settings{Logger: quiet, Segment: segment.Settings{MaxStep: 10_000_000}})
	defer iss.Close()
	if _, err := iss.Next(ctx, "order"); err != nil {
		b.Fatal(err)
	}
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := iss.Next(ctx, "order"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := iss.Next(ctx, "order"); err != nil {
					panic(err)
				}
			}
		})
	})
}
