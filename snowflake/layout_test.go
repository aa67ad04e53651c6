package snowflake

import (
	"testing"
	"time"

	"github.com/idforge/idforge"
)

func TestValidate(t *testing.T) {
	epoch := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	f := func(k FieldKind, bits int) Field { return Field{Kind: k, Name: k.String(), Bits: bits} }
	fixed := func(name string, bits int, v int64) Field {
		return Field{Kind: KindFixed, Name: name, Bits: bits, Value: v}
	}
	tw := []Field{f(KindTime, 41), f(KindDatacenter, 5), f(KindWorker, 5), f(KindSequence, 12)}
	tests := []struct {
		name   string
		unit   time.Duration
		epoch  time.Time
		fields []Field
		msg    string // "" for a valid layout
	}{
		{"twitter-like", time.Millisecond, epoch, tw, ""},
		{"no datacenter or worker", time.Second, epoch, []Field{f(KindTime, 50), f(KindSequence, 13)}, ""},
		{"fixed fields anywhere", 10 * time.Millisecond, epoch,
			[]Field{fixed("a", 1, 1), f(KindTime, 40), fixed("b", 2, 3), f(KindSequence, 10), f(KindWorker, 10)}, ""},
		{"bits short", time.Millisecond, epoch,
			[]Field{f(KindTime, 41), f(KindWorker, 9), f(KindSequence, 12)}, "bits sum to 62, want 63"},
		{"bits long", time.Millisecond, epoch,
			[]Field{f(KindTime, 41), f(KindWorker, 11), f(KindSequence, 12)}, "bits sum to 64, want 63"},
		{"no fields", time.Millisecond, epoch, nil, "no fields"},
		{"no time", time.Millisecond, epoch, []Field{f(KindWorker, 51), f(KindSequence, 12)}, "no time field"},
		{"no sequence", time.Millisecond, epoch, []Field{f(KindTime, 51), f(KindWorker, 12)}, "no sequence field"},
		{"two workers", time.Millisecond, epoch,
			[]Field{f(KindTime, 41), f(KindWorker, 5), f(KindWorker, 5), f(KindSequence, 12)}, "second worker field"},
		{"two times", time.Millisecond, epoch,
			[]Field{f(KindTime, 41), f(KindTime, 10), f(KindSequence, 12)}, "second time field"},
		{"zero bits", time.Millisecond, epoch,
			[]Field{f(KindTime, 51), f(KindWorker, 0), f(KindSequence, 12)}, "0 bits, want 1 to 62"},
		{"negative bits", time.Millisecond, epoch,
			[]Field{f(KindTime, 70), f(KindWorker, -19), f(KindSequence, 12)}, "want 1 to 62"},
		{"fixed value too big", time.Millisecond, epoch,
			[]Field{fixed("type", 1, 2), f(KindTime, 40), f(KindWorker, 10), f(KindSequence, 12)}, "value 2 does not fit in 1 bits"},
		{"fixed value negative", time.Millisecond, epoch,
			[]Field{fixed("type", 1, -1), f(KindTime, 40), f(KindWorker, 10), f(KindSequence, 12)}, "value -1 does not fit"},
		{"duplicate fixed names", time.Millisecond, epoch,
			[]Field{fixed("t", 1, 0), fixed("t", 1, 0), f(KindTime, 39), f(KindWorker, 10), f(KindSequence, 12)}, `fixed field "t" already defined`},
		{"bad fixed name", time.Millisecond, epoch,
			[]Field{fixed("a b", 1, 0), f(KindTime, 40), f(KindWorker, 10), f(KindSequence, 12)}, "must be a letter"},
		{"fixed named like a kind", time.Millisecond, epoch,
			[]Field{fixed("worker", 1, 0), f(KindTime, 40), f(KindWorker, 10), f(KindSequence, 12)}, "not a fixed one"},
		{"kind and name disagree", time.Millisecond, epoch,
			[]Field{f(KindTime, 41), {Kind: KindWorker, Name: "machine", Bits: 10}, f(KindSequence, 12)}, `must be named "worker"`},
		{"value on a non-fixed field", time.Millisecond, epoch,
			[]Field{f(KindTime, 41), {Kind: KindWorker, Name: "worker", Bits: 10, Value: 3}, f(KindSequence, 12)}, "only fixed fields take a value"},
		{"kind not set", time.Millisecond, epoch,
			[]Field{{Name: "time", Bits: 41}, f(KindWorker, 10), f(KindSequence, 12)}, "kind FieldKind(0) not valid"},
		{"sequence above time", time.Millisecond, epoch,
			[]Field{f(KindSequence, 12), f(KindTime, 41), f(KindWorker, 10)}, "sequence field is more significant than the time field"},
		{"worker above time", time.Millisecond, epoch,
			[]Field{f(KindWorker, 10), f(KindTime, 41), f(KindSequence, 12)}, "worker field is more significant"},
		{"bad unit", 2 * time.Millisecond, epoch, tw, "unit 2ms not supported"},
		{"zero unit", 0, epoch, tw, "unit 0s not supported"},
		{"no epoch", time.Millisecond, time.Time{}, tw, "epoch not set"},
		{"epoch before 1970", time.Millisecond, time.Date(1969, 12, 31, 0, 0, 0, 0, time.UTC), tw, "before 1970"},
		{"epoch with microseconds", time.Millisecond, epoch.Add(time.Microsecond), tw, "not a whole millisecond"},
		{"epoch after 9999", time.Millisecond, time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), tw, "after the year 9999"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := Layout{Unit: tc.unit, Epoch: tc.epoch, Fields: tc.fields}
			err := l.Validate()
			if tc.msg == "" {
				wantErr(t, err, nil)
				return
			}
			wantErr(t, err, idforge.ErrInvalidLayout, tc.msg)
		})
	}
}

func TestPresets(t *testing.T) {
	tests := []struct {
		name                    string
		expires                 time.Time
		perTick                 int64
		capPerSecond            float64
		maxWorker, maxDC, maxSq int64
	}{
		{"js-safe", time.Date(2111, 2, 8, 13, 44, 29, 440e6, time.UTC), 256, 25_600, 127, 0, 255},
		{"sonyflake", time.Date(2188, 11, 16, 3, 28, 58, 880e6, time.UTC), 256, 25_600, 65535, 0, 255},
		{"twitter", time.Date(2080, 7, 10, 17, 30, 30, 209e6, time.UTC), 4096, 4_096_000, 31, 31, 4095},
		{"vesta-max-peak", time.Date(2049, 1, 9, 5, 37, 4, 0, time.UTC), 1 << 20, 1 << 20, 1023, 0, 1<<20 - 1},
		{"vesta-min-granularity", time.Date(2049, 11, 3, 11, 53, 47, 776e6, time.UTC), 1024, 1_024_000, 1023, 0, 1023},
	}
	names := Presets()
	if len(names) != len(tests) {
		t.Fatalf("Presets() = %v, want %d names", names, len(tests))
	}
	for i, tc := range tests {
		if names[i] != tc.name {
			t.Fatalf("Presets()[%d] = %q, want %q (sorted)", i, names[i], tc.name)
		}
		t.Run(tc.name, func(t *testing.T) {
			l := mustPreset(t, tc.name)
			if err := l.Validate(); err != nil {
				t.Fatal(err)
			}
			if l.Name != tc.name {
				t.Errorf("Name = %q", l.Name)
			}
			if got := l.Expires(); !got.Equal(tc.expires) {
				t.Errorf("Expires = %s, want %s", got, tc.expires)
			}
			if got := l.PerTick(); got != tc.perTick {
				t.Errorf("PerTick = %d, want %d", got, tc.perTick)
			}
			if got := l.CapPerSecond(); got != tc.capPerSecond {
				t.Errorf("CapPerSecond = %v, want %v", got, tc.capPerSecond)
			}
			if got := l.MaxWorker(); got != tc.maxWorker {
				t.Errorf("MaxWorker = %d, want %d", got, tc.maxWorker)
			}
			if got := l.MaxDatacenter(); got != tc.maxDC {
				t.Errorf("MaxDatacenter = %d, want %d", got, tc.maxDC)
			}
			if got := l.MaxSequence(); got != tc.maxSq {
				t.Errorf("MaxSequence = %d, want %d", got, tc.maxSq)
			}
		})
	}

	t.Run("fresh copies", func(t *testing.T) {
		a := mustPreset(t, "twitter")
		a.Fields[0].Bits = 1
		if b := mustPreset(t, "twitter"); b.Fields[0].Bits != 41 {
			t.Fatal("changing a preset's Fields changed the preset")
		}
	})
	t.Run("unknown", func(t *testing.T) {
		_, err := Preset("flurry")
		wantErr(t, err, idforge.ErrInvalidLayout, `unknown preset "flurry"`, "twitter")
	})
}

// TestJSSafe checks that the largest ID the js-safe layout can hold, with
// every field at its maximum, stays below 2^53.
func TestJSSafe(t *testing.T) {
	l := mustPreset(t, "js-safe")
	id, err := l.Make(Parts{
		Time:     l.Expires().Add(-time.Nanosecond),
		Worker:   l.MaxWorker(),
		Sequence: l.MaxSequence(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if id != 1<<53-1 {
		t.Errorf("largest js-safe ID = %d, want 2^53-1 = %d", id, int64(1<<53-1))
	}
	if float64(id) != float64(1<<53-1) || int64(float64(id)) != id {
		t.Errorf("largest js-safe ID %d does not survive a float64", id)
	}
}

func TestExpiresCap(t *testing.T) {
	// 62 bits of seconds would run for 1.5e11 years: capped at year 10000,
	// without overflowing.
	l := mustParse(t, "time:62,sequence:1,unit=1s,epoch=2024-01-01T00:00:00Z")
	want := time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
	if got := l.Expires(); !got.Equal(want) {
		t.Fatalf("Expires = %s, want %s", got, want)
	}
	// The last tick before the cap round-trips; one at the cap does not.
	last := want.Add(-time.Second)
	id, err := l.Make(Parts{Time: last})
	if err != nil {
		t.Fatal(err)
	}
	if p := mustExplain(t, l, id); !p.Time.Equal(last) {
		t.Errorf("Explain time = %s, want %s", p.Time, last)
	}
	_, err = l.Explain(id + 2) // one tick later (the sequence is bit 0)
	wantErr(t, err, idforge.ErrInvalidArgument, "past the layout's end")
	_, err = l.Make(Parts{Time: want})
	wantErr(t, err, idforge.ErrInvalidArgument, "at or after the layout's end")
}

func TestLayoutHelpersOnPartialLayouts(t *testing.T) {
	var zero Layout
	if zero.MaxWorker() != 0 || zero.PerTick() != 0 || zero.CapPerSecond() != 0 || !zero.Expires().IsZero() {
		t.Errorf("zero Layout helpers not zero")
	}
	if got := FieldKind(9).String(); got != "FieldKind(9)" {
		t.Errorf("FieldKind(9).String() = %q", got)
	}
}
