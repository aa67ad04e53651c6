package snowflake

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/fakeclock"
)

// issueSome issues n IDs and returns the largest.
func issueSome(tb testing.TB, g *Generator, n int) int64 {
	tb.Helper()
	ids, err := g.NextN(context.Background(), n)
	if err != nil {
		tb.Fatalf("NextN: %v", err)
	}
	return ids[len(ids)-1]
}

// settle waits until the fence's background writes are done, without
// closing the generator (a crash does not close it).
func settle(g *Generator) { g.wg.Wait() }

func TestFenceRestart(t *testing.T) {
	l := mustPreset(t, "twitter")
	// After issuing, the first generator either closes or "crashes" (is
	// dropped); then idle time passes and the clock is set back by back
	// before a second generator starts on the same fence. A crash leaves
	// the fence up to FenceAhead (2 s) ahead of the clock; New waits when
	// the fence is at most FenceAhead + MaxBackwardWait ahead.
	tests := []struct {
		name  string
		close bool
		idle  time.Duration
		back  time.Duration
		want  error // from New
		slept bool  // whether New must wait
	}{
		{"crash, clock unchanged", false, 0, 0, nil, true},
		{"crash, clock set back 1s after 1.5s", false, 1500 * time.Millisecond, time.Second, nil, true},
		{"crash, clock past the fence", false, 3 * time.Second, 0, nil, false},
		{"crash, clock set back 10 minutes", false, 0, 10 * time.Minute, idforge.ErrClockMovedBackwards, false},
		{"crash, clock set back 1s at once", false, 0, time.Second, idforge.ErrClockMovedBackwards, false},
		{"clean close, clock unchanged", true, 0, 0, nil, false},
		{"clean close, clock set back 1s", true, 0, time.Second, nil, true},
		{"clean close, clock set back 10 minutes", true, 0, 10 * time.Minute, idforge.ErrClockMovedBackwards, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fence := &memFence{}
			clk := fakeclock.New(start)
			g1, err := New(Settings{Layout: l, Worker: 1, Clock: clk, Fence: fence, Logger: discard})
			if err != nil {
				t.Fatal(err)
			}
			old := issueSome(t, g1, 1000) // within one tick: the clock stays mid-tick
			settle(g1)
			if tc.close {
				if err := g1.Close(); err != nil {
					t.Fatal(err)
				}
			}
			recorded, _ := fence.get()
			lastTick := mustExplain(t, l, old).Time
			if tc.close && !recorded.Equal(lastTick) {
				t.Errorf("Close recorded %s, want the newest tick's start %s", recorded, lastTick)
			}
			if !tc.close && recorded.Before(lastTick.Add(l.Unit)) {
				t.Errorf("fence %s does not cover the newest tick %s", recorded, lastTick)
			}

			clk.Add(tc.idle - tc.back)
			sleptBefore, _ := clk.Slept()
			g2, err := New(Settings{Layout: l, Worker: 1, Clock: clk, Fence: fence, Logger: discard})
			if tc.want != nil {
				wantErr(t, err, tc.want, "behind the time fence", "refusing to start before "+recorded.Format(time.RFC3339Nano))
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer g2.Close()
			slept, _ := clk.Slept()
			if got := slept > sleptBefore; got != tc.slept {
				t.Errorf("New slept %v, want a wait: %v", slept-sleptBefore, tc.slept)
			}
			if !clk.Now().After(recorded) {
				t.Errorf("New returned at %s, not past the fence %s", clk.Now(), recorded)
			}
			for i := 0; i < 5000; i++ {
				id := mustNext(t, g2)
				if id <= old {
					t.Fatalf("after the restart ID %d (%+v) is not above the old %d (%+v)", id, mustExplain(t, l, id), old, mustExplain(t, l, old))
				}
				if p := mustExplain(t, l, id); !p.Time.After(recorded) {
					t.Fatalf("ID %d in tick %s, not after the fence %s", id, p.Time, recorded)
				}
			}
		})
	}
}

// TestFenceSameTick restarts cleanly while the clock is still in the
// newest issued tick: New does not wait, but no ID reuses that tick.
func TestFenceSameTick(t *testing.T) {
	l := mustPreset(t, "vesta-max-peak") // 1 s ticks
	fence := &memFence{}
	clk := fakeclock.New(start)
	g1 := newGen(t, Settings{Layout: l, Clock: clk, Fence: fence})
	old := issueSome(t, g1, 100)
	if err := g1.Close(); err != nil {
		t.Fatal(err)
	}
	g2 := newGen(t, Settings{Layout: l, Clock: clk, Fence: fence})
	if slept, _ := clk.Slept(); slept != 0 {
		t.Fatalf("New slept %v", slept)
	}
	id := mustNext(t, g2)
	if p, q := mustExplain(t, l, id), mustExplain(t, l, old); p.Ticks != q.Ticks+1 || id <= old {
		t.Errorf("first ID after the restart in tick %d, want %d", p.Ticks, q.Ticks+1)
	}
}

// TestFenceRunning lets time pass in steps and checks that the recorded
// fence always covers every issued tick, while Store runs about once per
// FenceAhead/2, not once per tick.
func TestFenceRunning(t *testing.T) {
	l := mustPreset(t, "twitter")
	fence := &memFence{}
	clk := fakeclock.New(start)
	g := newGen(t, Settings{Layout: l, Clock: clk, Fence: fence, FenceAhead: time.Second})
	const steps, step = 1000, 10 * time.Millisecond // 10 s
	for i := 0; i < steps; i++ {
		id := mustNext(t, g)
		p := mustExplain(t, l, id)
		recorded, _ := fence.get()
		if end := p.Time.Add(l.Unit); recorded.Before(end) {
			t.Fatalf("step %d: issued tick ending %s beyond the fence %s", i, end, recorded)
		}
		clk.Add(step)
	}
	settle(g)
	if _, stores := fence.get(); stores < 10 || stores > 40 {
		t.Errorf("%d Stores over 10 s with FenceAhead 1s; want about 20", stores)
	}
}

func TestFenceStoreFails(t *testing.T) {
	l := mustPreset(t, "twitter")

	t.Run("first Next", func(t *testing.T) {
		fence := &memFence{storeErr: errDisk}
		g := newGen(t, Settings{Layout: l, Clock: fakeclock.New(start), Fence: fence})
		_, err := g.Next(context.Background())
		wantErr(t, err, errDisk, "storing the time fence")
		_, err = g.NextN(context.Background(), 3)
		wantErr(t, err, errDisk)
	})

	t.Run("later, past the stored mark", func(t *testing.T) {
		fence := &memFence{}
		clk := fakeclock.New(start)
		g := newGen(t, Settings{Layout: l, Clock: clk, Fence: fence})
		mustNext(t, g)
		settle(g)
		recorded, _ := fence.get()
		fence.failWith(errDisk)
		var err error
		var last int64
		for i := 0; i < 1000 && err == nil; i++ {
			clk.Add(10 * time.Millisecond)
			last, err = g.Next(context.Background())
			if err == nil {
				if p := mustExplain(t, l, last); p.Time.Add(l.Unit).After(recorded) {
					t.Fatalf("issued tick %s past the stored fence %s", p.Time, recorded)
				}
			}
		}
		wantErr(t, err, errDisk)
		if err := g.Close(); !errors.Is(err, errDisk) {
			t.Errorf("Close = %v, want the store error", err)
		}
	})
}

func TestFenceCloseWithoutIssuing(t *testing.T) {
	fence := &memFence{}
	g := newGen(t, Settings{Clock: fakeclock.New(start), Fence: fence})
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if _, stores := fence.get(); stores != 0 {
		t.Errorf("%d Stores by a generator that issued nothing", stores)
	}
}
