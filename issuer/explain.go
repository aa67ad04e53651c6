package issuer

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/sequence"
)

// ExplainPacked decodes id, a number of the date-packed source d (a
// KindSource definition, as Defined returns it), into the period it was
// counted in and its count. Every surface's explain of a date-packed
// number reads it. A source that is not date-packed, and a number that is
// not one of its, are errors wrapping idforge.ErrInvalidArgument.
func ExplainPacked(d Defined, id int64) (idforge.Unpacked, error) {
	var spec struct {
		DatePacked string `json:"date_packed"`
		Bits       int    `json:"bits"`
	}
	if json.Unmarshal([]byte(d.Spec), &spec); spec.DatePacked == "" {
		return idforge.Unpacked{}, fmt.Errorf("%w: source %q is not date-packed; explain decodes date-packed numbers and snowflake IDs", idforge.ErrInvalidArgument, d.Name)
	}
	k, err := sequence.ParsePacking(spec.DatePacked, spec.Bits)
	if err != nil {
		return idforge.Unpacked{}, err
	}
	start, n, err := k.Unpack(id)
	if err != nil {
		return idforge.Unpacked{}, err
	}
	return idforge.Unpacked{ID: id, Source: d.Name, Time: start, Period: k.Period.String(), Zone: k.Location.String(), Count: n, Bits: k.Bits}, nil
}

// ExplainPacked decodes id, a number of the date-packed source named
// source (of the configuration or the API): see the function
// ExplainPacked. An unknown source is an error wrapping
// idforge.ErrUnknownKey.
func (i *Issuer) ExplainPacked(ctx context.Context, source string, id int64) (idforge.Unpacked, error) {
	d, err := i.Defined(ctx, KindSource, source)
	if err != nil {
		return idforge.Unpacked{}, err
	}
	return ExplainPacked(d, id)
}
