package heapfloor

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestPercent(t *testing.T) {
	const mb = 1 << 20
	for _, c := range []struct {
		live, scanned, min uint64
		want               int
	}{
		{1 * mb, 1 * mb, 32 * mb, 800},  // the runtime's 4 MB minimum, scaled, is the goal
		{3 * mb, 3 * mb, 32 * mb, 766},  // goal = 32 MB − 2·3 MB = 3 MB + 3 MB·7.66
		{4 * mb, 6 * mb, 32 * mb, 333},  // stacks and globals count towards the goal too
		{6 * mb, 6 * mb, 32 * mb, 233},  // goal = 20 MB
		{7 * mb, 14 * mb, 32 * mb, 100}, // never below GOGC=100
		{8 * mb, 8 * mb, 32 * mb, 100},  // from min/4 on, GOGC=100's goal is larger
		{100 * mb, 100 * mb, 32 * mb, 100},
		{0, 0, 32 * mb, 100},
		{1, 1, 32 * mb, 800},
	} {
		if got := Percent(c.live, c.scanned, c.min); got != c.want {
			t.Errorf("Percent(%d, %d, %d) = %d, want %d", c.live, c.scanned, c.min, got, c.want)
		}
	}
}

// gcPercent reads GOGC without changing it.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// After a collection the floor has raised GOGC for this test's small
// heap; stopped, it is 100 again; with GOGC set by the operator it is left
// alone.
func TestFloor(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	env := func(string) string { return "" }
	stop := Floor(1<<30, env)
	deadline := time.Now().Add(30 * time.Second)
	for gcPercent() == 100 {
		if time.Now().After(deadline) {
			stop()
			t.Fatal("GOGC still 100 after collections with a 1 GiB floor")
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	stop()
	if p := gcPercent(); p != 100 {
		t.Fatalf("GOGC after stop = %d, want 100", p)
	}
	stop = Floor(1<<30, func(k string) string {
		if k == "GOGC" {
			return "200"
		}
		return ""
	})
	defer stop()
	runtime.GC()
	runtime.GC()
	if p := gcPercent(); p != 100 {
		t.Fatalf("GOGC with the operator's GOGC set = %d, want it left alone (100 here)", p)
	}
}
