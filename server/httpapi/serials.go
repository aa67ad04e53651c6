package httpapi

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/idforge/idforge"
)

// serialsResponse is the answer of GET /v1/serials/{name}.
type serialsResponse struct {
	Serial string   `json:"serial"`
	Values []string `json:"values"`
}

// serialJSON is a serial definition as the API shows it.
type serialJSON struct {
	Name        string     `json:"name"`
	Template    string     `json:"template"`
	TimeZone    string     `json:"time_zone,omitempty"`
	Description string     `json:"description"`
	Updated     *time.Time `json:"updated,omitempty"`
}

func toSerialJSON(s idforge.Serial) serialJSON {
	out := serialJSON{Name: s.Name, Template: s.Template, TimeZone: s.TimeZone, Description: s.Description}
	if !s.Updated.IsZero() {
		u := s.Updated
		out.Updated = &u
	}
	return out
}

// serialParamPrefix marks template parameters in the query string:
// ?param.area=010 fills @{param:area}.
const serialParamPrefix = "param."

// nextSerials serves GET /v1/serials/{name}?count=N&param.NAME=VALUE.
func (h *handler) nextSerials(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if err := idforge.ValidateKeyName(name); err != nil {
		h.writeError(w, r, err)
		return
	}
	n, err := parseCount(r.URL.RawQuery)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	params, err := serialParams(r.URL.RawQuery)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	ctx, cancel := h.withTimeout(r)
	defer cancel()
	values, err := h.iss.NextSerial(ctx, name, n, params)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	WriteJSON(w, http.StatusOK, serialsResponse{Serial: name, Values: values})
}

// serialParams collects the param.* query parameters. The route has
// refused any parameter the endpoint does not read (see checkQuery), so
// the others (count, token) are someone else's.
func serialParams(rawQuery string) (map[string]string, error) {
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return nil, fmt.Errorf("%w: malformed query string: %v", idforge.ErrInvalidArgument, err)
	}
	params := map[string]string{}
	for k, vs := range q {
		name, ok := strings.CutPrefix(k, serialParamPrefix)
		switch {
		case !ok || name == "":
		case len(vs) != 1:
			return nil, fmt.Errorf("%w: parameter %q given %d times", idforge.ErrInvalidArgument, name, len(vs))
		default:
			params[name] = vs[0]
		}
	}
	return params, nil
}

// createSerialRequest is the body of POST /v1/serials.
type createSerialRequest struct {
	Name        string `json:"name"`
	Template    string `json:"template"`
	TimeZone    string `json:"time_zone"`
	Description string `json:"description"`
}

func (h *handler) serials(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := h.withTimeout(r)
	defer cancel()
	if r.Method == http.MethodPost {
		var req createSerialRequest
		if err := decodeJSON(w, r, &req); err != nil {
			h.writeError(w, r, err)
			return
		}
		def := idforge.Serial{Name: req.Name, Template: req.Template, TimeZone: req.TimeZone, Description: req.Description}
		if err := h.iss.CreateSerial(ctx, def); err != nil {
			h.writeError(w, r, err)
			return
		}
		WriteJSON(w, http.StatusCreated, toSerialJSON(def))
		return
	}
	defs, err := h.iss.Serials(ctx)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	out := make([]serialJSON, len(defs))
	for i, d := range defs {
		out[i] = toSerialJSON(d)
	}
	WriteJSON(w, http.StatusOK, map[string]any{"serials": out})
}
