package client

import (
	"context"
	"net/http"
	"net/url"
)

// Quota is a quota as the HTTP API shows it: the fields of the server's
// Quota (see there), without linking the server's packages.
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
	// From is "file" or "api"; Retired marks a retired quota. Both are
	// the server's to say, ignored by Define.
	Origin  string `json:"origin,omitempty"`
	Retired bool   `json:"retired,omitempty"`
}

// Quotas administers the quotas of an idforge server over its HTTP API
// (/v1/quotas): defining and retiring need an admin token (WithToken).
// It talks to one node: every node sharing its store applies the quotas
// at its next refresh. It is safe for concurrent use.
type Quotas struct {
	c *httpConn
}

// NewQuotas returns a Quotas client of the node at addr (an address as
// NewHTTP takes it). Of the options, WithToken, WithTLS and
// WithHTTPClient apply. It makes no request.
func NewQuotas(addr string, opts ...Option) (*Quotas, error) {
	o, err := buildOptions([]string{addr}, opts)
	if err != nil {
		return nil, err
	}
	base, err := baseURL(addr, o.tls != nil)
	if err != nil {
		return nil, err
	}
	hc := o.httpClient
	if hc == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.TLSClientConfig = o.tls
		hc = &http.Client{Transport: t}
	}
	auth := ""
	if o.token != "" {
		auth = "Bearer " + o.token
	}
	return &Quotas{c: &httpConn{addr: addr, base: base, hc: hc, auth: auth}}, nil
}

// List returns every quota: the server's config file's (From "file") and
// those defined through the API (From "api", retired ones included).
func (q *Quotas) List(ctx context.Context) ([]Quota, error) {
	var out struct {
		Quotas []Quota `json:"quotas"`
	}
	err := q.c.get(ctx, "/v1/quotas", &out)
	return out.Quotas, err
}

// Get returns one quota; an unknown one is an error wrapping
// idforge.ErrUnknownKey.
func (q *Quotas) Get(ctx context.Context, name string) (Quota, error) {
	var out Quota
	err := q.c.get(ctx, "/v1/quotas/"+url.PathEscape(name), &out)
	return out, err
}

// Define defines a quota. A bad one is an error wrapping
// idforge.ErrInvalidArgument (a limit of zero or less, an unknown period,
// a malformed key pattern…), a taken name one wrapping
// idforge.ErrKeyExists.
func (q *Quotas) Define(ctx context.Context, s Quota) (Quota, error) {
	s.Origin, s.Retired = "", false
	var out Quota
	err := q.c.send(ctx, http.MethodPost, "/v1/quotas", s, &out)
	return out, err
}

// Retire retires a quota defined through the API: it refuses nothing
// more, and its name is never defined again.
func (q *Quotas) Retire(ctx context.Context, name string) (Quota, error) {
	var out Quota
	err := q.c.send(ctx, http.MethodDelete, "/v1/quotas/"+url.PathEscape(name), nil, &out)
	return out, err
}

// Close releases idle connections.
func (q *Quotas) Close() error {
	q.c.hc.CloseIdleConnections()
	return nil
}
