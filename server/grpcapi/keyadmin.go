package grpcapi

import (
	"context"

	"github.com/idforge/idforge"
	idforgev1 "github.com/idforge/idforge/api/idforge/v1"
)

// UpdateKey changes a key's step, description and own adaptive-step
// bounds (issuer.UpdateKey): what the request sets.
func (s *Server) UpdateKey(ctx context.Context, req *idforgev1.UpdateKeyRequest) (*idforgev1.Key, error) {
	ctx, cancel := s.withTimeout(ctx)
	defer cancel()
	k, err := s.iss.UpdateKey(ctx, req.GetKey(), idforge.KeyChange{
		Step: req.Step, Description: req.Description, MinStep: req.MinStep, MaxStep: req.MaxStep,
	})
	if err != nil {
		return nil, s.toStatus("UpdateKey", err)
	}
	return toKey(k), nil
}

// RetireKey retires a key (issuer.RetireKey) and returns it.
func (s *Server) RetireKey(ctx context.Context, req *idforgev1.RetireKeyRequest) (*idforgev1.Key, error) {
	ctx, cancel := s.withTimeout(ctx)
	defer cancel()
	if err := s.iss.RetireKey(ctx, req.GetKey()); err != nil {
		return nil, s.toStatus("RetireKey", err)
	}
	k, err := s.iss.Key(ctx, req.GetKey())
	if err != nil {
		return nil, s.toStatus("RetireKey", err)
	}
	return toKey(k), nil
}
