package snowflake

import (
	"context"
	"testing"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/fakeclock"
)

// driftGen is a js-safe generator (256 IDs per 10 ms tick) on a fake
// clock stopped at a tick's start, drifting within 50 ms, with fence.
func driftGen(t *testing.T, clk *fakeclock.Clock, fence Fence, drift bool) *Generator {
	t.Helper()
	s := Settings{Layout: mustPreset(t, "js-safe"), Worker: 1, Clock: clk, Fence: fence}
	if drift {
		s.MaxBorrow, s.Drift = 50*time.Millisecond, true
	}
	return newGen(t, s)
}

// burst issues n IDs one by one and fails unless they strictly increase
// after prev; it returns the last.
func burst(t *testing.T, g *Generator, n int, prev int64) int64 {
	t.Helper()
	for i := range n {
		id := mustNext(t, g)
		if id <= prev {
			t.Fatalf("ID %d of the burst: %d not above %d", i, id, prev)
		}
		prev = id
	}
	return prev
}

// A burst that uses a tick up goes on in the next ticks, ahead of the
// clock, without waiting, until they would start more than MaxBorrow
// ahead; then it waits only until the clock leaves room for one more
// tick. Without Drift the same burst waits a tick every 256 IDs.
func TestDriftBurst(t *testing.T) {
	at := time.Date(2025, 4, 13, 12, 0, 0, 0, time.UTC)
	l := mustPreset(t, "js-safe")

	clk := fakeclock.New(at)
	fence := &memFence{}
	g := driftGen(t, clk, fence, true)
	// The clock's tick and the five after it, each within 50 ms.
	last := burst(t, g, 6*256, 0)
	if slept, _ := clk.Slept(); slept != 0 {
		t.Fatalf("the burst within the budget slept %v", slept)
	}
	if p := mustExplain(t, l, last); !p.Time.Equal(at.Add(50 * time.Millisecond)) {
		t.Fatalf("the last ID of the budget is at %s, want 50 ms ahead of %s", p.Time, at)
	}
	if ft, _ := fence.get(); !ft.After(at.Add(60 * time.Millisecond)) {
		t.Fatalf("fence %s does not cover the ticks issued ahead", ft)
	}
	// One more: the tick at +60 ms is past the budget until the clock
	// moves 10 ms.
	last = burst(t, g, 1, last)
	if slept, _ := clk.Slept(); slept != 10*time.Millisecond {
		t.Fatalf("past the budget the burst slept %v, want 10ms", slept)
	}
	if p := mustExplain(t, l, last); !p.Time.Equal(at.Add(60 * time.Millisecond)) {
		t.Fatalf("ID past the budget at %s", p.Time)
	}
	if waits, refusals := g.ClockBackwards(); waits != 0 || refusals != 0 {
		t.Fatalf("a burst counted as the clock moving back: %d waits, %d refusals", waits, refusals)
	}

	// A crash now (no Close), and a restart on the same clock: the new
	// generator issues only after every tick the old one issued ahead.
	g2 := driftGen(t, clk, fence, true)
	if first := mustNext(t, g2); first <= last {
		t.Fatalf("after a restart %d, not above %d issued ahead before", first, last)
	}

	// Without Drift the same burst waits for five ticks.
	plain := fakeclock.New(at)
	burst(t, driftGen(t, plain, &memFence{}, false), 6*256, 0)
	if slept, _ := plain.Slept(); slept < 50*time.Millisecond {
		t.Fatalf("without Drift the burst slept %v, want at least 50ms", slept)
	}
}

// Drift spends the budget MaxBorrow gives a step back: ahead by a burst,
// a step back that would take the generator past the budget is refused
// as before, and a batch (NextN) drifts like single calls.
func TestDriftSharesTheBudget(t *testing.T) {
	at := time.Date(2025, 4, 13, 12, 0, 0, 0, time.UTC)
	clk := fakeclock.New(at)
	g := driftGen(t, clk, nil, true)
	ids, err := g.NextN(context.Background(), 4*256)
	if err != nil || len(ids) != 4*256 {
		t.Fatalf("NextN: %d, %v", len(ids), err)
	}
	for i := 1; i < len(ids); i++ {
		if ids[i] <= ids[i-1] {
			t.Fatalf("NextN: %d after %d", ids[i], ids[i-1])
		}
	}
	if slept, _ := clk.Slept(); slept != 0 {
		t.Fatalf("NextN within the budget slept %v", slept)
	}
	// 30 ms ahead by the burst; 30 ms back makes 60 > 50.
	clk.Add(-30 * time.Millisecond)
	_, err = g.Next(context.Background())
	wantErr(t, err, idforge.ErrClockMovedBackwards)
	clk.Add(30 * time.Millisecond)
	if id := mustNext(t, g); id <= ids[len(ids)-1] {
		t.Fatalf("after the clock came back: %d", id)
	}

	_, err = New(Settings{Layout: mustPreset(t, "js-safe"), Drift: true, Logger: discard})
	wantErr(t, err, idforge.ErrInvalidArgument, "MaxBorrow")
}
