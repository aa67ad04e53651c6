package snowflake

import (
	"errors"
	"testing"

	"github.com/idforge/idforge"
)

// FuzzParseLayout checks that ParseLayout never panics, fails only with
// ErrInvalidLayout, and that whatever it accepts reparses from its String
// form to an equal layout with the same name.
func FuzzParseLayout(f *testing.F) {
	for _, name := range Presets() {
		f.Add(name)
		f.Add(mustPreset(f, name).String())
	}
	for _, s := range []string{
		"twitter,epoch=2020-01-01T00:00:00Z",
		"vesta-max-peak,method=2", "vesta-min-granularity,method=1,epoch=2020-01-01T00:00:00Z",
		"vesta-max-peak,version=1", "twitter,method=2", "sign:1=0,time:41,worker:10,sequence:12,unit=1ms,epoch=0",
		"twitter,epoch=2020-01-01T00:00:00.123+05:30",
		" time : 41 , worker:10,sequence:12,unit=1ms,epoch=0",
		"time:40,worker:22,sequence:1,unit=1s,epoch=2024-01-01T00:00:00Z",
		"a:1=1,b-c:2=3,time:40,sequence:10,worker:10,unit=1000ms,epoch=1420041600000",
		"time:62,sequence:1,unit=1s,epoch=253402300799000",
		"time:41,worker:10,sequence:12,unit=1ms,epoch=1969-12-31T23:59:59Z",
		"time:41,,sequence:22", "twitter,", ",", "=", ":", "x:1=", "time:+41", "t:1=+0",
		"time:41,worker:10,sequence:12,unit=10ms,epoch=2024-02-30T00:00:00Z",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		l, err := ParseLayout(spec)
		if err != nil {
			if !errors.Is(err, idforge.ErrInvalidLayout) {
				t.Fatalf("ParseLayout(%q): error %v does not wrap ErrInvalidLayout", spec, err)
			}
			return
		}
		if err := l.Validate(); err != nil {
			t.Fatalf("ParseLayout(%q) returned an invalid layout: %v", spec, err)
		}
		s := l.String()
		back, err := ParseLayout(s)
		if err != nil {
			t.Fatalf("ParseLayout(%q) (String of %q): %v", s, spec, err)
		}
		if !back.Equal(l) || back.Name != l.Name {
			t.Fatalf("round trip of %q via %q: %+v != %+v", spec, s, back, l)
		}
		if back.String() != s {
			t.Fatalf("String not stable: %q then %q", s, back.String())
		}
		_ = l.Expires()
	})
}

// FuzzExplainMake checks Make(Explain(id)) == id for any layout spec the
// fuzzer finds and any ID; Explain and Make never panic.
func FuzzExplainMake(f *testing.F) {
	seeds := []int64{0, 1, 1541815603606036480, 1<<62 | 12345<<20 | 1<<10 | 2, 1<<53 - 1, 1 << 53, 1<<63 - 1, -1, -1 << 63}
	for _, name := range Presets() {
		for _, id := range seeds {
			f.Add(name, id)
		}
	}
	f.Add("time:62,sequence:1,unit=1s,epoch=2024-01-01T00:00:00Z", int64(1<<63-1))
	f.Add("vesta-max-peak,method=2", int64(2<<60|300_000_000<<30|5<<10|7))
	f.Add("a:1=1,time:40,b:2=2,sequence:10,worker:10,unit=10ms,epoch=0", int64(1<<62|5<<22|2<<20|77))
	f.Fuzz(func(t *testing.T, spec string, id int64) {
		l, err := ParseLayout(spec)
		if err != nil {
			return
		}
		p, err := l.Explain(id)
		if err != nil {
			if !errors.Is(err, idforge.ErrInvalidArgument) {
				t.Fatalf("Explain(%d): error %v does not wrap ErrInvalidArgument", id, err)
			}
			return
		}
		if p.Time.Before(l.Epoch) || !p.Time.Before(l.Expires()) {
			t.Fatalf("Explain(%d).Time = %s outside [%s, %s)", id, p.Time, l.Epoch, l.Expires())
		}
		back, err := l.Make(p)
		if err != nil {
			t.Fatalf("Make(Explain(%d) = %+v): %v", id, p, err)
		}
		if back != id {
			t.Fatalf("Make(Explain(%d)) = %d with layout %s", id, back, l)
		}
	})
}
