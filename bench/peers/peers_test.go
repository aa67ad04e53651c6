package peers

import (
	"context"
	"io"
	"log/slog"
	"syscall"
	"testing"
	"time"

	bwsnowflake "github.com/bwmarrin/snowflake"
	"github.com/sony/sonyflake"

	"github.com/idforge/idforge/snowflake"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// measure issues b.N IDs with next and reports the rate achieved, the
// share of the layout's cap it reached, and the CPU it burnt doing so.
func measure(b *testing.B, capPerSec float64, next func() error) {
	b.Helper()
	cpu0 := processCPU()
	start := time.Now()
	for b.Loop() {
		if err := next(); err != nil {
			b.Fatal(err)
		}
	}
	elapsed := time.Since(start)
	cpu := processCPU() - cpu0
	rate := float64(b.N) / elapsed.Seconds()
	b.ReportMetric(rate, "ids/s")
	b.ReportMetric(100*rate/capPerSec, "cap-%")
	b.ReportMetric(100*cpu.Seconds()/elapsed.Seconds(), "cpu-%")
}

// processCPU returns the CPU time (user + system) the process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Twitter's layout (41 bits of ms, 10 of worker, 12 of sequence): 4,096,000
// IDs/s per worker at most.
func BenchmarkTwitterLayout(b *testing.B) {
	ctx := context.Background()
	b.Run("idforge", func(b *testing.B) {
		g, err := snowflake.New(snowflake.Settings{Worker: 1, Logger: quiet})
		if err != nil {
			b.Fatal(err)
		}
		defer g.Close()
		measure(b, 4_096_000, func() error { _, err := g.Next(ctx); return err })
	})
	b.Run("bwmarrin", func(b *testing.B) {
		n, err := bwsnowflake.NewNode(1)
		if err != nil {
			b.Fatal(err)
		}
		measure(b, 4_096_000, func() error { n.Generate(); return nil })
	})
}

// Sonyflake's layout (39 bits of 10 ms, 8 of sequence, 16 of machine):
// 25,600 IDs/s per machine at most.
func BenchmarkSonyflakeLayout(b *testing.B) {
	ctx := context.Background()
	b.Run("idforge", func(b *testing.B) {
		l, _ := snowflake.Preset("sonyflake")
		g, err := snowflake.New(snowflake.Settings{Layout: l, Worker: 1, Logger: quiet})
		if err != nil {
			b.Fatal(err)
		}
		defer g.Close()
		measure(b, 25_600, func() error { _, err := g.Next(ctx); return err })
	})
	b.Run("sony", func(b *testing.B) {
		sf := sonyflake.NewSonyflake(sonyflake.Settings{MachineID: func() (uint16, error) { return 1, nil }})
		if sf == nil {
			b.Fatal("sonyflake.NewSonyflake failed")
		}
		measure(b, 25_600, func() error { _, err := sf.NextID(); return err })
	})
}
