package httpapi

import (
	"fmt"
	"net/http"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/quota"
)

// quotaManager returns the node's quotas, or a 404 when the handler was
// built without them.
func (h *handler) quotaManager() (*quota.Manager, error) {
	if h.qm == nil {
		return nil, fmt.Errorf("%w: this server keeps no quotas", idforge.ErrNoEndpoint)
	}
	return h.qm, nil
}

// quotas serves GET /v1/quotas (every quota, the config file's marked
// "origin": "file") and POST /v1/quotas (define one: a quota.Spec).
func (h *handler) quotas(c v1Call) (any, error) {
	m, err := h.quotaManager()
	if err != nil {
		return nil, err
	}
	if c.r.Method == http.MethodPost {
		var s quota.Spec
		if err := decodeJSON(c.w, c.r, &s); err != nil {
			return nil, err
		}
		s.Origin, s.Retired = idforge.OriginAPI, false
		return created{s.Redacted()}, m.Define(c.ctx, s)
	}
	list, err := m.Quotas(c.ctx)
	if err != nil {
		return nil, err
	}
	shown := make([]quota.Spec, len(list))
	for i, q := range list {
		shown[i] = q.Redacted()
	}
	return map[string]any{"quotas": shown}, nil
}

// quota serves GET /v1/quotas/{name} and DELETE (retire it: it refuses
// nothing more, and its name is never defined again).
func (h *handler) quota(c v1Call) (any, error) {
	m, err := h.quotaManager()
	if err != nil {
		return nil, err
	}
	name := c.r.PathValue("name")
	if err := idforge.ValidateKeyName(name); err != nil {
		return nil, err
	}
	if c.r.Method == http.MethodDelete {
		if err := m.Retire(c.ctx, name); err != nil {
			return nil, err
		}
	}
	q, err := m.Quota(c.ctx, name)
	return q.Redacted(), err
}
