package snowflake

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/idforge/idforge/internal/testsvc"
)

func newBench(b *testing.B, spec string) *Generator {
	b.Helper()
	return newGen(b, Settings{Layout: mustParse(b, spec)})
}

// BenchmarkNext measures one call: layouts whose sequence (2^22 or 2^18
// per ms) is far beyond what one goroutine can use, so no call waits. The
// fence variant stores to an in-memory Fence (in the background, every
// second).
func BenchmarkNext(b *testing.B) {
	for _, tc := range []struct {
		name, spec string
		fence      bool
	}{
		{"seq22", "time:41,sequence:22,unit=1ms,epoch=2024-01-01T00:00:00Z", false},
		{"seq18-fixed-worker", "type:1=1,time:40,worker:4,sequence:18,unit=1ms,epoch=2024-01-01T00:00:00Z", false},
		{"seq22-fence", "time:41,sequence:22,unit=1ms,epoch=2024-01-01T00:00:00Z", true},
	} {
		b.Run(tc.name, func(b *testing.B) {
			s := Settings{Layout: mustParse(b, tc.spec)}
			if tc.fence {
				s.Fence = &memFence{}
			}
			g := newGen(b, s)
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := g.Next(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkNextParallel(b *testing.B) {
	g := newBench(b, "time:41,sequence:22,unit=1ms,epoch=2024-01-01T00:00:00Z")
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := g.Next(ctx); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func BenchmarkNextN(b *testing.B) {
	for _, n := range []int{16, 256} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			g := newBench(b, "time:41,sequence:22,unit=1ms,epoch=2024-01-01T00:00:00Z")
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := g.NextN(ctx, n); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/id")
		})
	}
}

// BenchmarkCap issues IDs from one goroutine as fast as the layout
// allows, on the system clock, and reports
//
//   - ids/s: IDs issued per second of the ticks they span (from the
//     start of the first tick to the end of the last);
//   - cap-%: that rate as a share of Layout.CapPerSecond, i.e. the share
//     of the spanned ticks' sequence numbers actually used (100 when no
//     tick is lost);
//   - cpu-%: process CPU time (user+system) over wall time while issuing.
//
// Each run starts at a tick boundary and, after b.N IDs, finishes the last
// tick (timed: ns/op is then the real cost of an ID at the cap), so
// partial ticks at either end do not skew the rate. Run with -benchtime
// of a few seconds; the vesta-max-peak preset has 1 s ticks, so its
// sub-benchmark takes half a minute to settle on b.N.
func BenchmarkCap(b *testing.B) {
	for _, name := range []string{"twitter", "vesta-max-peak", "sonyflake"} {
		l := mustPreset(b, name)
		// One generator for all rounds of the sub-benchmark.
		g, err := New(Settings{Layout: l, Logger: discard})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { g.Close() })
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			tickOf := func(id int64) int64 { return id >> g.p.timeShift & maxOf(g.p.timeBits) }
			seqOf := func(id int64) int64 { return id >> g.p.seqShift & g.maxSeq }
			next := func() int64 {
				id, err := g.Next(ctx)
				if err != nil {
					b.Fatal(err)
				}
				return id
			}

			// Align: issue until a fresh tick starts (sequence 0).
			id := next()
			for seqOf(id) != 0 {
				id = next()
			}
			firstTick, issued := tickOf(id), int64(1)

			cpu0, wall0 := testsvc.CPUTime(), time.Now()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				id = next()
			}
			for seqOf(id) != g.maxSeq { // finish the last tick
				id = next()
				issued++
			}
			b.StopTimer()
			wall, cpu := time.Since(wall0), testsvc.CPUTime()-cpu0
			issued += int64(b.N)

			spanned := tickOf(id) - firstTick + 1
			rate := float64(issued) / (float64(spanned) * l.Unit.Seconds())
			b.ReportMetric(rate, "ids/s")
			b.ReportMetric(100*rate/l.CapPerSecond(), "cap-%")
			if cpu >= 0 {
				b.ReportMetric(100*float64(cpu)/float64(wall), "cpu-%")
			}
		})
	}
}

// BenchmarkDriftBurst measures a burst of 1024 IDs (four ticks' worth)
// on the js-safe layout, one Next at a time, from the start of an idle
// tick: without Drift it waits for three more ticks (30 ms); with Drift
// (MaxBorrow 50 ms) it runs ahead. Between bursts, with the timer
// stopped, the clock catches up with the ticks issued, so each burst
// finds the budget unspent, as bursts after a lull do. ids/s counts only
// the bursts. Run both in interleaved rounds (go test's -count would run
// all of one before the other):
//
//	go test -c -o /tmp/snowflake.test ./snowflake/ && for r in 1 2 3 4 5; do
//		/tmp/snowflake.test -test.run '^$' -test.bench DriftBurst -test.benchmem -test.benchtime 40x; done
func BenchmarkDriftBurst(b *testing.B) {
	const size = 1024
	for _, drift := range []bool{false, true} {
		b.Run(fmt.Sprintf("drift=%v", drift), func(b *testing.B) {
			s := Settings{Layout: mustPreset(b, "js-safe"), Fence: &memFence{}}
			if drift {
				s.MaxBorrow, s.Drift = 50*time.Millisecond, true
			}
			g := newGen(b, s)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				// Idle until a tick after every tick issued starts.
				time.Sleep(time.Until(g.LastIssued().Add(10 * time.Millisecond)))
				b.StartTimer()
				for range size {
					if _, err := g.Next(ctx); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.N*size)/b.Elapsed().Seconds(), "ids/s")
		})
	}
}
