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
	return call(s, ctx, method, func(ctx context.Context) (issuer.Defined, error) {
		d := idforge.Definition{Kind: kind, Name: req.GetName(), Spec: req.GetSpec(), Description: req.GetDescription()}
		if err := s.iss.Define(ctx, d); err != nil {
			return issuer.Defined{}, err
		}
		return s.iss.Defined(ctx, kind, d.Name)
	}, toDefinition)
}

// defined returns one definition, retiring it first when retire is set.
func (s *Server) defined(ctx context.Context, method, kind, name string, retire bool) (*idforgev1.Definition, error) {
	return call(s, ctx, method, func(ctx context.Context) (issuer.Defined, error) {
		if retire {
			if err := s.iss.Retire(ctx, kind, name); err != nil {
				return issuer.Defined{}, err
			}
		}
		return s.iss.Defined(ctx, kind, name)
	}, toDefinition)
}

func (s *Server) listDefined(ctx context.Context, method, kind string) (*idforgev1.ListDefinitionsResponse, error) {
	return call(s, ctx, method, func(ctx context.Context) ([]issuer.Defined, error) {
		return s.iss.ListDefined(ctx, kind)
	}, listOf(toDefinition))
}

// listOf returns what shows a list of definitions of one kind, each as
// conv shows it.
func listOf[T any](conv func(T) *idforgev1.Definition) func([]T) *idforgev1.ListDefinitionsResponse {
	return func(list []T) *idforgev1.ListDefinitionsResponse {
		resp := &idforgev1.ListDefinitionsResponse{Definitions: make([]*idforgev1.Definition, len(list))}
		for i, d := range list {
			resp.Definitions[i] = conv(d)
		}
		return resp
	}
}

func toDefinition(d issuer.Defined) *idforgev1.Definition {
	out := &idforgev1.Definition{Name: d.Name, Kind: d.Kind, Spec: d.Spec, Description: d.Description,
		Origin: d.Origin, Retired: d.Retired}
	if !d.Updated.IsZero() {
		out.Updated = timestamppb.New(d.Updated)
	}
	return out
}
