package sequence

import (
	"testing"
	"time"
)

func TestPeriodStamp(t *testing.T) {
	shanghai, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Skip(err)
	}
	at := time.Date(2025, 12, 31, 23, 59, 59, 999_000_000, time.UTC)
	tests := []struct {
		p         Period
		loc       *time.Location
		stamp     int64
		start     time.Time
		nextStart time.Time
	}{
		{Second, nil, 20251231235959, time.Date(2025, 12, 31, 23, 59, 59, 0, time.UTC), time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)},
		{Minute, time.UTC, 202512312359, time.Date(2025, 12, 31, 23, 59, 0, 0, time.UTC), time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)},
		{Hour, time.UTC, 2025123123, time.Date(2025, 12, 31, 23, 0, 0, 0, time.UTC), time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)},
		{Day, time.UTC, 20251231, time.Date(2025, 12, 31, 0, 0, 0, 0, time.UTC), time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)},
		{Month, time.UTC, 202512, time.Date(2025, 12, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)},
		// In Shanghai it is already 2026-01-01 07:59:59.
		{Day, shanghai, 20260101, time.Date(2026, 1, 1, 0, 0, 0, 0, shanghai), time.Date(2026, 1, 2, 0, 0, 0, 0, shanghai)},
		{Month, shanghai, 202601, time.Date(2026, 1, 1, 0, 0, 0, 0, shanghai), time.Date(2026, 2, 1, 0, 0, 0, 0, shanghai)},
	}
	for _, tt := range tests {
		t.Run(tt.p.String(), func(t *testing.T) {
			st := tt.p.Stamp(at, tt.loc)
			if st != tt.stamp {
				t.Fatalf("Stamp = %d, want %d", st, tt.stamp)
			}
			if got := tt.p.Start(at, tt.loc); !got.Equal(tt.start) {
				t.Fatalf("Start = %s, want %s", got, tt.start)
			}
			loc := tt.loc
			if loc == nil {
				loc = time.UTC
			}
			if got := tt.p.nextStart(st, loc); !got.Equal(tt.nextStart) {
				t.Fatalf("nextStart = %s, want %s", got, tt.nextStart)
			}
			if p, ok := periodOfStamp(st); !ok || p != tt.p {
				t.Fatalf("periodOfStamp(%d) = %v, %v", st, p, ok)
			}
			if got := tt.p.timeOf(st, loc); !got.Equal(tt.start) {
				t.Fatalf("timeOf = %s, want %s", got, tt.start)
			}
		})
	}
}

func TestParsePeriod(t *testing.T) {
	for p := Second; p <= Month; p++ {
		got, err := ParsePeriod(p.String())
		if err != nil || got != p {
			t.Fatalf("ParsePeriod(%q) = %v, %v", p.String(), got, err)
		}
	}
	for _, bad := range []string{"", "week", "Second", "Period(0)"} {
		if _, err := ParsePeriod(bad); err == nil {
			t.Errorf("ParsePeriod(%q) succeeded", bad)
		}
	}
	if _, ok := periodOfStamp(1234); ok {
		t.Error("a 4-digit stamp has a period")
	}
}

// TestDaylightSaving: in the autumn, the repeated local hour has the same
// stamps; the period after it starts after the repetition.
func TestDaylightSaving(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skip(err)
	}
	first := time.Date(2024, 11, 3, 5, 30, 0, 0, time.UTC)  // 01:30 EDT
	second := time.Date(2024, 11, 3, 6, 30, 0, 0, time.UTC) // 01:30 EST
	if a, b := Hour.Stamp(first, ny), Hour.Stamp(second, ny); a != b || a != 2024110301 {
		t.Fatalf("stamps %d and %d, want 2024110301 twice", a, b)
	}
	if next := Hour.nextStart(2024110301, ny); !next.Equal(time.Date(2024, 11, 3, 7, 0, 0, 0, time.UTC)) {
		t.Fatalf("the hour after 01:xx begins at %s, want 02:00 EST", next.UTC())
	}
}
