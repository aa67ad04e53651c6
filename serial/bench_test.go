package serial

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/idforge/idforge"
)

// benchGen is the fastest possible source: one atomic add, wrapped to
// stay within eight digits however long the benchmark runs.
type benchGen struct{ n atomic.Int64 }

func (g *benchGen) Next(context.Context) (int64, error) { return g.n.Add(1) % 100_000_000, nil }

// BenchmarkNext renders date + 8-digit sequence + Luhn digit with the
// system clock, next to the bare source and the bare clock reading for
// comparison, and with a fake clock (whose mutex replaces the clock
// reading):
//
//	go test -run '^$' -bench Next -benchmem ./serial/
func BenchmarkNext(b *testing.B) {
	const text = "@{date:yyyyMMdd}@{seq:order,width=8}@{checksum:luhn,of=seq}"
	ctx := context.Background()
	newTemplate := func(b *testing.B) *Template {
		return mustParse(b, text, Options{Clock: idforge.SystemClock, Resolver: Sources{"order": {Generator: &benchGen{}}}})
	}
	b.Run("source", func(b *testing.B) {
		g := &benchGen{}
		b.ReportAllocs()
		for b.Loop() {
			g.Next(ctx)
		}
	})
	b.Run("clock", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			idforge.SystemClock.Now()
		}
	})
	b.Run("serial-fixed-clock", func(b *testing.B) {
		tp := mustParse(b, text, Options{Clock: clockAt(2017, 3, 4, 0, 0, 0), Resolver: Sources{"order": {Generator: &benchGen{}}}})
		b.ReportAllocs()
		for b.Loop() {
			if _, err := tp.Next(ctx, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("serial", func(b *testing.B) {
		tp := newTemplate(b)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := tp.Next(ctx, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		tp := newTemplate(b)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := tp.Next(ctx, nil); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
	b.Run("NextN-100", func(b *testing.B) {
		tp := newTemplate(b)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := tp.NextN(ctx, 100, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkParse measures compiling the same template.
func BenchmarkParse(b *testing.B) {
	src := Sources{"order": {Generator: &benchGen{}}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(context.Background(), "@{date:yyyyMMdd}@{seq:order,width=8}@{checksum:luhn,of=seq}", Options{Resolver: src}); err != nil {
			b.Fatal(err)
		}
	}
}
