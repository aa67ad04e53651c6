package grpcapi

import (
	"context"

	"github.com/idforge/idforge"
	idforgev1 "github.com/idforge/idforge/api/idforge/v1"
	"github.com/idforge/idforge/issuer"
)

// UpdateKey changes a key's step, description and own adaptive-step
// bounds (issuer.UpdateKey): what the request sets. Its order can only
// be given as it is.
func (s *Server) UpdateKey(ctx context.Context, req *idforgev1.UpdateKeyRequest) (*idforgev1.Key, error) {
	return call(s, ctx, "UpdateKey", func(ctx context.Context) (issuer.KeyState, error) {
		c := idforge.KeyChange{Step: req.Step, Description: req.Description, MinStep: req.MinStep, MaxStep: req.MaxStep}
		if req.Order != nil {
			c.Order = (*idforge.Order)(req.Order)
		}
		return s.iss.UpdateKey(ctx, req.GetKey(), c)
	}, toKey)
}

// RetireKey retires a key (issuer.RetireKey) and returns it.
func (s *Server) RetireKey(ctx context.Context, req *idforgev1.RetireKeyRequest) (*idforgev1.Key, error) {
	return call(s, ctx, "RetireKey", func(ctx context.Context) (issuer.KeyState, error) {
		if err := s.iss.RetireKey(ctx, req.GetKey()); err != nil {
			return issuer.KeyState{}, err
		}
		return s.iss.Key(ctx, req.GetKey())
	}, toKey)
}
