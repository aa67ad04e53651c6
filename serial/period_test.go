package serial

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/idforge/idforge"
)

// reportingCounter is a counter that says which calendar periods it
// counts in, as sequence.Counter does.
type reportingCounter struct {
	*counter
	period string
}

func (r reportingCounter) CountsPer() (string, *time.Location) { return r.period, r.loc }

// A per-period count restarts every period, so a template must show the
// period, in the counter's time zone, or it issues the same serial again.
func TestPeriodMustBeShown(t *testing.T) {
	shanghai, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Skip("no time zone data:", err)
	}
	counters := map[string]idforge.PeriodCounter{
		"daily":     reportingCounter{newCounter(24*time.Hour, time.UTC), "day"},
		"daily_sh":  reportingCounter{newCounter(24*time.Hour, shanghai), "day"},
		"monthly":   reportingCounter{newCounter(24*time.Hour, time.UTC), "month"},
		"persec":    reportingCounter{newCounter(time.Second, time.UTC), "second"},
		"unlabeled": silentCounter{newCounter(24*time.Hour, time.UTC)}, // says nothing: cannot be proven
	}
	r := ResolverFunc(func(_ context.Context, name string) (Source, error) {
		if c, ok := counters[name]; ok {
			return Source{Counter: c}, nil
		}
		return Source{}, errors.New("no such generator")
	})
	for _, tc := range []struct {
		text string
		loc  *time.Location
		bad  string // part of the error, "" when the template is fine
	}{
		{"@{date:yyyyMMdd}@{seq:daily,width=5}", nil, ""},
		{"@{date:yyMMdd}-@{seq:daily}", nil, ""},
		{"@{date:yyyyDDD}-@{seq:daily}", nil, ""},
		{"@{date:yyyy}/@{date:MM}/@{date:dd}-@{seq:daily}", nil, ""},
		{"QJ@{seq:daily,width=6}", nil, "counts per day"},
		{"@{date:yyyyMM}@{seq:daily}", nil, "shows the day"},
		{"@{date:MMdd}@{seq:daily}", nil, "shows the day"},
		{"@{date:yyyyMM}@{seq:monthly}", nil, ""},
		{"@{date:yyyy}@{seq:monthly}", nil, "month"},
		// The shown day must be the counter's day: a UTC count under a
		// Shanghai date restarts at 08:00 in the middle of it.
		{"@{date:yyyyMMdd}@{seq:daily}", shanghai, "in UTC"},
		{"@{date:yyyyMMdd,tz=UTC}@{seq:daily}", shanghai, ""},
		{"@{date:yyyyMMdd}@{seq:daily_sh}", shanghai, ""},
		{"@{date:yyyyMMdd}@{seq:daily_sh}", nil, "tz=Asia/Shanghai"},
		// Seconds line up in every zone.
		{"@{date:yyMMddHHmmss}@{seq:persec}", shanghai, ""},
		{"@{date:yyMMddHHmm}@{seq:persec}", nil, "second"},
		{"@{date:yyMMddhhmmss}@{seq:persec}", nil, "second"},
		// A counter that does not say its period proves nothing, whatever
		// the dates show.
		{"X@{seq:unlabeled}", nil, "does not say which"},
		{"@{date:yyyyMMddHHmmss}@{seq:unlabeled}", nil, "does not say which"},
	} {
		_, err := Parse(context.Background(), tc.text, Options{Resolver: r, Location: tc.loc})
		switch {
		case tc.bad == "" && err != nil:
			t.Errorf("%s: %v", tc.text, err)
		case tc.bad != "" && (err == nil || !strings.Contains(err.Error(), tc.bad)):
			t.Errorf("%s (in %v): error %v, want one saying %q", tc.text, tc.loc, err, tc.bad)
		}
	}
}
