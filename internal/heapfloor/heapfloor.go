// Package heapfloor keeps the Go collector from running more often than
// a small heap warrants.
//
// With GOGC=100 the runtime collects each time the heap has grown by as
// much as survived the last collection, but at 4 MB at the least. A
// server whose live heap is about 1 MB (idforge's: its metrics registry,
// gRPC and protobuf descriptors) so collects after every 3 MB or so of
// garbage, about once every thousand HTTP requests, and each collection
// marks the whole live heap: on Leaf's segment endpoint that was a fifth
// of the server's instructions per request (bench/peers/cost.sh), where a
// server with an empty heap pays almost nothing. Floor raises GOGC while
// the live heap is small, so that the heap may grow to nearly min bytes
// before a collection rather than 4 MB, and fades back to 100 as the live
// heap grows: the goal is min less twice the live heap, until that is
// below GOGC=100's, at a live heap of min/4. A large heap (a node holding
// thousands of keys) is collected as GOGC=100 would, so the floor adds
// nothing to its memory.
package heapfloor

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// Floor keeps the heap goal at min bytes less twice the live heap, or
// GOGC=100's goal when that is more, from the next collection on, until
// stop is called.
// It leaves the collector alone when the operator set GOGC or GOMEMLIMIT
// (getenv reads the environment). The work is a look at the live heap
// after each collection.
func Floor(min uint64, getenv func(string) string) (stop func()) {
	if getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	t := &tuner{min: min, percent: 100}
	t.arm()
	return func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		t.stopped = true
		debug.SetGCPercent(100)
	}
}

type tuner struct {
	min uint64

	mu      sync.Mutex
	percent int // the GOGC last set
	stopped bool
	sample  [3]metrics.Sample
}

// sentinel is allocated to be collected: its cleanup runs once per
// collection. The pointer keeps it out of the tiny allocator, whose
// blocks are freed together.
type sentinel struct {
	_ *int
	_ [8]byte
}

// arm schedules tune to run after the next collection.
func (t *tuner) arm() {
	runtime.AddCleanup(new(sentinel), func(t *tuner) {
		if t.tune() {
			t.arm()
		}
	}, t)
}

// tune sets GOGC for the live heap the last collection left; false once
// stopped.
func (t *tuner) tune() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return false
	}
	t.sample[0].Name = "/gc/heap/live:bytes"
	t.sample[1].Name = "/gc/scan/stack:bytes"
	t.sample[2].Name = "/gc/scan/globals:bytes"
	metrics.Read(t.sample[:])
	var v [3]uint64
	for i, s := range t.sample {
		if s.Value.Kind() != metrics.KindUint64 {
			return true
		}
		v[i] = s.Value.Uint64()
	}
	p := Percent(v[0], v[0]+v[1]+v[2], t.min)
	// Small moves are not worth the runtime's recomputing its pacing.
	if p != t.percent && (p == 100 || p < t.percent*9/10 || p > t.percent*11/10) {
		debug.SetGCPercent(p)
		t.percent = p
	}
	return true
}

// runtimeMinHeap is the Go runtime's smallest heap goal at GOGC=100. The
// runtime scales it with GOGC, so GOGC = 100·min/runtimeMinHeap alone
// makes min the smallest goal: GOGC is never set higher.
const runtimeMinHeap = 4 << 20

// Percent returns the GOGC that sets the heap goal of a live heap of
// live bytes to min − 2·live bytes, or 100 when that gives a larger
// goal (always from a live heap of min/4 on). The runtime's goal is the
// larger of live + scanned·GOGC/100 (scanned being the live heap and the
// goroutine stacks and globals it scans) and runtimeMinHeap·GOGC/100.
func Percent(live, scanned, min uint64) int {
	if scanned == 0 || 4*live >= min {
		return 100
	}
	p := (min - 3*live) * 100 / scanned
	if ceiling := min * 100 / runtimeMinHeap; p > ceiling {
		p = ceiling
	}
	return int(max(100, p))
}
