package snowflake

import (
	"fmt"
	"time"

	"github.com/idforge/idforge"
)

// Parts are the decoded fields of an ID.
type Parts struct {
	// Time is the start of the ID's tick, in UTC.
	Time time.Time
	// Ticks is the raw value of the time field: Units since the Epoch.
	Ticks int64
	// Datacenter is the datacenter ID, 0 when the layout has none.
	Datacenter int64
	// Worker is the worker ID, 0 when the layout has none.
	Worker int64
	// Sequence is the sequence number within the tick.
	Sequence int64
	// Fixed holds the fixed fields by name; nil when the layout has none.
	Fixed map[string]int64
}

func argErr(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{idforge.ErrInvalidArgument}, args...)...)
}

// tickStart returns the start of tick in UTC. tick must be below endTick.
func (p *plan) tickStart(tick int64) time.Time {
	return time.UnixMilli(p.epochMs + tick*p.unitMs).UTC()
}

// Explain decodes id into its fields. It returns an error wrapping
// idforge.ErrInvalidArgument when id is negative or a fixed field does not
// hold the layout's value (the ID was not made with this layout), and one
// wrapping idforge.ErrInvalidLayout when l is not valid.
func (l Layout) Explain(id int64) (Parts, error) {
	p, err := l.plan()
	if err != nil {
		return Parts{}, err
	}
	if id < 0 {
		if p.top == 64 {
			return Parts{}, argErr("ID %d is negative: its sign bit, fixed field %q, is 1 and the layout says 0 (a Vesta ID of version 1, which idforge does not issue)", id, l.Fields[0].Name)
		}
		return Parts{}, argErr("ID %d is negative", id)
	}
	var parts Parts
	shift := p.top
	for _, f := range l.Fields {
		bits := uint(f.Bits)
		shift -= bits
		v := id >> shift & maxOf(bits)
		switch f.Kind {
		case KindTime:
			parts.Ticks = v
		case KindDatacenter:
			parts.Datacenter = v
		case KindWorker:
			parts.Worker = v
		case KindSequence:
			parts.Sequence = v
		case KindFixed:
			if v != f.Value {
				return Parts{}, argErr("ID %d has %d in fixed field %q, the layout says %d", id, v, f.Name, f.Value)
			}
			if parts.Fixed == nil {
				parts.Fixed = make(map[string]int64)
			}
			parts.Fixed[f.Name] = v
		}
	}
	if parts.Ticks >= p.endTick {
		return Parts{}, argErr("ID %d has time %d, past the layout's end %s", id, parts.Ticks, l.Expires().Format(time.RFC3339))
	}
	parts.Time = p.tickStart(parts.Ticks)
	return parts, nil
}

// Make builds the ID of the given fields (Vesta's makeId: forge an ID for
// a given time, e.g. to query a range of IDs). It uses parts.Time, floored
// to its tick, and ignores parts.Ticks. Fixed fields missing from
// parts.Fixed take the layout's value. It returns an error wrapping
// idforge.ErrInvalidArgument when the time is before Epoch or at or after
// Expires, when a field is negative or does not fit its bits, when the
// layout has no datacenter (worker) field but parts.Datacenter
// (parts.Worker) is not 0, or when parts.Fixed names an unknown fixed
// field or disagrees with its value; and one wrapping
// idforge.ErrInvalidLayout when l is not valid.
//
// Make(Explain(id)) returns id for every ID Explain accepts.
func (l Layout) Make(parts Parts) (int64, error) {
	p, err := l.plan()
	if err != nil {
		return 0, err
	}
	if parts.Time.Before(l.Epoch) {
		return 0, argErr("time %s is before the epoch %s", parts.Time.UTC().Format(time.RFC3339Nano), l.Epoch.UTC().Format(time.RFC3339Nano))
	}
	if exp := l.Expires(); !parts.Time.Before(exp) {
		return 0, argErr("time %s is at or after the layout's end %s", parts.Time.UTC().Format(time.RFC3339Nano), exp.Format(time.RFC3339Nano))
	}
	tick := (parts.Time.UnixMilli() - p.epochMs) / p.unitMs
	if err := checkField("datacenter", parts.Datacenter, p.dcBits); err != nil {
		return 0, err
	}
	if err := checkField("worker", parts.Worker, p.workerBits); err != nil {
		return 0, err
	}
	if err := checkField("sequence", parts.Sequence, p.seqBits); err != nil {
		return 0, err
	}
	for name, v := range parts.Fixed {
		f, ok := l.fixedField(name)
		if !ok {
			return 0, argErr("the layout has no fixed field %q", name)
		}
		if v != f.Value {
			return 0, argErr("fixed field %q is %d in this layout, not %d", name, f.Value, v)
		}
	}
	return p.fixed | tick<<p.timeShift | parts.Datacenter<<p.dcShift |
		parts.Worker<<p.workerShift | parts.Sequence<<p.seqShift, nil
}

func checkField(name string, v int64, bits uint) error {
	switch {
	case bits == 0 && v != 0:
		return argErr("%s %d given, but the layout has no %s field", name, v, name)
	case v < 0 || v > maxOf(bits):
		return argErr("%s %d out of range 0..%d", name, v, maxOf(bits))
	}
	return nil
}

func (l Layout) fixedField(name string) (Field, bool) {
	for _, f := range l.Fields {
		if f.Kind == KindFixed && f.Name == name {
			return f, true
		}
	}
	return Field{}, false
}
