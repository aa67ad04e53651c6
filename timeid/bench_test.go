package timeid

import (
	"context"
	"testing"
)

// Run: go test -run '^$' -bench . -benchmem ./timeid/

func BenchmarkNext(b *testing.B) {
	for k, g := range kinds(b, nil) {
		ctx := context.Background()
		b.Run(string(k), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := g.Next(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(string(k)+"/parallel", func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := g.Next(ctx); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
		b.Run(string(k)+"/NextN100", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := g.NextN(ctx, 100); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*100), "ns/id")
		})
	}
}

func BenchmarkTime(b *testing.B) {
	for _, id := range []string{"017f22e2-79b0-7cc3-98c4-dc0c0c07398f", "01ARZ3NDEKTSV4RRFFQ69G5FAV"} {
		b.Run(id, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Time(id); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
