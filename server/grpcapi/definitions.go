package grpcapi

import (
	"context"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/idforge/idforge"
	idforgev1 "github.com/idforge/idforge/api/idforge/v1"
	"github.com/idforge/idforge/issuer"
)

// CreateSource defines a source kept in the store (POST /v1/sources).
func (s *Server) CreateSource(ctx context.Context, req *idforgev1.DefineRequest) (*idforgev1.Definition, error) {
	return s.define(ctx, "CreateSource", issuer.KindSource, req)
}

// GetSource returns one source (GET /v1/sources/{name}).
func (s *Server) GetSource(ctx context.Context, req *idforgev1.DefinitionName) (*idforgev1.Definition, error) {
	return s.defined(ctx, "GetSource", issuer.KindSource, req.GetName(), false)
}

// ListSources returns every source (GET /v1/sources).
func (s *Server) ListSources(ctx context.Context, _ *idforgev1.ListDefinitionsRequest) (*idforgev1.ListDefinitionsResponse, error) {
	return s.listDefined(ctx, "ListSources", issuer.KindSource)
}

// RetireSource retires a source defined through the API
// (DELETE /v1/sources/{name}).
func (s *Server) RetireSource(ctx context.Context, req *idforgev1.DefinitionName) (*idforgev1.Definition, error) {
	return s.defined(ctx, "RetireSource", issuer.KindSource, req.GetName(), true)
}

// CreateCounter defines a counter kept in the store (POST /v1/counters).
func (s *Server) CreateCounter(ctx context.Context, req *idforgev1.DefineRequest) (*idforgev1.Definition, error) {
	return s.define(ctx, "CreateCounter", issuer.KindCounter, req)
}

// GetCounter returns one counter (GET /v1/counters/{name}).
func (s *Server) GetCounter(ctx context.Context, req *idforgev1.DefinitionName) (*idforgev1.Definition, error) {
	return s.defined(ctx, "GetCounter", issuer.KindCounter, req.GetName(), false)
}

// ListCounters returns every counter (GET /v1/counters).
func (s *Server) ListCounters(ctx context.Context, _ *idforgev1.ListDefinitionsRequest) (*idforgev1.ListDefinitionsResponse, error) {
	return s.listDefined(ctx, "ListCounters", issuer.KindCounter)
}

// RetireCounter retires a counter defined through the API
// (DELETE /v1/counters/{name}).
func (s *Server) RetireCounter(ctx context.Context, req *idforgev1.DefinitionName) (*idforgev1.Definition, error) {
	return s.defined(ctx, "RetireCounter", issuer.KindCounter, req.GetName(), true)
}

func (s *Server) define(ctx context.Context, method, kind string, req *idforgev1.DefineRequest) (*idforgev1.Definition, error) {
	ctx, cancel := s.withTimeout(ctx)
	defer cancel()
	d := idforge.Definition{Kind: kind, Name: req.GetName(), Spec: req.GetSpec(), Description: req.GetDescription()}
	if err := s.iss.Define(ctx, d); err != nil {
		return nil, s.toStatus(method, err)
	}
	got, err := s.iss.Defined(ctx, kind, d.Name)
	if err != nil {
		return nil, s.toStatus(method, err)
	}
	return toDefinition(got), nil
}

// defined returns one definition, retiring it first when retire is set.
func (s *Server) defined(ctx context.Context, method, kind, name string, retire bool) (*idforgev1.Definition, error) {
	ctx, cancel := s.withTimeout(ctx)
	defer cancel()
	if retire {
		if err := s.iss.Retire(ctx, kind, name); err != nil {
			return nil, s.toStatus(method, err)
		}
	}
	d, err := s.iss.Defined(ctx, kind, name)
	if err != nil {
		return nil, s.toStatus(method, err)
	}
	return toDefinition(d), nil
}

func (s *Server) listDefined(ctx context.Context, method, kind string) (*idforgev1.ListDefinitionsResponse, error) {
	ctx, cancel := s.withTimeout(ctx)
	defer cancel()
	defs, err := s.iss.ListDefined(ctx, kind)
	if err != nil {
		return nil, s.toStatus(method, err)
	}
	resp := &idforgev1.ListDefinitionsResponse{Definitions: make([]*idforgev1.Definition, len(defs))}
	for i, d := range defs {
		resp.Definitions[i] = toDefinition(d)
	}
	return resp, nil
}

func toDefinition(d issuer.Defined) *idforgev1.Definition {
	out := &idforgev1.Definition{Name: d.Name, Kind: d.Kind, Spec: d.Spec, Description: d.Description,
		Origin: d.Origin, Retired: d.Retired}
	if !d.Updated.IsZero() {
		out.Updated = timestamppb.New(d.Updated)
	}
	return out
}
