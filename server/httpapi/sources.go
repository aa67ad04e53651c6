package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/strictjson"
	"github.com/idforge/idforge/issuer"
)

// Sources and counters defined through the API: POST /v1/sources (or
// /v1/counters) defines one, GET lists them (the configuration file's
// too, marked "origin":"file"), GET /v1/sources/{name} shows one and
// DELETE retires it. A definition's body is the fields of the
// configuration file's [[sources]] or [[counters]] entry (node.Source,
// node.Counter), with its name and a description.

// definedJSON is a definition as the API shows it: the kind's fields
// (its Spec) and these.
type definedJSON struct {
	Name        string     `json:"name"`
	Description string     `json:"description"`
	Origin      string     `json:"origin"`
	Retired     bool       `json:"retired"`
	Updated     *time.Time `json:"updated,omitempty"`
}

// toDefinedJSON merges a definition's Spec with its name and state into
// one JSON object.
func toDefinedJSON(d issuer.Defined) (map[string]any, error) {
	out := map[string]any{}
	if err := json.Unmarshal([]byte(d.Spec), &out); err != nil {
		return nil, fmt.Errorf("%w: %s %q: stored definition is not a JSON object: %v", idforge.ErrUnavailable, d.Kind, d.Name, err)
	}
	meta := definedJSON{Name: d.Name, Description: d.Description, Origin: d.Origin, Retired: d.Retired}
	if !d.Updated.IsZero() {
		u := d.Updated.UTC()
		meta.Updated = &u
	}
	b, _ := strictjson.Marshal(meta)
	json.Unmarshal(b, &out)
	return out, nil
}

// defineRequest reads the body of POST /v1/sources or /v1/counters: name
// and description, the rest being the kind's Spec.
func defineRequest(c v1Call, kind string) (idforge.Definition, error) {
	var fields map[string]json.RawMessage
	if err := decodeJSON(c.w, c.r, &fields); err != nil {
		return idforge.Definition{}, err
	}
	d := idforge.Definition{Kind: kind}
	for field, to := range map[string]*string{"name": &d.Name, "description": &d.Description} {
		raw, ok := fields[field]
		if !ok {
			continue
		}
		if err := json.Unmarshal(raw, to); err != nil {
			return d, fmt.Errorf("%w: %s: want a string", idforge.ErrInvalidArgument, field)
		}
		delete(fields, field)
	}
	if d.Name == "" {
		return d, fmt.Errorf("%w: %s: name is required", idforge.ErrInvalidArgument, kind)
	}
	spec, _ := strictjson.Marshal(fields)
	d.Spec = string(spec)
	return d, nil
}

// definitions serves GET and POST /v1/sources and /v1/counters.
func (h *handler) definitions(c v1Call) (any, error) {
	kind := kindOf(c.r.URL.Path)
	if c.r.Method == http.MethodPost {
		d, err := defineRequest(c, kind)
		if err != nil {
			return nil, err
		}
		if err := h.iss.Define(c.ctx, d); err != nil {
			return nil, err
		}
		got, err := h.iss.Defined(c.ctx, kind, d.Name)
		if err != nil {
			return nil, err
		}
		out, err := toDefinedJSON(got)
		return created{out}, err
	}
	defs, err := h.iss.ListDefined(c.ctx, kind)
	if err != nil {
		return nil, err
	}
	out := make([]map[string]any, len(defs))
	for i, d := range defs {
		if out[i], err = h.definedJSON(d); err != nil {
			return nil, err
		}
	}
	return map[string]any{kind + "s": out}, nil
}

// definedJSON is toDefinedJSON plus, for a source this node has open
// that reports its health (compositions, ticket servers), its "status"
// as GET /v1/health/sources shows it.
func (h *handler) definedJSON(d issuer.Defined) (map[string]any, error) {
	out, err := toDefinedJSON(d)
	if err != nil || d.Kind != issuer.KindSource {
		return out, err
	}
	for _, s := range h.iss.Sources() {
		if s.Name == d.Name {
			out["status"] = s.Status
		}
	}
	return out, nil
}

// definition serves GET and DELETE /v1/sources/{name} and
// /v1/counters/{name}; DELETE retires, and answers the retired
// definition.
func (h *handler) definition(c v1Call) (any, error) {
	kind, name := kindOf(c.r.URL.Path), c.r.PathValue("name")
	if err := idforge.ValidateKeyName(name); err != nil {
		return nil, err
	}
	if c.r.Method == http.MethodDelete {
		if err := h.iss.Retire(c.ctx, kind, name); err != nil {
			return nil, err
		}
	}
	d, err := h.iss.Defined(c.ctx, kind, name)
	if err != nil {
		return nil, err
	}
	return h.definedJSON(d)
}

// kindOf is the definition kind a /v1/sources… or /v1/counters… path is
// about.
func kindOf(path string) string {
	if strings.HasPrefix(path, "/v1/counters") {
		return issuer.KindCounter
	}
	return issuer.KindSource
}
