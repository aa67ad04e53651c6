package coord

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/idforge/idforge"
)

func TestCheckClock(t *testing.T) {
	now := time.UnixMilli(1_800_000_000_000)
	ms := func(d time.Duration) int64 { return now.Add(d).UnixMilli() }
	for _, tt := range []struct {
		name  string
		peers []Report
		slack time.Duration
		want  string // "" when the node may start
	}{
		{"no peers", nil, 0, ""},
		{"within", []Report{{At: ms(-4 * time.Second)}}, 0, ""},
		{"age counts", []Report{{At: ms(-time.Minute), Age: time.Minute.Milliseconds()}}, 0, ""},
		{"ahead", []Report{{At: ms(-6 * time.Second)}}, 0, "6s ahead of the average clock of 1 live peers"},
		{"behind", []Report{{At: ms(6 * time.Second)}}, 0, "6s behind"},
		{"average", []Report{{At: ms(-20 * time.Second)}, {At: ms(20 * time.Second)}}, 0, ""},
		{"slack ahead", []Report{{At: ms(-14 * time.Second)}}, 10 * time.Second, ""},
		{"beyond slack", []Report{{At: ms(-16 * time.Second)}}, 10 * time.Second, "16s ahead of the average clock of 1 live peers under /x, more than max_drift 5s plus the 10s"},
		{"slack not behind", []Report{{At: ms(6 * time.Second)}}, 10 * time.Second, "6s behind"},
	} {
		err := CheckClock(now, tt.peers, 5*time.Second, tt.slack, "/x")
		if tt.want == "" && err != nil || tt.want != "" && (!errors.Is(err, idforge.ErrClockMovedBackwards) || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
}
