package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/strictjson"
)

// Admin defines, lists and retires the sequence sources and per-period
// counters of an idforge deployment over its HTTP API (/v1/sources,
// /v1/counters). They are kept in the store, so one node serves them to
// every node sharing it. Defining and retiring need an admin token
// (WithToken).
type Admin struct{ h *httpConn }

// The kinds of definition Admin handles.
const (
	KindSource  = "source"
	KindCounter = "counter"
)

// Definition is a source or counter as the API shows it.
type Definition struct {
	Name string
	// Spec holds the fields of the configuration file's [[sources]] or
	// [[counters]] entry, as JSON ({"url":"…"}), passwords redacted.
	Spec        json.RawMessage
	Description string
	// Origin is "file" (the configuration file) or "api" (the store).
	Origin  string
	Retired bool
	// Updated is zero for the file's.
	Updated time.Time
}

// NewAdmin returns an Admin of the node at addr (as NewHTTP takes
// addresses; WithToken, WithTLS and WithHTTPClient apply). It makes no
// request.
func NewAdmin(addr string, opts ...Option) (*Admin, error) {
	c, err := dialOne(addr, opts, httpConns)
	if err != nil {
		return nil, err
	}
	return &Admin{h: c.(*httpConn)}, nil
}

// dialOne makes the connection of one node, at addr, under opts, as
// conns (httpConns, grpcConns) makes them: for the administration
// clients, which speak to one node and never fail over.
func dialOne(addr string, opts []Option, conns func(options) func(string) (conn, error)) (conn, error) {
	o, err := buildOptions([]string{addr}, opts)
	if err != nil {
		return nil, err
	}
	return conns(o)(addr)
}

// Define defines a source or counter (kind KindSource or KindCounter)
// with spec, the fields of its configuration entry as JSON. A refusal is
// an *Error wrapping idforge.ErrInvalidArgument (a bad field, an unknown
// scheme, an unreachable backend) or ErrKeyExists (a taken name).
func (a *Admin) Define(ctx context.Context, kind, name string, spec json.RawMessage, description string) (Definition, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(spec, &fields); err != nil {
		return Definition{}, fmt.Errorf("%w: client: spec is not a JSON object: %v", idforge.ErrInvalidArgument, err)
	}
	fields["name"], _ = strictjson.Marshal(name)
	if description != "" {
		fields["description"], _ = strictjson.Marshal(description)
	}
	body, _ := strictjson.Marshal(fields)
	return a.one(ctx, http.MethodPost, "/v1/"+kind+"s", body)
}

// Get returns one source or counter.
func (a *Admin) Get(ctx context.Context, kind, name string) (Definition, error) {
	return a.one(ctx, http.MethodGet, "/v1/"+kind+"s/"+url.PathEscape(name), nil)
}

// Retire retires a source or counter defined through the API: every node
// stops issuing from it, and its name is never used again.
func (a *Admin) Retire(ctx context.Context, kind, name string) (Definition, error) {
	return a.one(ctx, http.MethodDelete, "/v1/"+kind+"s/"+url.PathEscape(name), nil)
}

// List returns the kind's definitions, the file's and the API's, sorted
// by name.
func (a *Admin) List(ctx context.Context, kind string) ([]Definition, error) {
	var out map[string][]map[string]json.RawMessage
	if err := a.h.send(ctx, http.MethodGet, "/v1/"+kind+"s", nil, &out); err != nil {
		return nil, err
	}
	defs := make([]Definition, 0, len(out[kind+"s"]))
	for _, f := range out[kind+"s"] {
		defs = append(defs, toDefinition(f))
	}
	return defs, nil
}

// Close releases the Admin's connections.
func (a *Admin) Close() error { return a.h.close() }

func (a *Admin) one(ctx context.Context, method, path string, body []byte) (Definition, error) {
	var f map[string]json.RawMessage
	var in any // a nil body is no body, not JSON null
	if body != nil {
		in = json.RawMessage(body)
	}
	if err := a.h.send(ctx, method, path, in, &f); err != nil {
		return Definition{}, err
	}
	return toDefinition(f), nil
}

// toDefinition splits an answer's fields into the definition's state and
// its Spec.
func toDefinition(f map[string]json.RawMessage) Definition {
	var d Definition
	for field, to := range map[string]any{"name": &d.Name, "description": &d.Description, "origin": &d.Origin,
		"retired": &d.Retired, "updated": &d.Updated} {
		if raw, ok := f[field]; ok {
			json.Unmarshal(raw, to)
			delete(f, field)
		}
	}
	d.Spec, _ = strictjson.Marshal(f)
	return d
}
