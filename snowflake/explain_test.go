package snowflake

import (
	"math"
	"math/rand"
	"testing"
	"testing/quick"
	"time"

	"github.com/idforge/idforge"
)

func TestExplainKnownIDs(t *testing.T) {
	sonyEpoch := time.Date(2014, 9, 1, 0, 0, 0, 0, time.UTC)
	sonyTime := time.Date(2024, 3, 15, 10, 20, 30, 120e6, time.UTC)
	sonyTicks := int64(sonyTime.Sub(sonyEpoch) / (10 * time.Millisecond))
	tests := []struct {
		name   string
		layout string
		id     int64
		want   Parts
	}{
		{
			// A tweet ID: 2022-06-28 16:07:40.105 UTC, datacenter 11,
			// worker 26. (1541815603606036480 >> 22) + 1288834974657 =
			// 1656432460105 ms.
			name: "twitter", layout: "twitter", id: 1541815603606036480,
			want: Parts{Time: time.Date(2022, 6, 28, 16, 7, 40, 105e6, time.UTC), Ticks: 1656432460105 - 1288834974657, Datacenter: 11, Worker: 26},
		},
		{
			// Sonyflake packs time<<24 | sequence<<16 | machine.
			name: "sonyflake", layout: "sonyflake", id: sonyTicks<<24 | 7<<16 | 0x1234,
			want: Parts{Time: sonyTime, Ticks: sonyTicks, Sequence: 7, Worker: 0x1234},
		},
		{
			// Vesta max-peak, version 0 type 0 method 0: time<<30 | seq<<10 | machine.
			name: "vesta-max-peak", layout: "vesta-max-peak", id: 100<<30 | 5<<10 | 1023,
			want: Parts{Time: time.UnixMilli(1420041600000 + 100_000).UTC(), Ticks: 100, Sequence: 5, Worker: 1023,
				Fixed: map[string]int64{"version": 0, "type": 0, "method": 0}},
		},
		{
			// Vesta min-granularity: type bit 62 set, time<<20 | seq<<10 | machine.
			name: "vesta-min-granularity", layout: "vesta-min-granularity", id: 1<<62 | 12345<<20 | 1<<10 | 2,
			want: Parts{Time: time.UnixMilli(1420041600000 + 12345).UTC(), Ticks: 12345, Sequence: 1, Worker: 2,
				Fixed: map[string]int64{"version": 0, "type": 1, "method": 0}},
		},
		{
			name: "zero", layout: "js-safe", id: 0,
			want: Parts{Time: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), Fixed: map[string]int64{"reserved": 0}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := mustParse(t, tc.layout)
			got := mustExplain(t, l, tc.id)
			if !got.Time.Equal(tc.want.Time) || got.Time.Location() != time.UTC {
				t.Errorf("Time = %s, want %s (UTC)", got.Time, tc.want.Time)
			}
			if got.Ticks != tc.want.Ticks || got.Datacenter != tc.want.Datacenter || got.Worker != tc.want.Worker || got.Sequence != tc.want.Sequence {
				t.Errorf("Explain = %+v, want %+v", got, tc.want)
			}
			if len(got.Fixed) != len(tc.want.Fixed) || (tc.want.Fixed == nil) != (got.Fixed == nil) {
				t.Errorf("Fixed = %v, want %v", got.Fixed, tc.want.Fixed)
			}
			for k, v := range tc.want.Fixed {
				if got.Fixed[k] != v {
					t.Errorf("Fixed[%q] = %d, want %d", k, got.Fixed[k], v)
				}
			}
			id, err := l.Make(tc.want)
			if err != nil {
				t.Fatal(err)
			}
			if id != tc.id {
				t.Errorf("Make = %d, want %d", id, tc.id)
			}
		})
	}
}

func TestExplainErrors(t *testing.T) {
	tests := []struct {
		name, layout string
		id           int64
		want         error
		msg          string
	}{
		{"negative", "twitter", -1, idforge.ErrInvalidArgument, "negative"},
		{"vesta type mismatch", "vesta-max-peak", 1 << 62, idforge.ErrInvalidArgument, `has 1 in fixed field "type", the layout says 0`},
		{"js-safe above 2^53", "js-safe", 1 << 53, idforge.ErrInvalidArgument, `fixed field "reserved"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := mustParse(t, tc.layout).Explain(tc.id)
			wantErr(t, err, tc.want, tc.msg)
		})
	}
	t.Run("invalid layout", func(t *testing.T) {
		_, err := Layout{}.Explain(1)
		wantErr(t, err, idforge.ErrInvalidLayout)
		_, err = Layout{}.Make(Parts{})
		wantErr(t, err, idforge.ErrInvalidLayout)
	})
}

func TestMakeErrors(t *testing.T) {
	tw := mustPreset(t, "twitter")
	ok := Parts{Time: start}
	with := func(f func(p *Parts)) Parts { p := ok; f(&p); return p }
	tests := []struct {
		name   string
		layout Layout
		parts  Parts
		msg    string
	}{
		{"before epoch", tw, with(func(p *Parts) { p.Time = tw.Epoch.Add(-time.Millisecond) }), "before the epoch"},
		{"zero time", tw, Parts{}, "before the epoch"},
		{"at expiry", tw, with(func(p *Parts) { p.Time = tw.Expires() }), "at or after the layout's end 2080-07-10T17:30:30.209Z"},
		{"worker too big", tw, with(func(p *Parts) { p.Worker = 32 }), "worker 32 out of range 0..31"},
		{"worker negative", tw, with(func(p *Parts) { p.Worker = -1 }), "worker -1 out of range"},
		{"datacenter too big", tw, with(func(p *Parts) { p.Datacenter = 32 }), "datacenter 32 out of range 0..31"},
		{"sequence too big", tw, with(func(p *Parts) { p.Sequence = 4096 }), "sequence 4096 out of range 0..4095"},
		{"no datacenter field", mustPreset(t, "sonyflake"), with(func(p *Parts) { p.Datacenter = 1 }), "the layout has no datacenter field"},
		{"unknown fixed", tw, with(func(p *Parts) { p.Fixed = map[string]int64{"type": 0} }), `no fixed field "type"`},
		{"fixed mismatch", mustPreset(t, "vesta-max-peak"), with(func(p *Parts) { p.Fixed = map[string]int64{"type": 1} }), `fixed field "type" is 0 in this layout, not 1`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.layout.Make(tc.parts)
			wantErr(t, err, idforge.ErrInvalidArgument, tc.msg)
		})
	}
	t.Run("mid-tick time floors", func(t *testing.T) {
		l := mustPreset(t, "vesta-max-peak")
		a, err := l.Make(Parts{Time: start})
		if err != nil {
			t.Fatal(err)
		}
		b, err := l.Make(Parts{Time: start.Truncate(time.Second)})
		if err != nil {
			t.Fatal(err)
		}
		if a != b {
			t.Errorf("Make floors the time to its tick: %d != %d", a, b)
		}
	})
}

// TestExplainMakeRoundTrip checks Make(Explain(id)) == id for random IDs
// of every preset, with the fixed bits forced to the layout's values.
func TestExplainMakeRoundTrip(t *testing.T) {
	for _, name := range Presets() {
		t.Run(name, func(t *testing.T) {
			l := mustPreset(t, name)
			p, err := l.plan()
			if err != nil {
				t.Fatal(err)
			}
			var fixedMask int64
			shift := 63
			for _, f := range l.Fields {
				shift -= f.Bits
				if f.Kind == KindFixed {
					fixedMask |= maxOf(uint(f.Bits)) << shift
				}
			}
			prop := func(raw int64) bool {
				id := raw&math.MaxInt64&^fixedMask | p.fixed
				parts, err := l.Explain(id)
				if err != nil {
					t.Logf("Explain(%d): %v", id, err)
					return false
				}
				back, err := l.Make(parts)
				if err != nil || back != id {
					t.Logf("Make(Explain(%d)) = %d, %v", id, back, err)
					return false
				}
				return true
			}
			cfg := &quick.Config{MaxCount: 20000, Rand: rand.New(rand.NewSource(1))}
			if err := quick.Check(prop, cfg); err != nil {
				t.Error(err)
			}
			for _, id := range []int64{p.fixed, math.MaxInt64&^fixedMask | p.fixed} {
				if !prop(id) {
					t.Errorf("round trip of %d failed", id)
				}
			}
		})
	}
}
