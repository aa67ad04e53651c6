package grpcapi

import (
	"context"

	"github.com/idforge/idforge"
	idforgev1 "github.com/idforge/idforge/api/idforge/v1"
)

// Reserve takes the next number of a gapless serial (issuer.Reserve).
func (s *Server) Reserve(ctx context.Context, req *idforgev1.ReserveRequest) (*idforgev1.Reservation, error) {
	return call(s, ctx, "Reserve", func(ctx context.Context) (idforge.Reservation, error) {
		return s.iss.Reserve(ctx, req.GetName(), req.GetParams())
	}, toReservation)
}

// Commit commits a gapless serial's reservation (issuer.Commit).
func (s *Server) Commit(ctx context.Context, req *idforgev1.EndRequest) (*idforgev1.Reservation, error) {
	return call(s, ctx, "Commit", func(ctx context.Context) (idforge.Reservation, error) {
		return s.iss.Commit(ctx, req.GetName(), req.GetReservation())
	}, toReservation)
}

// Void voids a gapless serial's reservation with a reason (issuer.Void).
func (s *Server) Void(ctx context.Context, req *idforgev1.EndRequest) (*idforgev1.Reservation, error) {
	return call(s, ctx, "Void", func(ctx context.Context) (idforge.Reservation, error) {
		return s.iss.Void(ctx, req.GetName(), req.GetReservation(), req.GetReason())
	}, toReservation)
}

// Audit lists a gapless serial's numbers (issuer.Audit).
func (s *Server) Audit(ctx context.Context, req *idforgev1.AuditRequest) (*idforgev1.AuditResponse, error) {
	type audit struct {
		rs   []idforge.Reservation
		last int64
	}
	return call(s, ctx, "Audit", func(ctx context.Context) (a audit, err error) {
		a.rs, a.last, err = s.iss.Audit(ctx, req.GetName(), max(req.GetFrom(), 1), req.GetTo())
		return a, err
	}, func(a audit) *idforgev1.AuditResponse {
		out := &idforgev1.AuditResponse{Last: a.last, Numbers: make([]*idforgev1.Reservation, len(a.rs))}
		for i, r := range a.rs {
			out.Numbers[i] = toReservation(r)
		}
		return out
	})
}

func toReservation(r idforge.Reservation) *idforgev1.Reservation {
	return &idforgev1.Reservation{Reservation: r.ID, Number: r.Number, Value: r.Value, State: r.State, Reason: r.Reason,
		ReservedUnixMs: r.Reserved.UnixMilli(), ExpiresUnixMs: r.Expires.UnixMilli(), UpdatedUnixMs: r.Updated.UnixMilli()}
}
