package snowflake

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/idforge/idforge"
)

// FieldKind says what a Field of a Layout holds.
type FieldKind int

// The kinds of field a layout is made of. The zero FieldKind is not a
// valid kind, so a Field whose Kind was forgotten fails Validate.
const (
	// KindTime holds the number of Units elapsed since the layout's Epoch.
	KindTime FieldKind = iota + 1
	// KindDatacenter holds the datacenter ID of the issuing generator.
	KindDatacenter
	// KindWorker holds the worker (machine) ID of the issuing generator.
	KindWorker
	// KindSequence holds the counter that tells apart the IDs one
	// generator issues within one tick.
	KindSequence
	// KindFixed holds a constant (Field.Value), such as Vesta's ID type
	// and generation method.
	KindFixed
)

// kindNames are the field names that select a kind in the spec form; any
// other name is a fixed field.
var kindNames = [...]string{
	KindTime:       "time",
	KindDatacenter: "datacenter",
	KindWorker:     "worker",
	KindSequence:   "sequence",
	KindFixed:      "fixed",
}

// String returns the kind's name: "time", "datacenter", "worker",
// "sequence" or "fixed".
func (k FieldKind) String() string {
	if k >= KindTime && k <= KindFixed {
		return kindNames[k]
	}
	return "FieldKind(" + strconv.Itoa(int(k)) + ")"
}

// kindByName returns the non-fixed kind whose name is name, or 0.
func kindByName(name string) FieldKind {
	for k := KindTime; k <= KindSequence; k++ {
		if kindNames[k] == name {
			return k
		}
	}
	return 0
}

// Field is one run of adjacent bits in an ID.
type Field struct {
	// Kind says what the bits hold.
	Kind FieldKind
	// Name is "time", "datacenter", "worker" or "sequence" for those kinds
	// (it must match Kind), or the name of a fixed field: a letter
	// followed by letters, digits, '_' or '-' ("type", "method",
	// "reserved" …), distinct from the other names in the layout.
	Name string
	// Bits is the width of the field, at least 1.
	Bits int
	// Value is the constant stored in a KindFixed field; it must fit in
	// Bits. It must be 0 for every other kind.
	Value int64
}

// String returns the field in spec form: "name:bits", or
// "name:bits=value" for a fixed field.
func (f Field) String() string {
	name := f.Name
	if name == "" && f.Kind != KindFixed {
		name = f.Kind.String()
	}
	s := name + ":" + strconv.Itoa(f.Bits)
	if f.Kind == KindFixed {
		s += "=" + strconv.FormatInt(f.Value, 10)
	}
	return s
}

// Layout describes how a 63-bit ID is split into fields. IDs are int64
// values whose sign bit is always 0, so the bits of all fields sum to 63;
// or to 64 when the first field is a 1-bit fixed field of value 0 that
// names the sign bit, as Vesta's version bit does (a Vesta ID of version
// 1 is a negative int64, which no generator here issues).
//
// A Layout is a plain value: copy it freely, but do not change its Fields
// slice while a Generator or another goroutine uses it.
type Layout struct {
	// Name is the preset's name, or "custom" (or "") for any other layout.
	// It is informational only: Equal ignores it.
	Name string
	// Unit is the length of one tick of the time field: time.Millisecond,
	// 10*time.Millisecond or time.Second.
	Unit time.Duration
	// Epoch is the instant the time field counts from. It must be a whole
	// millisecond, not before 1970 and not in the future.
	Epoch time.Time
	// Fields lists the fields from the most significant bits down. There
	// is exactly one time and one sequence field, at most one datacenter
	// and one worker field, and any number of fixed fields. The time field
	// must be more significant than the sequence, worker and datacenter
	// fields, so that IDs sort by time (k-sorted) across generators.
	Fields []Field
}

// maxExpiresMs caps Expires: the first instant of the year 10000, in Unix
// milliseconds. Layouts whose time field outlasts it (e.g. 50 bits of
// seconds) are treated as ending there.
const maxExpiresMs = 253402300800000

// units are the tick lengths a layout may use.
var units = [...]time.Duration{time.Millisecond, 10 * time.Millisecond, time.Second}

// plan is a validated layout digested for bit arithmetic.
type plan struct {
	unitMs  int64 // tick length in milliseconds
	epochMs int64 // epoch in Unix milliseconds
	endTick int64 // first tick that cannot be issued (its start is at or after Expires)

	timeShift, seqShift, dcShift, workerShift uint
	timeBits, seqBits, dcBits, workerBits     uint
	fixed                                     int64 // every fixed field's value, in place
	hasFixed                                  bool
	top                                       uint // 64 when the first field names the sign bit, else 63
}

func maxOf(bits uint) int64 { return int64(1)<<bits - 1 }

// layoutErr returns an error wrapping idforge.ErrInvalidLayout.
func layoutErr(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{idforge.ErrInvalidLayout}, args...)...)
}

// Validate reports whether l is a usable layout. The error wraps
// idforge.ErrInvalidLayout and says what is wrong. Whether the epoch lies
// in the future depends on a clock, so New checks that, not Validate.
func (l Layout) Validate() error {
	_, err := l.plan()
	return err
}

// validName reports whether s can name a fixed field: a letter followed
// by letters, digits, '_' or '-'.
func validName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '_' || c == '-'):
		default:
			return false
		}
	}
	return true
}

func (l Layout) plan() (plan, error) {
	var p plan
	if len(l.Fields) == 0 {
		return p, layoutErr("no fields")
	}
	okUnit := false
	for _, u := range units {
		okUnit = okUnit || l.Unit == u
	}
	if !okUnit {
		return p, layoutErr("unit %v not supported (want 1ms, 10ms or 1s)", l.Unit)
	}
	switch {
	case l.Epoch.IsZero():
		return p, layoutErr("epoch not set")
	case l.Epoch.Before(time.Unix(0, 0)):
		return p, layoutErr("epoch %s is before 1970", l.Epoch.UTC().Format(time.RFC3339Nano))
	case l.Epoch.Nanosecond()%int(time.Millisecond) != 0:
		return p, layoutErr("epoch %s is not a whole millisecond", l.Epoch.UTC().Format(time.RFC3339Nano))
	case !l.Epoch.Before(time.UnixMilli(maxExpiresMs)):
		return p, layoutErr("epoch %s is after the year 9999", l.Epoch.UTC().Format(time.RFC3339))
	}
	p.unitMs = l.Unit.Milliseconds()
	p.epochMs = l.Epoch.UnixMilli()

	var (
		seen     [KindFixed + 1]int // index+1 of the field of each non-fixed kind
		fixedIdx = map[string]int{}
		sum      int
	)
	for i, f := range l.Fields {
		if f.Kind < KindTime || f.Kind > KindFixed {
			return p, layoutErr("field %d %q: kind %v not valid", i, f.String(), f.Kind)
		}
		if f.Bits < 1 || f.Bits > 62 {
			return p, layoutErr("field %d %q: %d bits, want 1 to 62", i, f.String(), f.Bits)
		}
		sum += f.Bits
		if f.Kind == KindFixed {
			if !validName(f.Name) {
				return p, layoutErr("field %d %q: fixed field name %q must be a letter followed by letters, digits, '_' or '-'", i, f.String(), f.Name)
			}
			if kindByName(f.Name) != 0 {
				return p, layoutErr("field %d %q: %q names a %s field, not a fixed one", i, f.String(), f.Name, f.Name)
			}
			if j, dup := fixedIdx[f.Name]; dup {
				return p, layoutErr("field %d %q: fixed field %q already defined by field %d", i, f.String(), f.Name, j)
			}
			fixedIdx[f.Name] = i
			if f.Value < 0 || f.Value > maxOf(uint(f.Bits)) {
				return p, layoutErr("field %d %q: value %d does not fit in %d bits (0 to %d)", i, f.String(), f.Value, f.Bits, maxOf(uint(f.Bits)))
			}
			continue
		}
		if f.Name != f.Kind.String() {
			return p, layoutErr("field %d %q: a %s field must be named %q", i, f.String(), f.Kind, f.Kind.String())
		}
		if f.Value != 0 {
			return p, layoutErr("field %d %q: only fixed fields take a value", i, f.String())
		}
		if j := seen[f.Kind]; j != 0 {
			return p, layoutErr("field %d %q: second %s field (field %d is one already)", i, f.String(), f.Kind, j-1)
		}
		seen[f.Kind] = i + 1
	}
	if seen[KindTime] == 0 {
		return p, layoutErr("no time field")
	}
	if seen[KindSequence] == 0 {
		return p, layoutErr("no sequence field")
	}
	p.top = 63
	if first := l.Fields[0]; sum == 64 && first.Kind == KindFixed && first.Bits == 1 {
		if first.Value != 0 {
			return p, layoutErr("field 0 %q is the sign bit of a 64-bit ID: 1 would make every ID negative, and IDs are non-negative int64 values (Vesta's version 1, its extension mark, is not issued here)", first.String())
		}
		p.top = 64
	} else if sum == 64 {
		return p, layoutErr("bits sum to 64, want 63 (64 only with a first field name:1=0 for the sign bit)")
	} else if sum != 63 {
		return p, layoutErr("bits sum to %d, want 63", sum)
	}
	for _, k := range [...]FieldKind{KindSequence, KindDatacenter, KindWorker} {
		if j := seen[k]; j != 0 && j < seen[KindTime] {
			return p, layoutErr("the %s field is more significant than the time field; time must come first so IDs sort by time", k)
		}
	}

	shift := p.top
	for _, f := range l.Fields {
		bits := uint(f.Bits)
		shift -= bits
		switch f.Kind {
		case KindTime:
			p.timeBits, p.timeShift = bits, shift
		case KindSequence:
			p.seqBits, p.seqShift = bits, shift
		case KindDatacenter:
			p.dcBits, p.dcShift = bits, shift
		case KindWorker:
			p.workerBits, p.workerShift = bits, shift
		case KindFixed:
			p.fixed |= f.Value << shift
			p.hasFixed = true
		}
	}
	// Ticks the time field can hold, cut short where the cap on Expires
	// falls earlier.
	p.endTick = int64(1) << p.timeBits
	if capTicks := (maxExpiresMs - p.epochMs + p.unitMs - 1) / p.unitMs; capTicks < p.endTick {
		p.endTick = capTicks
	}
	return p, nil
}

// field returns the first field of kind k, and whether there is one.
func (l Layout) field(k FieldKind) (Field, bool) {
	for _, f := range l.Fields {
		if f.Kind == k {
			return f, true
		}
	}
	return Field{}, false
}

// maxField returns the largest value a field of kind k can hold, or 0
// when the layout has no such field (or its width is out of range).
func (l Layout) maxField(k FieldKind) int64 {
	f, ok := l.field(k)
	if !ok || f.Bits < 1 || f.Bits > 62 {
		return 0
	}
	return maxOf(uint(f.Bits))
}

// MaxWorker returns the largest worker ID the layout can hold (inclusive),
// or 0 when it has no worker field.
func (l Layout) MaxWorker() int64 { return l.maxField(KindWorker) }

// MaxDatacenter returns the largest datacenter ID the layout can hold
// (inclusive), or 0 when it has no datacenter field.
func (l Layout) MaxDatacenter() int64 { return l.maxField(KindDatacenter) }

// MaxSequence returns the largest sequence number (inclusive), or 0 when
// the layout has no sequence field.
func (l Layout) MaxSequence() int64 { return l.maxField(KindSequence) }

// PerTick returns how many IDs one generator can issue per tick (Unit):
// the number of sequence values. It is 0 when the layout has no
// sequence field.
func (l Layout) PerTick() int64 {
	if _, ok := l.field(KindSequence); !ok {
		return 0
	}
	return l.MaxSequence() + 1
}

// CapPerSecond returns how many IDs one generator (one worker) can issue
// per second at most: PerTick ticks per second. The twitter preset's cap
// is 4,096,000 per second.
func (l Layout) CapPerSecond() float64 {
	if l.Unit <= 0 {
		return 0
	}
	return float64(l.PerTick()) * float64(time.Second) / float64(l.Unit)
}

// Expires returns Epoch + 2^timeBits × Unit, the first instant the time
// field cannot represent, in UTC. A generator refuses to issue from then
// on. Instants past the year 9999 are capped at 10000-01-01T00:00:00Z.
// Expires returns the zero Time when the layout has no valid time field
// or unit.
func (l Layout) Expires() time.Time {
	f, ok := l.field(KindTime)
	unitMs := l.Unit.Milliseconds()
	if !ok || f.Bits < 1 || f.Bits > 62 || unitMs <= 0 || l.Unit%time.Millisecond != 0 {
		return time.Time{}
	}
	if !l.Epoch.Before(time.UnixMilli(maxExpiresMs)) {
		return time.UnixMilli(maxExpiresMs).UTC()
	}
	epochMs := l.Epoch.UnixMilli()
	ticks := int64(1) << uint(f.Bits)
	if ticks > (maxExpiresMs-epochMs)/unitMs {
		return time.UnixMilli(maxExpiresMs).UTC()
	}
	return time.UnixMilli(epochMs + ticks*unitMs).UTC()
}

// Equal reports whether l and m describe the same IDs: the same unit,
// epoch (as an instant) and fields in the same order, a field that only
// names the sign bit left out. Name is ignored.
func (l Layout) Equal(m Layout) bool {
	l, m = l.bare(), m.bare()
	if l.Unit != m.Unit || !l.Epoch.Equal(m.Epoch) || len(l.Fields) != len(m.Fields) {
		return false
	}
	for i := range l.Fields {
		if l.Fields[i] != m.Fields[i] {
			return false
		}
	}
	return true
}

// bare returns l without a first field that names the sign bit (see
// Layout): the same IDs, written over 63 bits.
func (l Layout) bare() Layout {
	sum := 0
	for _, f := range l.Fields {
		sum += f.Bits
	}
	if f := l.Fields; sum == 64 && f[0].Kind == KindFixed && f[0].Bits == 1 && f[0].Value == 0 {
		l.Fields = f[1:]
	}
	return l
}

// Canonical returns the spec of the IDs l describes: String, less a field
// that only names the sign bit, so that layouts Equal to each other have
// one Canonical form (Vesta's presets spelt with or without their version
// bit). It is what the guard against layout changes records.
func (l Layout) Canonical() string { return l.bare().String() }

// String returns the layout in the spec form ParseLayout accepts, e.g.
// "time:41,datacenter:5,worker:5,sequence:12,unit=1ms,epoch=1288834974657".
// The epoch is written in RFC 3339 when it is a whole second and in Unix
// milliseconds otherwise. ParseLayout(l.String()) returns a layout Equal
// to l for every valid l.
func (l Layout) String() string {
	var b strings.Builder
	for _, f := range l.Fields {
		b.WriteString(f.String())
		b.WriteByte(',')
	}
	b.WriteString("unit=")
	b.WriteString(l.Unit.String())
	b.WriteString(",epoch=")
	b.WriteString(formatEpoch(l.Epoch))
	return b.String()
}

func formatEpoch(t time.Time) string {
	t = t.UTC()
	switch {
	case t.Nanosecond() == 0:
		return t.Format(time.RFC3339)
	case t.Nanosecond()%int(time.Millisecond) == 0:
		return strconv.FormatInt(t.UnixMilli(), 10)
	default:
		return t.Format(time.RFC3339Nano)
	}
}
