package segment

import (
	"context"
	"fmt"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/cacheline"
	"github.com/idforge/idforge/internal/testsvc"
)

// reportCPU reports the process's CPU time per ID since cpu0 (cpu-ns/id)
// for b.N calls of perCall IDs each: on a shared machine it moves far
// less than wall time per call. For the parallel benchmarks it is the CPU
// time of all the goroutines' cores per ID.
func reportCPU(b *testing.B, cpu0 time.Duration, perCall int) {
	if cpu0 >= 0 {
		b.ReportMetric(float64(testsvc.CPUTime()-cpu0)/float64(b.N)/float64(perCall), "cpu-ns/id")
	}
}

// The baseline: one bare atomic add, the floor any in-memory issuer pays.
func BenchmarkAtomicAdd(b *testing.B) {
	var n atomic.Int64
	b.ReportAllocs()
	cpu0 := testsvc.CPUTime()
	for b.Loop() {
		n.Add(1)
	}
	reportCPU(b, cpu0, 1)
}

func BenchmarkAtomicAddParallel(b *testing.B) {
	var n atomic.Int64
	b.ReportAllocs()
	cpu0 := testsvc.CPUTime()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			n.Add(1)
		}
	})
	reportCPU(b, cpu0, 1)
}

// callFloor is the bare add behind one call shaped as Next: what any
// generator costs that the compiler cannot inline into its caller. Next
// cannot be inlined (its fast path and the call of its slow path are over
// the inliner's budget), so this, not the inlined add, is its ceiling.
type callFloor struct {
	_ [cacheline.Size]byte
	n atomic.Int64
	_ [cacheline.Size - 8]byte
}

//go:noinline
func (c *callFloor) Next(context.Context) (int64, error) { return c.n.Add(1), nil }

// The call floor's benchmarks have the same loops as BenchmarkNext and
// BenchmarkNextParallel, written out rather than shared: a helper taking
// the generator as a function or a type parameter would call Next
// through a pointer, which is what the inlined build must not do.
func BenchmarkAtomicAddCall(b *testing.B) {
	c := new(callFloor)
	ctx := context.Background()
	b.ReportAllocs()
	cpu0 := testsvc.CPUTime()
	var failed error
	for b.Loop() {
		if _, err := c.Next(ctx); err != nil && failed == nil {
			failed = err
		}
	}
	if failed != nil {
		b.Fatal(failed)
	}
	reportCPU(b, cpu0, 1)
}

func BenchmarkAtomicAddCallParallel(b *testing.B) {
	c := new(callFloor)
	ctx := context.Background()
	b.ReportAllocs()
	cpu0 := testsvc.CPUTime()
	var failures atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := c.Next(ctx); err != nil {
				failures.Add(1)
			}
		}
	})
	if n := failures.Load(); n > 0 {
		b.Fatalf("%d calls failed", n)
	}
	reportCPU(b, cpu0, 1)
}

func benchAllocator(b *testing.B) *Allocator {
	st := newTestStore(b, "bench", 1, 1_000_000)
	a := newAllocator(b, st, "bench", Settings{MinStep: 100_000_000})
	if err := a.Warm(context.Background()); err != nil {
		b.Fatal(err)
	}
	return a
}

// BenchmarkNext keeps the first error and fails after the loop: a
// b.Fatal in the loop makes the compiler store the error's two words on
// the stack at every call, and a store before the next call's locked
// add is a wait the bare add's loop does not have.
func BenchmarkNext(b *testing.B) {
	a := benchAllocator(b)
	ctx := context.Background()
	b.ReportAllocs()
	cpu0 := testsvc.CPUTime()
	var failed error
	for b.Loop() {
		if _, err := a.Next(ctx); err != nil && failed == nil {
			failed = err
		}
	}
	if failed != nil {
		b.Fatal(failed)
	}
	reportCPU(b, cpu0, 1)
}

func BenchmarkNextParallel(b *testing.B) {
	a := benchAllocator(b)
	ctx := context.Background()
	b.ReportAllocs()
	cpu0 := testsvc.CPUTime()
	var failures atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := a.Next(ctx); err != nil {
				failures.Add(1)
			}
		}
	})
	if n := failures.Load(); n > 0 {
		b.Fatalf("%d calls of Next failed", n)
	}
	reportCPU(b, cpu0, 1)
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
	cpu0 := testsvc.CPUTime()
	for b.Loop() {
		if err := draw(a, ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/id")
	reportCPU(b, cpu0, n)
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
