package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"

	idforgev1 "github.com/idforge/idforge/api/idforge/v1"
	"github.com/idforge/idforge/internal/strictjson"
)

// Quota is a quota as the API shows it: the fields of the server's
// quota.Spec (see there), without linking the server's packages. Over
// gRPC, Counter's password is redacted.
type Quota struct {
	Name        string   `json:"name"`
	Keys        []string `json:"keys,omitempty"`
	Tokens      []string `json:"tokens,omitempty"`
	Limit       int64    `json:"limit,omitempty"`
	Per         string   `json:"per,omitempty"`
	Closed      bool     `json:"closed,omitempty"`
	Formats     []string `json:"formats,omitempty"`
	Counter     string   `json:"counter,omitempty"`
	Description string   `json:"description,omitempty"`
	// Origin is "file" or "api"; Retired marks a retired quota. Both are
	// the server's to say, ignored by Define.
	Origin  string `json:"origin,omitempty"`
	Retired bool   `json:"retired,omitempty"`
}

// Quotas administers the quotas of an idforge server, over its HTTP API
// (/v1/quotas; NewQuotas) or its gRPC API (CreateQuota, GetQuota,
// ListQuotas, RetireQuota; NewGRPCQuotas): defining and retiring need an
// admin token (WithToken). It talks to one node: every node sharing its
// store applies the quotas at its next refresh. It is safe for concurrent
// use.
type Quotas struct {
	c quotaConn
}

// quotaConn is one node's quota administration, over HTTP (httpConn) or
// gRPC (grpcConn).
type quotaConn interface {
	listQuotas(ctx context.Context) ([]Quota, error)
	getQuota(ctx context.Context, name string) (Quota, error)
	defineQuota(ctx context.Context, q Quota) (Quota, error)
	retireQuota(ctx context.Context, name string) (Quota, error)
	close() error
}

var (
	_ quotaConn = (*httpConn)(nil)
	_ quotaConn = (*grpcConn)(nil)
)

// NewQuotas returns a Quotas client of the HTTP API of the node at addr
// (an address as NewHTTP takes it). Of the options, WithToken, WithTLS
// and WithHTTPClient apply. It makes no request.
func NewQuotas(addr string, opts ...Option) (*Quotas, error) {
	return newQuotas(addr, opts, httpConns)
}

// NewGRPCQuotas returns a Quotas client of the gRPC API of the node at
// addr (a gRPC target as NewGRPC takes it). Of the options, WithToken,
// WithTLS and WithDialOptions apply. It makes no request.
func NewGRPCQuotas(addr string, opts ...Option) (*Quotas, error) {
	return newQuotas(addr, opts, grpcConns)
}

func newQuotas(addr string, opts []Option, conns func(options) func(string) (conn, error)) (*Quotas, error) {
	c, err := dialOne(addr, opts, conns)
	if err != nil {
		return nil, err
	}
	return &Quotas{c: c.(quotaConn)}, nil
}

// List returns every quota: the server's config file's (Origin "file")
// and those defined through the API (Origin "api", retired ones
// included).
func (q *Quotas) List(ctx context.Context) ([]Quota, error) { return q.c.listQuotas(ctx) }

// Get returns one quota; an unknown one is an error wrapping
// idforge.ErrUnknownKey.
func (q *Quotas) Get(ctx context.Context, name string) (Quota, error) { return q.c.getQuota(ctx, name) }

// Define defines a quota. A bad one is an error wrapping
// idforge.ErrInvalidArgument (a limit of zero or less, an unknown period,
// a malformed key pattern…), a taken name one wrapping
// idforge.ErrKeyExists.
func (q *Quotas) Define(ctx context.Context, s Quota) (Quota, error) {
	s.Origin, s.Retired = "", false
	return q.c.defineQuota(ctx, s)
}

// Retire retires a quota defined through the API: it refuses nothing
// more, and its name is never defined again.
func (q *Quotas) Retire(ctx context.Context, name string) (Quota, error) {
	return q.c.retireQuota(ctx, name)
}

// Close releases the client's connections.
func (q *Quotas) Close() error { return q.c.close() }

func (h *httpConn) listQuotas(ctx context.Context) ([]Quota, error) {
	var out struct {
		Quotas []Quota `json:"quotas"`
	}
	err := h.get(ctx, "/v1/quotas", &out)
	return out.Quotas, err
}

func (h *httpConn) getQuota(ctx context.Context, name string) (Quota, error) {
	var out Quota
	err := h.get(ctx, "/v1/quotas/"+url.PathEscape(name), &out)
	return out, err
}

func (h *httpConn) defineQuota(ctx context.Context, q Quota) (Quota, error) {
	var out Quota
	err := h.send(ctx, http.MethodPost, "/v1/quotas", q, &out)
	return out, err
}

func (h *httpConn) retireQuota(ctx context.Context, name string) (Quota, error) {
	var out Quota
	err := h.send(ctx, http.MethodDelete, "/v1/quotas/"+url.PathEscape(name), nil, &out)
	return out, err
}

// quotaOwnFields are the fields of a Quota that a gRPC Definition carries
// beside its spec.
var quotaOwnFields = []string{"name", "description", "origin", "retired"}

func (g *grpcConn) listQuotas(ctx context.Context) ([]Quota, error) {
	r, err := g.api.ListQuotas(ctx, &idforgev1.ListDefinitionsRequest{})
	if err != nil {
		return nil, g.errorOf(err)
	}
	out := make([]Quota, 0, len(r.GetDefinitions()))
	for _, d := range r.GetDefinitions() {
		q, err := g.quotaOf(d)
		if err != nil {
			return nil, err
		}
		out = append(out, q)
	}
	return out, nil
}

func (g *grpcConn) getQuota(ctx context.Context, name string) (Quota, error) {
	d, err := g.api.GetQuota(ctx, &idforgev1.DefinitionName{Name: name})
	if err != nil {
		return Quota{}, g.errorOf(err)
	}
	return g.quotaOf(d)
}

func (g *grpcConn) defineQuota(ctx context.Context, q Quota) (Quota, error) {
	b, _ := strictjson.Marshal(q)
	var fields map[string]json.RawMessage
	json.Unmarshal(b, &fields)
	for _, f := range quotaOwnFields {
		delete(fields, f)
	}
	spec, _ := strictjson.Marshal(fields)
	d, err := g.api.CreateQuota(ctx, &idforgev1.DefineRequest{Name: q.Name, Spec: string(spec), Description: q.Description})
	if err != nil {
		return Quota{}, g.errorOf(err)
	}
	return g.quotaOf(d)
}

func (g *grpcConn) retireQuota(ctx context.Context, name string) (Quota, error) {
	d, err := g.api.RetireQuota(ctx, &idforgev1.DefinitionName{Name: name})
	if err != nil {
		return Quota{}, g.errorOf(err)
	}
	return g.quotaOf(d)
}

// quotaOf reads a quota's Definition: its spec and its own fields.
func (g *grpcConn) quotaOf(d *idforgev1.Definition) (Quota, error) {
	var q Quota
	if err := json.Unmarshal([]byte(d.GetSpec()), &q); err != nil {
		return Quota{}, fmt.Errorf("idforge client: %s: quota %q: %v", g.addr, d.GetName(), err)
	}
	q.Name, q.Description, q.Origin, q.Retired = d.GetName(), d.GetDescription(), d.GetOrigin(), d.GetRetired()
	return q, nil
}
