package snowflake

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/idforge/idforge"
)

// vestaID composes an ID as Vesta's IdConverter does, from its IdMeta
// (machine 10 bits, seq 20 or 10, time 30 or 40, genMethod 2, type 1,
// version 1, from bit 0 up), apart from the code under test.
func vestaID(version, typ, method, t, seq, machine int64) int64 {
	seqBits, timeBits := uint(20), uint(30)
	if typ == 1 {
		seqBits, timeBits = 10, 40
	}
	pos := uint(10)
	id := machine | seq<<pos
	pos += seqBits
	id |= t << pos
	pos += timeBits
	id |= method << pos
	id |= typ << (pos + 2)
	return id | version<<(pos+3)
}

// IDs made by Vesta with each generation method decode here with the
// method set in the layout, and are made again from their fields.
func TestVestaGenerationMethods(t *testing.T) {
	for _, preset := range []string{"vesta-max-peak", "vesta-min-granularity"} {
		for method, name := range []string{"embedded", "central server", "REST"} {
			l, err := ParseLayout(preset + ",method=" + string(rune('0'+method)))
			if err != nil {
				t.Fatal(err)
			}
			typ := int64(0)
			ticks := int64(300_000_000) // seconds since Vesta's epoch: 2024-07-05
			if preset == "vesta-min-granularity" {
				typ, ticks = 1, 300_000_000_123
			}
			id := vestaID(0, typ, int64(method), ticks, 77, 1023)
			p, err := l.Explain(id)
			if err != nil {
				t.Fatalf("%s: Explain(%d): %v", l, id, err)
			}
			want := map[string]int64{"version": 0, "type": typ, "method": int64(method)}
			for k, v := range want {
				if p.Fixed[k] != v {
					t.Errorf("%s: %s = %d, want %d", l, k, p.Fixed[k], v)
				}
			}
			if p.Ticks != ticks || p.Sequence != 77 || p.Worker != 1023 {
				t.Errorf("%s: %+v", l, p)
			}
			if got := l.Meaning("method", p.Fixed["method"]); got != name {
				t.Errorf("%s: method %d means %q, want %q", l, method, got, name)
			}
			if back, err := l.Make(p); err != nil || back != id {
				t.Errorf("%s: Make(Explain(%d)) = %d, %v", l, id, back, err)
			}
			// An ID of another method is not this layout's.
			other := vestaID(0, typ, int64((method+1)%3), ticks, 77, 1023)
			if _, err := l.Explain(other); !errors.Is(err, idforge.ErrInvalidArgument) {
				t.Errorf("%s: an ID of method %d explained: %v", l, (method+1)%3, err)
			}
		}
	}
}

// Vesta's version bit is the sign bit: version 1 is refused in a layout,
// and a version-1 ID (negative) is explained as such.
func TestVestaVersionBit(t *testing.T) {
	if _, err := ParseLayout("vesta-max-peak,version=1"); !errors.Is(err, idforge.ErrInvalidLayout) || !strings.Contains(err.Error(), "negative") {
		t.Errorf("version=1: %v, want ErrInvalidLayout about negative IDs", err)
	}
	l := mustPreset(t, "vesta-max-peak")
	_, err := l.Explain(vestaID(1, 0, 0, 1, 0, 0))
	if !errors.Is(err, idforge.ErrInvalidArgument) || !strings.Contains(err.Error(), `"version"`) {
		t.Errorf("Explain of a version 1 ID: %v", err)
	}
	if _, err := l.Make(Parts{Time: l.Epoch, Fixed: map[string]int64{"version": 1}}); !errors.Is(err, idforge.ErrInvalidArgument) {
		t.Errorf("Make with version 1: %v", err)
	}
	for _, spec := range []string{"twitter,method=2", "vesta-max-peak,method=4", "vesta-max-peak,method=x", "vesta-max-peak,method=1,method=2", "vesta-max-peak,time=3"} {
		if _, err := ParseLayout(spec); !errors.Is(err, idforge.ErrInvalidLayout) {
			t.Errorf("ParseLayout(%q): %v, want ErrInvalidLayout", spec, err)
		}
	}
}

// The presets spelt before they named the version bit describe the same
// IDs: Equal, the same preset name and the same Canonical form, so a
// node upgraded across the change keeps its recorded layout.
func TestVestaCanonical(t *testing.T) {
	old := "type:1=0,method:2=0,time:30,sequence:20,worker:10,unit=1s,epoch=2014-12-31T16:00:00Z"
	l, err := ParseLayout(old)
	if err != nil {
		t.Fatal(err)
	}
	p := mustPreset(t, "vesta-max-peak")
	if !l.Equal(p) || l.Name != "vesta-max-peak" || p.Canonical() != old || l.Canonical() != old {
		t.Errorf("old %s (%s), preset %s: Equal %v, Canonical %q", l, l.Name, p, l.Equal(p), p.Canonical())
	}
	if mustPreset(t, "twitter").Meaning("method", 0) != "" {
		t.Error("twitter's fields have Vesta meanings")
	}
	id, err := p.Make(Parts{Time: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), Sequence: 1})
	if err != nil || id < 0 {
		t.Fatalf("Make: %d, %v", id, err)
	}
}
