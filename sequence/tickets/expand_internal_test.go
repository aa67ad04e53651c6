package tickets

import (
	"errors"
	"testing"

	"github.com/idforge/idforge"
)

func TestAlign(t *testing.T) {
	for _, tc := range []struct{ m, p, n, want int64 }{
		{0, 1, 1, 1}, {0, 1, 3, 1}, {0, 3, 3, 3}, {1, 1, 3, 4}, {5, 2, 3, 8}, {6, 3, 3, 9}, {1000, 2, 2, 1002}, {1000, 1, 2, 1001},
	} {
		if got := align(tc.m, tc.p, tc.n); got != tc.want {
			t.Errorf("align(%d, %d, %d) = %d, want %d", tc.m, tc.p, tc.n, got, tc.want)
		}
	}
}

func TestCheck(t *testing.T) {
	cfg := func(n, p int64) ServerState {
		return ServerState{Server: "s", Configured: true, Servers: n, Position: p, Cluster: "c"}
	}
	none := ServerState{Server: "new"}
	for _, tc := range []struct {
		name string
		sts  []ServerState
		n    int64
		ok   bool
	}{
		{"fresh", []ServerState{none, none}, 2, true},
		{"grow", []ServerState{cfg(2, 1), cfg(2, 2), none}, 3, true},
		{"same", []ServerState{cfg(2, 1), cfg(2, 2)}, 2, true},
		{"interrupted, new one switched", []ServerState{cfg(2, 1), cfg(2, 2), cfg(4, 3), none}, 4, true},
		{"interrupted, old one switched", []ServerState{cfg(3, 1), cfg(2, 2), cfg(3, 3)}, 3, true},
		{"old server missing", []ServerState{cfg(2, 1), none, none}, 3, false},
		{"server replaced", []ServerState{cfg(2, 1), none}, 2, false},
		{"shrink", []ServerState{cfg(2, 1)}, 1, false},
		{"out of order", []ServerState{cfg(2, 2), cfg(2, 1)}, 2, false},
		{"three sizes", []ServerState{cfg(2, 1), cfg(3, 2), cfg(4, 3), none, none}, 5, false},
		{"two sets", []ServerState{cfg(2, 1), {Server: "t", Configured: true, Servers: 2, Position: 2, Cluster: "d"}}, 2, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := check(tc.sts, tc.n)
			if (err == nil) != tc.ok || (err != nil && !errors.Is(err, idforge.ErrInvalidArgument)) {
				t.Fatalf("check: %v, want ok=%v", err, tc.ok)
			}
		})
	}
}
