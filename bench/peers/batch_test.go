package peers

import (
	"context"
	"fmt"
	"testing"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/segment"
	"github.com/idforge/idforge/snowflake"
	"github.com/idforge/idforge/store/memstore"
)

// newSegment returns a segment allocator whose first claim (made here)
// lasts for any benchmark: the calls measured never touch the store.
func newSegment(b *testing.B) *segment.Allocator {
	st := memstore.New()
	ctx := context.Background()
	if err := st.CreateKey(ctx, idforge.Key{Name: "bench", Strategy: idforge.StrategySegment, Step: 1_000_000, MaxID: 1}); err != nil {
		b.Fatal(err)
	}
	a := segment.New(st, "bench", segment.Settings{MinStep: 1 << 40, Logger: quiet})
	if _, err := a.Next(ctx); err != nil { // claims the first segment
		b.Fatal(err)
	}
	b.Cleanup(func() { a.Close() })
	return a
}

// newSnowflake returns the uncapped benchmarks' idforge generator: 22
// bits of sequence a millisecond, so no batch measured waits for a tick.
func newSnowflake(b *testing.B) *snowflake.Generator {
	l, err := snowflake.ParseLayout("time:41,sequence:22,unit=1ms,epoch=2024-01-01T00:00:00Z")
	if err != nil {
		b.Fatal(err)
	}
	g, err := snowflake.New(snowflake.Settings{Layout: l, Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { g.Close() })
	return g
}

// BenchmarkBatch issues batches into one reused slice (NextInto) from
// one goroutine and reports the process's CPU time per ID (cpu-ns/id),
// to set beside the same generator's Next in BenchmarkUncapped
// (uncapped.sh prints the ratio, the aim being at least 10×).
func BenchmarkBatch(b *testing.B) {
	ctx := context.Background()
	gens := []struct {
		name string
		into func(b *testing.B) func([]int64) (int, error)
	}{
		{"segment", func(b *testing.B) func([]int64) (int, error) {
			a := newSegment(b)
			return func(dst []int64) (int, error) { return a.NextInto(ctx, dst) }
		}},
		{"idforge", func(b *testing.B) func([]int64) (int, error) {
			g := newSnowflake(b)
			return func(dst []int64) (int, error) { return g.NextInto(ctx, dst) }
		}},
	}
	for _, gen := range gens {
		for _, n := range []int{100, 10_000} {
			b.Run(fmt.Sprintf("%s/%d", gen.name, n), func(b *testing.B) {
				into := gen.into(b)
				dst := make([]int64, n)
				cpu0 := processCPU()
				for b.Loop() {
					if _, err := into(dst); err != nil {
						b.Fatal(err)
					}
				}
				sink += dst[n-1]
				b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N)/float64(n), "cpu-ns/id")
			})
		}
	}
}
