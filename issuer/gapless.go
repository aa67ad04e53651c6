package issuer

import (
	"context"
	"fmt"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/serial"
)

// gaplessStore returns the store's gap-free serials, or an error wrapping
// idforge.ErrInvalidArgument that says why this store cannot keep them.
func (i *Issuer) gaplessStore(name string) (idforge.GaplessStore, error) {
	if gs, ok := i.store.(idforge.GaplessStore); ok {
		return gs, nil
	}
	return nil, fmt.Errorf("%w: serial %q: gapless needs a SQL store (mysql, postgres or sqlite), which takes each number "+
		"in the transaction that records it; this store (%T) can lose a number it handed out, or hand it out twice",
		idforge.ErrInvalidArgument, name, i.store)
}

// gaplessResolver is what a gap-free serial's template draws from: its
// one seq expression shows the number the store reserved (reserved).
type gaplessResolver struct{ draws *[]string }

func (r gaplessResolver) Resolve(_ context.Context, name string) (serial.Source, error) {
	*r.draws = append(*r.draws, name)
	return serial.Source{Generator: reserved{}}, nil
}

// reserved is the Generator of a gap-free serial's seq: the number in
// the context, which Reserve puts there.
type reserved struct{}

type reservedKey struct{}

func (reserved) Next(ctx context.Context) (int64, error) {
	if n, ok := ctx.Value(reservedKey{}).(int64); ok {
		return n, nil
	}
	return 0, fmt.Errorf("%w: a gapless serial's number is reserved, not drawn", idforge.ErrWrongStrategy)
}

// gaplessSerial returns a gap-free serial's definition and template; an
// error wrapping idforge.ErrWrongStrategy when it is not gap-free.
func (i *Issuer) gaplessSerial(ctx context.Context, name string) (*serialEntry, idforge.GaplessStore, error) {
	e, err := i.template(ctx, name)
	if err != nil {
		return nil, nil, err
	}
	if !e.def.Gapless {
		return nil, nil, fmt.Errorf("%w: serial %q is not gapless: issue it with GET /v1/serials/%s", idforge.ErrWrongStrategy, name, name)
	}
	gs, err := i.gaplessStore(name)
	return e, gs, err
}

func (i *Issuer) now() interface{ Now() time.Time } {
	if i.set.Clock != nil {
		return i.set.Clock
	}
	return idforge.SystemClock
}

// Reserve reserves the next number of a gap-free serial, rendered with
// params, until the serial's expiry (see idforge.GaplessStore).
func (i *Issuer) Reserve(ctx context.Context, name string, params map[string]string) (idforge.Reservation, error) {
	e, gs, err := i.gaplessSerial(ctx, name)
	if err == nil {
		err = checkParams(name, e.tmpl, params)
	}
	if err != nil {
		return idforge.Reservation{}, err
	}
	r, err := gs.Reserve(ctx, e.def, i.now().Now(), func(n int64) (string, error) {
		return e.tmpl.Next(context.WithValue(ctx, reservedKey{}, n), params)
	})
	return r, storeErr(err)
}

// Commit commits a reservation of a gap-free serial: its number is used.
func (i *Issuer) Commit(ctx context.Context, name, id string) (idforge.Reservation, error) {
	e, gs, err := i.gaplessSerial(ctx, name)
	if err != nil {
		return idforge.Reservation{}, err
	}
	r, err := gs.Commit(ctx, e.def, id, i.now().Now())
	return r, storeErr(err)
}

// Void voids a reservation of a gap-free serial, saying why.
func (i *Issuer) Void(ctx context.Context, name, id, reason string) (idforge.Reservation, error) {
	e, gs, err := i.gaplessSerial(ctx, name)
	if err == nil && (reason == "" || len(reason) > 256 || reason == idforge.ReasonExpired) {
		err = fmt.Errorf("%w: serial %q: a void needs a reason of 1 to 256 bytes other than %q", idforge.ErrInvalidArgument, name, idforge.ReasonExpired)
	}
	if err != nil {
		return idforge.Reservation{}, err
	}
	r, err := gs.Void(ctx, e.def, id, reason, i.now().Now())
	return r, storeErr(err)
}

// Audit lists the numbers from..to of a gap-free serial (at most
// idforge.MaxAudit; to 0 means up to the last handed out), with the last
// number handed out.
func (i *Issuer) Audit(ctx context.Context, name string, from, to int64) ([]idforge.Reservation, int64, error) {
	e, gs, err := i.gaplessSerial(ctx, name)
	if err == nil && (from < 1 || to != 0 && to < from) {
		err = fmt.Errorf("%w: serial %q: audit from %d to %d (want 1 <= from <= to)", idforge.ErrInvalidArgument, name, from, to)
	}
	if err != nil {
		return nil, 0, err
	}
	if to == 0 || to-from >= idforge.MaxAudit {
		to = from + idforge.MaxAudit - 1
	}
	rs, last, err := gs.Audit(ctx, e.def, from, to, i.now().Now())
	return rs, last, storeErr(err)
}
