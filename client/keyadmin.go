package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/idforge/idforge"
	idforgev1 "github.com/idforge/idforge/api/idforge/v1"
	"github.com/idforge/idforge/internal/httpwire"
)

// KeyAdmin is implemented by the clients New returns (with or without
// WithRangeCache): changes to keys, which need a token with the admin
// right on a server that checks tokens. An embedded client has none: a
// program that embeds idforge changes keys through its issuer.
type KeyAdmin interface {
	// UpdateKey changes a key's step, description and own adaptive-step
	// bounds (PATCH /v1/keys/{key}); never its max_id.
	UpdateKey(ctx context.Context, key string, c idforge.KeyChange) error
	// RetireKey retires a key (DELETE /v1/keys/{key}): it issues nothing
	// more, and its name is never created again. A client with
	// WithRangeCache drops the IDs it cached for the key.
	RetireKey(ctx context.Context, key string) error
}

var (
	_ KeyAdmin = (*remote)(nil)
	_ KeyAdmin = (*cached)(nil)
)

func (r *remote) UpdateKey(ctx context.Context, key string, c idforge.KeyChange) error {
	if err := idforge.ValidateKeyName(key); err != nil {
		return err
	}
	return r.do(ctx, func(ctx context.Context, cn conn) error { return cn.updateKey(ctx, key, c) })
}

func (r *remote) RetireKey(ctx context.Context, key string) error {
	if err := idforge.ValidateKeyName(key); err != nil {
		return err
	}
	return r.do(ctx, func(ctx context.Context, cn conn) error { return cn.retireKey(ctx, key) })
}

func (c *cached) UpdateKey(ctx context.Context, key string, ch idforge.KeyChange) error {
	return c.remote.UpdateKey(ctx, key, ch)
}

func (c *cached) RetireKey(ctx context.Context, key string) error {
	if err := c.remote.RetireKey(ctx, key); err != nil {
		return err
	}
	if kc, ok := (*c.keys.Load())[key]; ok {
		c.forget(key, kc)
	}
	return nil
}

// updateKeyBody is the body of PATCH /v1/keys/{key}.
type updateKeyBody struct {
	Step        *int64         `json:"step,omitempty"`
	Description *string        `json:"description,omitempty"`
	MinStep     *int64         `json:"min_step,omitempty"`
	MaxStep     *int64         `json:"max_step,omitempty"`
	Order       *idforge.Order `json:"order,omitempty"`
}

func (h *httpConn) updateKey(ctx context.Context, key string, c idforge.KeyChange) error {
	var a httpwire.Key
	return h.send(ctx, http.MethodPatch, "/v1/keys/"+url.PathEscape(key), updateKeyBody(c), &a)
}

func (h *httpConn) retireKey(ctx context.Context, key string) error {
	var a httpwire.Key
	return h.send(ctx, http.MethodDelete, "/v1/keys/"+url.PathEscape(key), nil, &a)
}

func (g *grpcConn) updateKey(ctx context.Context, key string, c idforge.KeyChange) error {
	_, err := g.api.UpdateKey(ctx, &idforgev1.UpdateKeyRequest{Key: key, Step: c.Step, Description: c.Description, MinStep: c.MinStep, MaxStep: c.MaxStep, Order: (*string)(c.Order)})
	if err != nil {
		return g.errorOf(err)
	}
	return nil
}

func (g *grpcConn) retireKey(ctx context.Context, key string) error {
	if _, err := g.api.RetireKey(ctx, &idforgev1.RetireKeyRequest{Key: key}); err != nil {
		return g.errorOf(err)
	}
	return nil
}
