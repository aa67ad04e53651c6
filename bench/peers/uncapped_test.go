package peers

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	bwsnowflake "github.com/bwmarrin/snowflake"
	sonyflakev2 "github.com/sony/sonyflake/v2"
	"github.com/yitter/idgenerator-go/idgen"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/cacheline"
)

// The uncapped benchmarks give every generator 22 bits of sequence per
// millisecond (yitter allows at most 21 plus one worker bit), far more
// than a goroutine can use, so that no call waits for the clock and
// ns/op is the cost of one call. floor is a bare atomic add measured in
// the same run: the ratios in BENCHMARKS.md are to it and to bwmarrin.
// floor-iface is the same add reached as the generators are, through
// idforge.Generator's Next: what the call itself costs beside the add.
// segment is idforge's segment allocator (segment.Allocator.Next) on a
// segment long enough never to need a claim: what it is set beside is
// the floor, the atomic add its fast path is built around.
//
// Run the whole set several times, one after the other, so that each
// round measures every generator under the same load:
//
//	for i in 1 2 3 4 5; do go test -run '^$' -bench 'Uncapped' -benchtime 1s -count 1; done

type uncapped struct {
	name string
	// make returns a function issuing one ID; it is called once per
	// sub-benchmark (and once per goroutine for the parallel form).
	make func(b *testing.B) func() int64
}

func uncappedGenerators() []uncapped {
	epoch := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	return []uncapped{
		{"floor", func(b *testing.B) func() int64 {
			var n atomic.Int64
			return func() int64 { return n.Add(1) }
		}},
		{"floor-iface", func(b *testing.B) func() int64 { return mustNext(new(counter)) }},
		{"idforge", func(b *testing.B) func() int64 { return mustNext(newSnowflake(b)) }},
		{"segment", func(b *testing.B) func() int64 { return mustNext(newSegment(b)) }},
		{"bwmarrin", func(b *testing.B) func() int64 {
			// bwmarrin/snowflake keeps its layout in package variables,
			// read by NewNode only.
			nodeBits, stepBits := bwsnowflake.NodeBits, bwsnowflake.StepBits
			bwsnowflake.NodeBits, bwsnowflake.StepBits = 0, 22
			n, err := bwsnowflake.NewNode(0)
			bwsnowflake.NodeBits, bwsnowflake.StepBits = nodeBits, stepBits
			if err != nil {
				b.Fatal(err)
			}
			return func() int64 { return int64(n.Generate()) }
		}},
		{"sonyflake-v2", func(b *testing.B) func() int64 {
			sf, err := sonyflakev2.New(sonyflakev2.Settings{
				BitsSequence: 22, BitsMachineID: 1, TimeUnit: time.Millisecond, StartTime: epoch,
				MachineID: func() (int, error) { return 1, nil },
			})
			if err != nil {
				b.Fatal(err)
			}
			return func() int64 {
				id, err := sf.NextID()
				if err != nil {
					panic(err)
				}
				return id
			}
		}},
		{"yitter", func(b *testing.B) func() int64 {
			opts := idgen.NewIdGeneratorOptions(1)
			opts.WorkerIdBitLength, opts.SeqBitLength = 1, 21
			opts.BaseTime = epoch.UnixMilli()
			g := idgen.NewDefaultIdGenerator(opts)
			return g.NewLong
		}},
	}
}

var sink int64

// counter is the floor behind idforge.Generator: an atomic add on its own
// cache line, reached through the interface call every generator here
// is reached through.
type counter struct {
	_ [cacheline.Size]byte
	n atomic.Int64
	_ [cacheline.Size - 8]byte
}

func (c *counter) Next(context.Context) (int64, error) { return c.n.Add(1), nil }

// mustNext returns a function calling g.Next, which never fails in these
// benchmarks.
func mustNext(g idforge.Generator) func() int64 {
	ctx := context.Background()
	return func() int64 {
		id, err := g.Next(ctx)
		if err != nil {
			panic(err)
		}
		return id
	}
}

// cpuPerOp reports the process's CPU time (user + system) per call while
// run ran: on a loaded machine it moves less than wall time, which also
// counts the time the benchmark's goroutines waited for a core.
func cpuPerOp(b *testing.B, run func()) {
	cpu0 := processCPU()
	run()
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
}

// BenchmarkUncapped: one goroutine calling Next.
func BenchmarkUncapped(b *testing.B) {
	for _, u := range uncappedGenerators() {
		b.Run(u.name, func(b *testing.B) {
			next := u.make(b)
			var s int64
			cpuPerOp(b, func() {
				for b.Loop() {
					s += next()
				}
			})
			sink = s
		})
	}
}

// BenchmarkUncappedParallel: GOMAXPROCS goroutines (both cores here)
// calling Next on one generator.
func BenchmarkUncappedParallel(b *testing.B) {
	for _, u := range uncappedGenerators() {
		b.Run(u.name, func(b *testing.B) {
			next := u.make(b)
			b.ResetTimer()
			cpuPerOp(b, func() {
				b.RunParallel(func(pb *testing.PB) {
					var s int64
					for pb.Next() {
						s += next()
					}
					atomic.AddInt64(&sink, s)
				})
			})
		})
	}
}
