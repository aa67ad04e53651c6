// Package seqtest holds the test harness of the sequence packages: many
// goroutines over several independent instances (as several processes
// would be), duplicate checks, and the conformance suite every counter
// store runs against its real service.
package seqtest

import (
	"context"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/idforge/idforge"
)

// Collect opens instances generators with open (each must be an
// independent client of the same backing store) and calls Next per times
// from each of workers goroutines per instance. Errors travel back over a
// channel and fail tb on its own goroutine. It returns every value.
func Collect(tb testing.TB, open func(tb testing.TB) idforge.Generator, instances, workers, per int) []int64 {
	tb.Helper()
	gens := make([]idforge.Generator, instances)
	for i := range gens {
		gens[i] = open(tb)
		if c, ok := gens[i].(io.Closer); ok {
			tb.Cleanup(func() { c.Close() })
		}
	}
	return Run(tb, gens, workers, per)
}

// Run calls Next per times from workers goroutines on each generator and
// returns every value; it fails tb with the first errors.
func Run(tb testing.TB, gens []idforge.Generator, workers, per int) []int64 {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	total := len(gens) * workers
	results := make(chan []int64, total)
	errs := make(chan error, total)
	var wg sync.WaitGroup
	for g, gen := range gens {
		for w := range workers {
			wg.Go(func() {
				vals := make([]int64, 0, per)
				for range per {
					v, err := gen.Next(ctx)
					if err != nil {
						errs <- fmt.Errorf("instance %d, goroutine %d, after %d values: %w", g, w, len(vals), err)
						break
					}
					vals = append(vals, v)
				}
				results <- vals
			})
		}
	}
	wg.Wait()
	close(results)
	close(errs)
	for err := range errs {
		tb.Error(err)
	}
	var all []int64
	for vals := range results {
		all = append(all, vals...)
	}
	return all
}

// Unique fails tb for each value of vals that occurs more than once, and
// for values below 1.
func Unique(tb testing.TB, vals []int64) {
	tb.Helper()
	seen := make(map[int64]int, len(vals))
	dups := 0
	for _, v := range vals {
		if v < 1 {
			tb.Errorf("value %d is below 1", v)
		}
		seen[v]++
		if seen[v] == 2 {
			dups++
			if dups <= 10 {
				tb.Errorf("value %d issued more than once", v)
			}
		}
	}
	if dups > 0 {
		tb.Errorf("%d values issued more than once among %d", dups, len(vals))
	}
}

// BenchFence benchmarks the Next of a source fenced against fail-overs
// (sqldb.Fence) next to the same kind of source on a database
// without the fence, the floor: sub-benchmarks "unfenced" and "fenced" of
// one run, so that -count interleaves them and their ratio compares
// values taken under the same load.
func BenchFence(b *testing.B, fenced, unfenced idforge.Generator) {
	ctx := context.Background()
	for _, s := range []struct {
		name string
		gen  idforge.Generator
	}{{"unfenced", unfenced}, {"fenced", fenced}} {
		b.Run(s.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.gen.Next(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
