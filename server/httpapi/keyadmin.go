package httpapi

import (
	"net/http"

	"github.com/idforge/idforge"
)

// keyRoute serves /v1/keys/{key}: GET shows the key, PATCH changes it,
// DELETE retires it. PATCH and DELETE need the admin right
// (auth.DefaultClassify).
func (h *handler) keyRoute(c v1Call) (any, error) {
	switch c.r.Method {
	case http.MethodPatch:
		return h.updateKey(c)
	case http.MethodDelete:
		return h.retireKey(c)
	}
	return h.key(c)
}

// updateKeyRequest is the body of PATCH /v1/keys/{key}: a field left out
// (or null) is left as it is; min_step or max_step 0 falls back to the
// node's bound; order is accepted only as the key's own (it is fixed at
// creation).
type updateKeyRequest struct {
	Step        *int64         `json:"step"`
	Description *string        `json:"description"`
	MinStep     *int64         `json:"min_step"`
	MaxStep     *int64         `json:"max_step"`
	Order       *idforge.Order `json:"order"`
}

// updateKey serves PATCH /v1/keys/{key}: the key as changed (issuer.UpdateKey).
func (h *handler) updateKey(c v1Call) (any, error) {
	var req updateKeyRequest
	if err := decodeJSON(c.w, c.r, &req); err != nil {
		return nil, err
	}
	k, err := h.iss.UpdateKey(c.ctx, c.r.PathValue("key"), idforge.KeyChange(req))
	return toKeyJSON(k), err
}

// retireKey serves DELETE /v1/keys/{key}: the key, retired
// (issuer.RetireKey). It stays listed, marked retired, so that its name
// and max_id stay visible.
func (h *handler) retireKey(c v1Call) (any, error) {
	name := c.r.PathValue("key")
	if err := h.iss.RetireKey(c.ctx, name); err != nil {
		return nil, err
	}
	return h.key(c)
}
