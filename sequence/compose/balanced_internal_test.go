package compose

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/idforge/idforge"
)

type one struct{}

func (one) Next(context.Context) (int64, error) { return 1, nil }

// The slow-call window slides: SlowCount slow calls eject a source only
// when they fall within SlowWindow of each other. Times are synthetic
// (nanoseconds on the Balanced's clock), so the test does not depend on
// the scheduler.
func TestSlowWindow(t *testing.T) {
	const ms = int64(time.Millisecond)
	tests := []struct {
		name  string
		count int
		at    []int64 // completion times of slow calls, ms
		eject int     // index into at of the call that ejects; -1 for none
	}{
		{"three close together", 3, []int64{0, 10, 20}, 2},
		{"spread out", 3, []int64{0, 600, 1200, 1800, 2400}, -1},
		{"window slides", 3, []int64{0, 600, 1200, 1300}, 3},
		{"exactly the window", 3, []int64{0, 500, 1000}, 2},
		{"one is enough", 1, []int64{5000}, 0},
		{"count restarts after an ejection", 2, []int64{0, 10}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := NewBalanced([]idforge.Generator{one{}, one{}}, BalancedOptions{
				SlowCount: tt.count, SlowWindow: time.Second, RescueAfter: time.Hour,
				Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
			})
			if err != nil {
				t.Fatal(err)
			}
			m := b.members[1]
			for k, at := range tt.at {
				b.noteSlow(1, at*ms, 250*time.Millisecond)
				ejected := m.state.Load() != stateAdmitted
				if want := tt.eject >= 0 && k >= tt.eject; ejected != want {
					t.Fatalf("after slow call %d (at %d ms): ejected %v, want %v", k, at, ejected, want)
				}
			}
			if got := m.slow.Load(); got != uint64(len(tt.at)) {
				t.Errorf("%d slow calls counted, want %d", got, len(tt.at))
			}
			if b.members[0].state.Load() != stateAdmitted {
				t.Error("the other source was ejected")
			}
		})
	}
}
