package snowflake

import (
	"strings"
	"testing"
	"time"

	"github.com/idforge/idforge"
)

func TestParseLayoutPresets(t *testing.T) {
	for _, name := range Presets() {
		t.Run(name, func(t *testing.T) {
			p := mustPreset(t, name)
			byName := mustParse(t, name)
			if !byName.Equal(p) || byName.Name != name {
				t.Fatalf("ParseLayout(%q) = %+v, want %+v", name, byName, p)
			}
			spec := p.String()
			back := mustParse(t, spec)
			if !back.Equal(p) || back.Name != name {
				t.Fatalf("ParseLayout(%q) = %+v (name %q), want the preset", spec, back, back.Name)
			}
			if back.String() != spec {
				t.Errorf("String() not stable: %q then %q", spec, back.String())
			}
		})
	}
}

func TestParseLayout(t *testing.T) {
	twitter := mustPreset(t, "twitter")
	moved := twitter
	moved.Epoch = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name, spec string
		want       Layout
		wantName   string
	}{
		{"twitter full spec", "time:41,datacenter:5,worker:5,sequence:12,unit=1ms,epoch=1288834974657", twitter, "twitter"},
		{"spaces", "  time : 41 , datacenter:5,\tworker:5 ,sequence:12, unit = 1ms ,epoch= 1288834974657 ", twitter, "twitter"},
		{"preset with epoch", "twitter,epoch=2020-01-01T00:00:00Z", moved, "custom"},
		{"preset with same epoch", "twitter, epoch=1288834974657", twitter, "twitter"},
		{"preset with offset epoch", "twitter,epoch=2020-01-01T08:00:00+08:00", moved, "custom"},
		{"epoch in ms", "twitter,epoch=1577836800000", moved, "custom"},
		{"unit as other duration", "time:41,datacenter:5,worker:5,sequence:12,unit=1000us,epoch=1288834974657", twitter, "twitter"},
		{"vesta", "type:1=0,method:2=0,time:30,sequence:20,worker:10,unit=1s,epoch=1420041600000", mustPreset(t, "vesta-max-peak"), "vesta-max-peak"},
		{"custom", "time:40,worker:22,sequence:1,unit=1s,epoch=2024-01-01T00:00:00Z", Layout{
			Unit: time.Second, Epoch: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC),
			Fields: []Field{{Kind: KindTime, Name: "time", Bits: 40}, {Kind: KindWorker, Name: "worker", Bits: 22}, {Kind: KindSequence, Name: "sequence", Bits: 1}},
		}, "custom"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := mustParse(t, tc.spec)
			if !got.Equal(tc.want) {
				t.Errorf("ParseLayout(%q) = %s, want %s", tc.spec, got, tc.want)
			}
			if got.Name != tc.wantName {
				t.Errorf("Name = %q, want %q", got.Name, tc.wantName)
			}
		})
	}
}

func TestParseLayoutErrors(t *testing.T) {
	const rest = ",unit=1ms,epoch=1288834974657"
	tests := []struct {
		name, spec, msg string
	}{
		{"empty", "", "empty layout spec"},
		{"blank", "   ", "empty layout spec"},
		{"empty token", "time:41,,sequence:22" + rest, "empty token 2"},
		{"trailing comma", "twitter,", "empty token 2"},
		{"unknown preset", "twiter", `unknown preset "twiter"`},
		{"preset then field", "twitter,worker:5", `token "worker:5": only epoch=`},
		{"preset then unit", "twitter,unit=1s", `token "unit=1s": only epoch=`},
		{"preset epoch twice", "twitter,epoch=0,epoch=1", `token "epoch=1": epoch given twice`},
		{"bare word later", "time:41,worker,sequence:22" + rest, `token "worker": not a field`},
		{"bits not a number", "time:4x1,worker:10,sequence:12" + rest, `token "time:4x1": bits "4x1" is not a number`},
		{"bits missing", "time:,worker:10,sequence:12" + rest, `bits "" is not a number`},
		{"bits too big", "time:99,sequence:12" + rest, `token "time:99": 99 bits, want 1 to 62`},
		{"bits zero", "time:51,worker:0,sequence:12" + rest, `token "worker:0": 0 bits`},
		{"bits huge", "time:99999999999999999999,sequence:1" + rest, `is not a number`},
		{"unknown field", "time:41,machine:10,sequence:12" + rest, `token "machine:10": unknown field "machine"`},
		{"value on time", "time:41=3,worker:10,sequence:12" + rest, `token "time:41=3": the time field takes no value`},
		{"fixed value not a number", "t:1=x,time:40,worker:10,sequence:12" + rest, `token "t:1=x": value "x" is not a number`},
		{"fixed bad name", "9t:1=0,time:40,worker:10,sequence:12" + rest, `token "9t:1=0": fixed field name "9t"`},
		{"fixed value too big", "t:1=2,time:40,worker:10,sequence:12" + rest, "value 2 does not fit in 1 bits"},
		{"unknown setting", "time:41,worker:10,sequence:12,units=1ms,epoch=0", `token "units=1ms": unknown setting "units"`},
		{"bad unit", "time:41,worker:10,sequence:12,unit=5ms,epoch=0", `token "unit=5ms": unit "5ms" not supported`},
		{"unit twice", "time:41,worker:10,sequence:12,unit=1ms,unit=1ms,epoch=0", `token "unit=1ms": unit given twice`},
		{"no unit", "time:41,worker:10,sequence:12,epoch=0", "no unit="},
		{"no epoch", "time:41,worker:10,sequence:12,unit=1ms", "no epoch="},
		{"bad epoch", "time:41,worker:10,sequence:12,unit=1ms,epoch=yesterday", `token "epoch=yesterday": epoch "yesterday" is neither`},
		{"negative epoch", "time:41,worker:10,sequence:12,unit=1ms,epoch=-5", `epoch "-5" is neither`},
		{"epoch overflow", "time:41,worker:10,sequence:12,unit=1ms,epoch=99999999999999999999", "out of range"},
		{"epoch before 1970", "time:41,worker:10,sequence:12,unit=1ms,epoch=1969-01-01T00:00:00Z", "before 1970"},
		{"sum", "time:41,worker:10,sequence:11" + rest, "bits sum to 62, want 63"},
		{"duplicate field", "time:41,worker:5,worker:5,sequence:12" + rest, `field 2 "worker:5": second worker field`},
		{"no time", "worker:51,sequence:12" + rest, "no time field"},
		{"no sequence", "time:51,worker:12" + rest, "no sequence field"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, err := ParseLayout(tc.spec)
			wantErr(t, err, idforge.ErrInvalidLayout, tc.msg)
			if len(l.Fields) != 0 {
				t.Errorf("got a layout %s along with the error", l)
			}
		})
	}
}

func TestLayoutString(t *testing.T) {
	tests := []struct {
		preset, want string
	}{
		{"twitter", "time:41,datacenter:5,worker:5,sequence:12,unit=1ms,epoch=1288834974657"},
		{"sonyflake", "time:39,sequence:8,worker:16,unit=10ms,epoch=2014-09-01T00:00:00Z"},
		{"vesta-max-peak", "version:1=0,type:1=0,method:2=0,time:30,sequence:20,worker:10,unit=1s,epoch=2014-12-31T16:00:00Z"},
		{"vesta-min-granularity", "version:1=0,type:1=1,method:2=0,time:40,sequence:10,worker:10,unit=1ms,epoch=2014-12-31T16:00:00Z"},
		{"js-safe", "reserved:10=0,time:38,worker:7,sequence:8,unit=10ms,epoch=2024-01-01T00:00:00Z"},
	}
	for _, tc := range tests {
		t.Run(tc.preset, func(t *testing.T) {
			if got := mustPreset(t, tc.preset).String(); got != tc.want {
				t.Errorf("String() = %q, want %q", got, tc.want)
			}
		})
	}
	if s := (Layout{}).String(); !strings.Contains(s, "unit=0s") {
		t.Errorf("zero Layout String() = %q", s)
	}
}
