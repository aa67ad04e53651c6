package e2e

import (
	"strings"
	"testing"
	"time"
)

func TestHistoryCheck(t *testing.T) {
	at := func(ms int) time.Time { return time.Unix(0, 0).Add(time.Duration(ms) * time.Millisecond) }
	for _, tc := range []struct {
		name string
		ops  []Op
		want string // "" when the history is linearizable
	}{
		{"sequential", []Op{{at(0), at(1), []int64{1, 2}}, {at(2), at(3), []int64{3}}}, ""},
		// Overlapping requests may interleave either way.
		{"concurrent", []Op{{at(0), at(5), []int64{9}}, {at(1), at(4), []int64{3}}}, ""},
		{"behind one that ended", []Op{{at(0), at(1), []int64{5}}, {at(2), at(3), []int64{4, 6}}}, "returned 4"},
		{"behind an earlier one", []Op{{at(0), at(1), []int64{7}}, {at(2), at(3), []int64{8}}, {at(4), at(5), []int64{6}}}, "returned 6"},
		{"twice", []Op{{at(0), at(1), []int64{1}}, {at(0), at(1), []int64{1}}}, "more than once"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var h History
			for _, op := range tc.ops {
				h.Add(op.Began, op.Ended, op.IDs)
			}
			err := h.Check()
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("Check() = %v, want %q", err, tc.want)
			}
		})
	}
}
