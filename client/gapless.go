package client

import (
	"context"
	"net/url"
	"strconv"
	"time"

	"github.com/idforge/idforge"
	idforgev1 "github.com/idforge/idforge/api/idforge/v1"
	"github.com/idforge/idforge/internal/httpwire"
)

// A gapless serial's calls fail over as the others do. A reservation
// whose answer was lost stays reserved until it expires (the audit shows
// it voided as expired, or reused); a commit whose answer was lost and
// that is retried answers idforge.ErrAlreadyCommitted: the number is
// committed.

func (r *remote) Reserve(ctx context.Context, name string, params map[string]string) (idforge.Reservation, error) {
	return call(ctx, r, func(ctx context.Context, c conn) (idforge.Reservation, error) { return c.reserve(ctx, name, params) })
}

func (r *remote) Commit(ctx context.Context, name, id string) (idforge.Reservation, error) {
	return call(ctx, r, func(ctx context.Context, c conn) (idforge.Reservation, error) {
		return c.end(ctx, name, "commit", id, "")
	})
}

func (r *remote) Void(ctx context.Context, name, id, reason string) (idforge.Reservation, error) {
	return call(ctx, r, func(ctx context.Context, c conn) (idforge.Reservation, error) {
		return c.end(ctx, name, "void", id, reason)
	})
}

func (r *remote) Audit(ctx context.Context, name string, from, to int64) ([]idforge.Reservation, int64, error) {
	a, err := call(ctx, r, func(ctx context.Context, c conn) (httpwire.Audit, error) { return c.audit(ctx, name, from, to) })
	out := make([]idforge.Reservation, len(a.Numbers))
	for i, w := range a.Numbers {
		out[i] = w.Go()
	}
	return out, a.Last, err
}

func (h *httpConn) reserve(ctx context.Context, name string, params map[string]string) (idforge.Reservation, error) {
	q := make(url.Values, len(params))
	for k, v := range params {
		q.Set(httpwire.SerialParamPrefix+k, v)
	}
	var a httpwire.Reservation
	err := h.send(ctx, "POST", "/v1/serials/"+url.PathEscape(name)+"/reserve?"+q.Encode(), nil, &a)
	return a.Go(), err
}

func (h *httpConn) end(ctx context.Context, name, step, id, reason string) (idforge.Reservation, error) {
	var a httpwire.Reservation
	err := h.send(ctx, "POST", "/v1/serials/"+url.PathEscape(name)+"/"+step, httpwire.End{Reservation: id, Reason: reason}, &a)
	return a.Go(), err
}

func (h *httpConn) audit(ctx context.Context, name string, from, to int64) (httpwire.Audit, error) {
	var a httpwire.Audit
	q := url.Values{"from": {strconv.FormatInt(max(from, 1), 10)}}
	if to != 0 {
		q.Set("to", strconv.FormatInt(to, 10))
	}
	err := h.get(ctx, "/v1/serials/"+url.PathEscape(name)+"/audit?"+q.Encode(), &a)
	return a, err
}

func (g *grpcConn) reserve(ctx context.Context, name string, params map[string]string) (idforge.Reservation, error) {
	r, err := g.api.Reserve(ctx, &idforgev1.ReserveRequest{Name: name, Params: params})
	return fromReservation(r), g.errOrNil(err)
}

func (g *grpcConn) end(ctx context.Context, name, step, id, reason string) (idforge.Reservation, error) {
	rpc := g.api.Commit
	if step == "void" {
		rpc = g.api.Void
	}
	r, err := rpc(ctx, &idforgev1.EndRequest{Name: name, Reservation: id, Reason: reason})
	return fromReservation(r), g.errOrNil(err)
}

func (g *grpcConn) audit(ctx context.Context, name string, from, to int64) (httpwire.Audit, error) {
	r, err := g.api.Audit(ctx, &idforgev1.AuditRequest{Name: name, From: from, To: to})
	a := httpwire.Audit{Serial: name, Last: r.GetLast()}
	for _, n := range r.GetNumbers() {
		a.Numbers = append(a.Numbers, httpwire.NewReservation(fromReservation(n)))
	}
	return a, g.errOrNil(err)
}

func (g *grpcConn) errOrNil(err error) error {
	if err == nil {
		return nil
	}
	return g.errorOf(err)
}

func fromReservation(r *idforgev1.Reservation) idforge.Reservation {
	if r == nil {
		return idforge.Reservation{}
	}
	ms := func(v int64) time.Time { return time.UnixMilli(v).UTC() }
	return idforge.Reservation{ID: r.GetReservation(), Number: r.GetNumber(), Value: r.GetValue(), State: r.GetState(),
		Reason: r.GetReason(), Reserved: ms(r.GetReservedUnixMs()), Expires: ms(r.GetExpiresUnixMs()), Updated: ms(r.GetUpdatedUnixMs())}
}

func (e *embedded) Reserve(ctx context.Context, name string, params map[string]string) (idforge.Reservation, error) {
	if e.closed.Load() {
		return idforge.Reservation{}, errClosed
	}
	return e.iss.Reserve(ctx, name, params)
}

func (e *embedded) Commit(ctx context.Context, name, id string) (idforge.Reservation, error) {
	if e.closed.Load() {
		return idforge.Reservation{}, errClosed
	}
	return e.iss.Commit(ctx, name, id)
}

func (e *embedded) Void(ctx context.Context, name, id, reason string) (idforge.Reservation, error) {
	if e.closed.Load() {
		return idforge.Reservation{}, errClosed
	}
	return e.iss.Void(ctx, name, id, reason)
}

func (e *embedded) Audit(ctx context.Context, name string, from, to int64) ([]idforge.Reservation, int64, error) {
	if e.closed.Load() {
		return nil, 0, errClosed
	}
	return e.iss.Audit(ctx, name, from, to)
}
