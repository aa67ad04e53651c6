package sqlstore

import (
	"testing"
	"time"
)

func TestParseTime(t *testing.T) {
	want := time.Date(2024, 2, 29, 23, 59, 58, 0, time.UTC)
	tests := []struct {
		in   any
		want time.Time
	}{
		{"2024-02-29 23:59:58", want},
		{[]byte("2024-02-29 23:59:58"), want},
		{" 2024-02-29 23:59:58 ", want},
		{"2024-02-29 23:59:58.250", want.Add(250 * time.Millisecond)},
		{"2024-02-29T23:59:58Z", want},
		{"2024-02-29T23:59:58", want},
		{"2024-03-01T01:59:58+02:00", want},
		{"2024-03-01 01:59:58+02", want},
		{"2024-03-01 01:59:58+02:00", want},
		{"2024-02-29", time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC)},
		{want.Unix(), want},
		{"1709251198", want},
		{float64(want.Unix()) + 0.5, want.Add(500 * time.Millisecond)},
		{want.In(time.FixedZone("X", 3600)), want},
		{nil, time.Time{}},
	}
	for _, tt := range tests {
		got, err := parseTime(tt.in)
		if err != nil {
			t.Errorf("parseTime(%#v): %v", tt.in, err)
			continue
		}
		if !got.Equal(tt.want) || got.Location() != time.UTC {
			t.Errorf("parseTime(%#v) = %v, want %v in UTC", tt.in, got, tt.want)
		}
	}
	for _, bad := range []any{"yesterday", "", true} {
		if got, err := parseTime(bad); err == nil {
			t.Errorf("parseTime(%#v) = %v, want an error", bad, got)
		}
	}
}
