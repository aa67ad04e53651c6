package verify

import (
	"math/rand/v2"
	"runtime"
	"testing"
)

func TestSets(t *testing.T) {
	for name, newSet := range map[string]func() IDSet{"hash": NewHashSet, "range": NewRangeSet} {
		t.Run(name, func(t *testing.T) {
			s := newSet()
			ref := map[uint64]bool{}
			r := rand.New(rand.NewPCG(1, 2))
			for i := range 200_000 {
				var v uint64
				switch i % 3 {
				case 0:
					v = uint64(i) // dense
				case 1:
					v = r.Uint64() // spread
				default:
					v = uint64(r.IntN(1000)) // repeats, 0 included
				}
				if got, want := s.Add(v), !ref[v]; got != want {
					t.Fatalf("Add(%d) = %v, want %v", v, got, want)
				}
				ref[v] = true
			}
			if s.Len() != int64(len(ref)) {
				t.Fatalf("Len = %d, want %d", s.Len(), len(ref))
			}
			if s.Bytes() <= 0 {
				t.Fatal("Bytes not counted")
			}
		})
	}
}

// A dense run of segment IDs costs about a bit each.
func TestRangeSetDense(t *testing.T) {
	s := NewRangeSet()
	const n = 1 << 20
	for i := range uint64(n) {
		s.Add(1_000_000 + i)
	}
	if b := s.Bytes(); b > n/8*2 {
		t.Fatalf("%d dense IDs take %d bytes", n, b)
	}
}

// BenchmarkSet100M inserts 100 million synthetic IDs into each kind of set
// and reports the heap they hold (heap-bytes, and bytes/id) and the most
// heap the process held while they grew (heap-sys-bytes). It takes
// minutes and about 2 GiB, so it runs only when asked for; GOMEMLIMIT as
// `idforge verify` sets it:
//
//	GOMEMLIMIT=2GiB go test -run '^$' -bench Set100M -benchtime 1x ./verify/
func BenchmarkSet100M(b *testing.B) {
	const n = 100_000_000
	for _, c := range []struct {
		name string
		new  func() IDSet
		gen  func(i uint64) uint64
	}{
		// Snowflake IDs: 3 workers, 4096 a millisecond.
		{"snowflake-hash", NewHashSet, func(i uint64) uint64 { return (i/4096)<<22 | (i%3)<<12 | i%4096 }},
		// Serials: hashes, spread over all 64 bits.
		{"serial-hash", NewHashSet, func(i uint64) uint64 { return mix(i + 1) }},
		// Segment IDs: three nodes, segments of 1000, every tenth ID lost
		// (a node restarted, a cache dropped).
		{"segment-range", NewRangeSet, func(i uint64) uint64 { return 1 + i + i/9 }},
	} {
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				runtime.GC()
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				s := c.new()
				for i := range uint64(n) {
					s.Add(c.gen(i))
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				heap := float64(after.HeapAlloc) - float64(before.HeapAlloc)
				b.ReportMetric(heap, "heap-bytes")
				b.ReportMetric(heap/n, "bytes/id")
				b.ReportMetric(float64(s.Bytes())/n, "counted-bytes/id")
				// HeapSys only grows while the set does: the peak the
				// heap reached, garbage of grown tables included.
				b.ReportMetric(float64(after.HeapSys), "heap-sys-bytes")
				runtime.KeepAlive(s)
			}
		})
	}
}

// BenchmarkSetAdd adds snowflake-like IDs to a fresh set, one million per
// round, against a Go map of the same IDs as the floor:
//
//	go test -run '^$' -bench SetAdd -count 5 ./verify/
func BenchmarkSetAdd(b *testing.B) {
	const n = 1 << 20
	id := func(i uint64) uint64 { return (i/4096)<<22 | (i%3)<<12 | i%4096 }
	b.Run("map-floor", func(b *testing.B) {
		for range b.N {
			m := map[uint64]struct{}{}
			for i := range uint64(n) {
				m[id(i)] = struct{}{}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/id")
	})
	for name, newSet := range map[string]func() IDSet{"hash": NewHashSet, "range": NewRangeSet} {
		b.Run(name, func(b *testing.B) {
			for range b.N {
				s := newSet()
				for i := range uint64(n) {
					s.Add(id(i))
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/id")
		})
	}
}
