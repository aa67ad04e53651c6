package compat

import (
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/snowflake"
)

// vestaID is Vesta's Id bean as its REST server writes it (properties in
// alphabetical order). version is Vesta's top bit, the sign bit of
// idforge's IDs: always 0 here.
type vestaID struct {
	GenMethod int64 `json:"genMethod"`
	Machine   int64 `json:"machine"`
	Seq       int64 `json:"seq"`
	Time      int64 `json:"time"`
	Type      int64 `json:"type"`
	Version   int64 `json:"version"`
}

// Names of the fixed fields Vesta's genMethod, type and version map to.
const (
	fixedMethod  = "method"
	fixedType    = "type"
	fixedVersion = "version"
)

// javaDateLayout is java.util.Date.toString's "EEE MMM dd HH:mm:ss zzz yyyy".
const javaDateLayout = "Mon Jan 02 15:04:05 MST 2006"

// vestaLayout describes the node's layout in Vesta's terms.
type vestaLayout struct {
	l          snowflake.Layout
	timeBits   int
	workerBits int
	dcBits     int
}

// layout returns the node's layout, or an error wrapping
// idforge.ErrUnavailable when the node runs no snowflake generator.
func (h *handler) layout() (vestaLayout, error) {
	g := h.iss.Snowflake()
	if g == nil {
		return vestaLayout{}, fmt.Errorf("%w: this node runs no snowflake generator", idforge.ErrUnavailable)
	}
	v := vestaLayout{l: g.Layout()}
	for _, f := range v.l.Fields {
		switch f.Kind {
		case snowflake.KindTime:
			v.timeBits = f.Bits
		case snowflake.KindWorker:
			v.workerBits = f.Bits
		case snowflake.KindDatacenter:
			v.dcBits = f.Bits
		}
	}
	return v, nil
}

// machine joins a datacenter and a worker ID into Vesta's machine ID.
func (v vestaLayout) machine(datacenter, worker int64) int64 {
	return datacenter<<v.workerBits | worker
}

// split divides Vesta's machine ID into datacenter and worker, or refuses
// one the layout cannot hold.
func (v vestaLayout) split(machine int64) (datacenter, worker int64, err error) {
	if machine < 0 || v.workerBits+v.dcBits < 63 && machine >= int64(1)<<(v.workerBits+v.dcBits) {
		return 0, 0, fmt.Errorf("%w: machine %d out of range 0..%d for layout %s", idforge.ErrInvalidArgument, machine, int64(1)<<(v.workerBits+v.dcBits)-1, v.l)
	}
	return machine >> v.workerBits, machine & (int64(1)<<v.workerBits - 1), nil
}

// fixed returns the value of the layout's fixed field name, 0 without one.
func (v vestaLayout) fixed(name string) (int64, bool) {
	for _, f := range v.l.Fields {
		if f.Kind == snowflake.KindFixed && f.Name == name {
			return f.Value, true
		}
	}
	return 0, false
}

// timeOf returns the start of the tick ticks of the time field, or an
// error for a value the field cannot hold or a time past the layout's end.
func (v vestaLayout) timeOf(ticks int64) (time.Time, error) {
	unitMs := v.l.Unit.Milliseconds()
	epochMs := v.l.Epoch.UnixMilli()
	if ticks < 0 || v.timeBits < 63 && ticks >= int64(1)<<v.timeBits || unitMs <= 0 || ticks > (math.MaxInt64-epochMs)/unitMs {
		return time.Time{}, fmt.Errorf("%w: time %d out of range 0..%d for layout %s", idforge.ErrInvalidArgument, ticks, int64(1)<<v.timeBits-1, v.l)
	}
	t := time.UnixMilli(epochMs + ticks*unitMs)
	if exp := v.l.Expires(); !t.Before(exp) {
		return time.Time{}, fmt.Errorf("%w: time %d is at or after the layout's end %s", idforge.ErrInvalidArgument, ticks, exp.Format(time.RFC3339))
	}
	return t, nil
}

// intParam reads a decimal int64 parameter given at most once.
func intParam(q url.Values, name string) (v int64, present bool, err error) {
	vals, ok := q[name]
	if !ok {
		return 0, false, nil
	}
	if len(vals) != 1 {
		return 0, true, fmt.Errorf("%w: %s given %d times", idforge.ErrInvalidArgument, name, len(vals))
	}
	v, err = strconv.ParseInt(vals[0], 10, 64)
	if err != nil {
		return 0, true, fmt.Errorf("%w: %s %q is not a 64-bit decimal number", idforge.ErrInvalidArgument, name, vals[0])
	}
	return v, true, nil
}

// requiredInt reads a parameter that must be given.
func requiredInt(q url.Values, name string) (int64, error) {
	v, present, err := intParam(q, name)
	if err == nil && !present {
		err = fmt.Errorf("%w: %s is required", idforge.ErrInvalidArgument, name)
	}
	return v, err
}

// vestaRequest reads what every Vesta call that takes fields starts with,
// in this order: the node's layout, the parameters, and the required
// decimal parameter name.
func (h *handler) vestaRequest(w http.ResponseWriter, r *http.Request, name string) (vestaLayout, url.Values, int64, error) {
	v, err := h.layout()
	if err != nil {
		return v, nil, 0, err
	}
	q, err := params(w, r)
	if err != nil {
		return v, nil, 0, err
	}
	n, err := requiredInt(q, name)
	return v, q, n, err
}

// vestaGenID serves /genid: an ID of the node's generator, plain text.
func (h *handler) vestaGenID(w http.ResponseWriter, r *http.Request) {
	ctx := h.withTimeout(r)
	defer ctx.Release()
	id, err := h.iss.NextSnowflake(ctx, "")
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeText(w, strconv.FormatInt(id, 10))
}

// vestaExpID serves /expid?id=: the ID's fields in Vesta's JSON.
func (h *handler) vestaExpID(w http.ResponseWriter, r *http.Request) {
	v, _, id, err := h.vestaRequest(w, r, "id")
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	p, err := v.l.Explain(id)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, vestaID{
		GenMethod: p.Fixed[fixedMethod],
		Machine:   v.machine(p.Datacenter, p.Worker),
		Seq:       p.Sequence,
		Time:      p.Ticks,
		Type:      p.Fixed[fixedType],
		Version:   p.Fixed[fixedVersion],
	})
}

// vestaTransTime serves /transtime?time=: the start of that tick of the
// time field, as Java's Date.toString writes it.
func (h *handler) vestaTransTime(w http.ResponseWriter, r *http.Request) {
	v, _, ticks, err := h.vestaRequest(w, r, "time")
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	t, err := v.timeOf(ticks)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeText(w, t.In(h.loc).Format(javaDateLayout))
}

// vestaMakeID serves /makeid: the ID of the given fields.
func (h *handler) vestaMakeID(w http.ResponseWriter, r *http.Request) {
	id, err := h.makeID(w, r)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeText(w, strconv.FormatInt(id, 10))
}

func (h *handler) makeID(w http.ResponseWriter, r *http.Request) (int64, error) {
	v, q, ticks, err := h.vestaRequest(w, r, "time")
	if err != nil {
		return 0, err
	}
	seq, err := requiredInt(q, "seq")
	if err != nil {
		return 0, err
	}
	t, err := v.timeOf(ticks)
	if err != nil {
		return 0, err
	}
	parts := snowflake.Parts{Time: t, Sequence: seq}

	g := h.iss.Snowflake()
	parts.Datacenter, parts.Worker = g.Datacenter(), g.Worker()
	if m, present, err := intParam(q, "machine"); err != nil {
		return 0, err
	} else if present {
		if parts.Datacenter, parts.Worker, err = v.split(m); err != nil {
			return 0, err
		}
	}

	// genMethod (Vesta's REST server also documents it as genmethod),
	// type and version must be the layout's fixed values (0 for a field
	// the layout lacks).
	for _, c := range []struct{ param, field string }{
		{"genMethod", fixedMethod}, {"genmethod", fixedMethod}, {"type", fixedType}, {"version", fixedVersion},
	} {
		val, present, err := intParam(q, c.param)
		if err != nil {
			return 0, err
		}
		if !present {
			continue
		}
		want, has := v.fixed(c.field)
		switch {
		case val == want:
		case !has:
			return 0, fmt.Errorf("%w: %s %d, but layout %s has no %q field (only 0 is accepted)", idforge.ErrInvalidArgument, c.param, val, v.l, c.field)
		default:
			return 0, fmt.Errorf("%w: %s is %d in this node's layout %s, not %d", idforge.ErrInvalidArgument, c.param, want, v.l, val)
		}
	}
	return v.l.Make(parts)
}
