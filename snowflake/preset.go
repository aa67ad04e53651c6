package snowflake

import (
	"fmt"
	"sort"
	"strings"

	"github.com/idforge/idforge"
)

// presets are the built-in layouts in the spec form ParseLayout reads;
// preset builds each afresh, so callers can never change a shared Fields
// slice.
var presets = map[string]string{
	// Twitter's original snowflake: 41 bits of milliseconds since
	// 2010-11-04T01:42:54.657Z, 5 bits of datacenter, 5 of worker and 12
	// of sequence. Runs out of time on 2080-07-10.
	"twitter": "time:41,datacenter:5,worker:5,sequence:12,unit=1ms,epoch=1288834974657",
	// Sony's sonyflake: 39 bits of 10 ms since 2014-09-01, then 8 bits of
	// sequence above 16 bits of machine ID. Runs out of time in 2188.
	"sonyflake": "time:39,sequence:8,worker:16,unit=10ms,epoch=2014-09-01T00:00:00Z",
	// Vesta's "max peak" type (type 0): seconds since Vesta's EPOCH with a
	// 20-bit sequence, about a million IDs per second per machine. Bit 63
	// is Vesta's version (0; 1 would make the ID negative), bit 62 its
	// type, bits 61-60 its generation method (0 embedded, 1 central
	// server, 2 REST: set it with "vesta-max-peak,method=2"), as Vesta's
	// IdMeta lays them out (its design document's table shows time at
	// 40-59, which contradicts its own 30-bit time and 20-bit sequence).
	// Runs out of time in 2049.
	"vesta-max-peak": "version:1=0,type:1=0,method:2=0,time:30,sequence:20,worker:10,unit=1s,epoch=2015-01-01T00:00:00+08:00",
	// Vesta's "min granularity" type (type 1): milliseconds with a 10-bit
	// sequence, the same version and method bits. Runs out of time in 2049.
	"vesta-min-granularity": "version:1=0,type:1=1,method:2=0,time:40,sequence:10,worker:10,unit=1ms,epoch=2015-01-01T00:00:00+08:00",
	// IDs that JavaScript numbers hold exactly: the top 10 bits stay 0, so
	// every ID is below 2^53. 38 bits of 10 ms since 2024-01-01 (until
	// 2111), 7 bits of worker, 8 of sequence (25,600 IDs/s per worker).
	"js-safe": "reserved:10=0,time:38,worker:7,sequence:8,unit=10ms,epoch=2024-01-01T00:00:00Z",
}

// preset builds the named built-in layout from its spec; ok is false for
// an unknown name. A spec above that does not parse is a bug, which
// TestPresets catches, so it panics.
func preset(name string) (l Layout, ok bool) {
	spec, ok := presets[name]
	if !ok {
		return Layout{}, false
	}
	l, err := parseFull(strings.Split(spec, ","))
	if err != nil {
		panic(fmt.Sprintf("snowflake: built-in preset %s: %v", name, err))
	}
	l.Name = name
	return l, true
}

// Preset returns the named built-in layout. The names are listed by
// Presets:
//
//   - twitter: time:41, datacenter:5, worker:5, sequence:12; 1 ms ticks
//     from 1288834974657 (Unix ms); expires 2080-07-10.
//   - sonyflake: time:39, sequence:8, worker:16; 10 ms ticks from
//     2014-09-01T00:00:00Z; expires 2188-11-16.
//   - vesta-max-peak: version:1=0, type:1=0, method:2=0, time:30,
//     sequence:20, worker:10 (version in the sign bit); 1 s ticks from
//     Vesta's epoch 1420041600000; expires 2049-01-09.
//   - vesta-min-granularity: version:1=0, type:1=1, method:2=0, time:40,
//     sequence:10, worker:10; 1 ms ticks from the same epoch; expires
//     2049-11-03.
//   - js-safe: reserved:10=0, time:38, worker:7, sequence:8; 10 ms ticks
//     from 2024-01-01T00:00:00Z; every ID is below 2^53; expires
//     2111-02-08.
//
// An unknown name returns an error wrapping idforge.ErrInvalidLayout.
func Preset(name string) (Layout, error) {
	l, ok := preset(name)
	if !ok {
		return Layout{}, fmt.Errorf("%w: unknown preset %q (known: %s)", idforge.ErrInvalidLayout, name, strings.Join(Presets(), ", "))
	}
	return l, nil
}

// Presets returns the names of the built-in layouts, sorted.
func Presets() []string {
	names := make([]string, 0, len(presets))
	for name := range presets {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// vestaValues names the values of Vesta's fixed fields, as Vesta's
// design document does.
var vestaValues = map[string][]string{
	"version": {"default", "extension"},
	"type":    {"max-peak", "min-granularity"},
	"method":  {"embedded", "central server", "REST", "reserved"},
}

// Meaning returns what value v of the fixed field name means, "" when
// the layout gives it no meaning: for a layout that starts with Vesta's
// version, type and method fields, Vesta's names ("REST" for method 2).
func (l Layout) Meaning(name string, v int64) string {
	f := l.Fields
	if len(f) < 3 || f[0] != (Field{KindFixed, "version", 1, f[0].Value}) || f[1] != (Field{KindFixed, "type", 1, f[1].Value}) ||
		f[2] != (Field{KindFixed, "method", 2, f[2].Value}) || v < 0 || v >= int64(len(vestaValues[name])) {
		return ""
	}
	return vestaValues[name][v]
}

// presetNameOf returns the name of the preset l is exactly (Equal to), or
// "custom".
func presetNameOf(l Layout) string {
	for name := range presets {
		if p, _ := preset(name); l.Equal(p) {
			return name
		}
	}
	return "custom"
}
