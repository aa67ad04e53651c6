package grpcapi

import (
	"context"
	"fmt"

	"github.com/idforge/idforge"
	idforgev1 "github.com/idforge/idforge/api/idforge/v1"
	"github.com/idforge/idforge/quota"
)

// CreateQuota defines a quota kept in the store (POST /v1/quotas).
func (s *Server) CreateQuota(ctx context.Context, req *idforgev1.DefineRequest) (*idforgev1.Definition, error) {
	return s.quotaCall(ctx, "CreateQuota", func(ctx context.Context, m *quota.Manager) (quota.Spec, error) {
		q, err := quota.FromRequest(req.GetName(), req.GetSpec(), req.GetDescription())
		if err != nil {
			return quota.Spec{}, err
		}
		if err := m.Define(ctx, q); err != nil {
			return quota.Spec{}, err
		}
		return m.Quota(ctx, q.Name)
	})
}

// GetQuota returns one quota, of the file or the API
// (GET /v1/quotas/{name}).
func (s *Server) GetQuota(ctx context.Context, req *idforgev1.DefinitionName) (*idforgev1.Definition, error) {
	return s.quotaCall(ctx, "GetQuota", func(ctx context.Context, m *quota.Manager) (quota.Spec, error) {
		if err := idforge.ValidateKeyName(req.GetName()); err != nil {
			return quota.Spec{}, err
		}
		return m.Quota(ctx, req.GetName())
	})
}

// RetireQuota retires a quota defined through the API: it refuses nothing
// more (DELETE /v1/quotas/{name}).
func (s *Server) RetireQuota(ctx context.Context, req *idforgev1.DefinitionName) (*idforgev1.Definition, error) {
	return s.quotaCall(ctx, "RetireQuota", func(ctx context.Context, m *quota.Manager) (quota.Spec, error) {
		if err := idforge.ValidateKeyName(req.GetName()); err != nil {
			return quota.Spec{}, err
		}
		if err := m.Retire(ctx, req.GetName()); err != nil {
			return quota.Spec{}, err
		}
		return m.Quota(ctx, req.GetName())
	})
}

// ListQuotas returns every quota, the file's and the API's, retired ones
// included (GET /v1/quotas).
func (s *Server) ListQuotas(ctx context.Context, _ *idforgev1.ListDefinitionsRequest) (*idforgev1.ListDefinitionsResponse, error) {
	return call(s, ctx, "ListQuotas", func(ctx context.Context) ([]quota.Spec, error) {
		m, err := s.quotaManager()
		if err != nil {
			return nil, err
		}
		return m.Quotas(ctx)
	}, listOf(toQuotaDefinition))
}

// quotaCall runs one call on a single quota as call does.
func (s *Server) quotaCall(ctx context.Context, method string, work func(context.Context, *quota.Manager) (quota.Spec, error)) (*idforgev1.Definition, error) {
	return call(s, ctx, method, func(ctx context.Context) (quota.Spec, error) {
		m, err := s.quotaManager()
		if err != nil {
			return quota.Spec{}, err
		}
		return work(ctx, m)
	}, toQuotaDefinition)
}

// quotaManager returns the node's quotas, or an error wrapping
// idforge.ErrNoEndpoint when the Server was built without them.
func (s *Server) quotaManager() (*quota.Manager, error) {
	if s.qm == nil {
		return nil, fmt.Errorf("%w: this server keeps no quotas", idforge.ErrNoEndpoint)
	}
	return s.qm, nil
}

// toQuotaDefinition shows a quota as a Definition, the password of its
// counter URL redacted.
func toQuotaDefinition(q quota.Spec) *idforgev1.Definition {
	q = q.Redacted()
	return &idforgev1.Definition{Name: q.Name, Kind: quota.Kind, Spec: q.RequestSpec(), Description: q.Description,
		Origin: q.Origin, Retired: q.Retired}
}
