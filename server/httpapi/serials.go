package httpapi

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/httpwire"
)

// serialJSON is a serial definition as the API shows it.
type serialJSON struct {
	Name        string `json:"name"`
	Template    string `json:"template"`
	TimeZone    string `json:"time_zone,omitempty"`
	Description string `json:"description"`
	Gapless     bool   `json:"gapless,omitempty"`
	// ReuseExpired and Expiry (a Go duration) are a gapless serial's.
	ReuseExpired bool       `json:"reuse_expired,omitempty"`
	Expiry       string     `json:"expiry,omitempty"`
	Updated      *time.Time `json:"updated,omitempty"`
	// RetiredSources names what the serial draws from that was retired
	// (issuer.SerialState): it issues nothing more.
	RetiredSources []string `json:"retired_sources,omitempty"`
}

func toSerialJSON(s idforge.Serial) serialJSON {
	out := serialJSON{Name: s.Name, Template: s.Template, TimeZone: s.TimeZone, Description: s.Description,
		Gapless: s.Gapless, ReuseExpired: s.ReuseExpired}
	if s.Gapless {
		out.Expiry = s.ReservationExpiry().String()
	}
	if !s.Updated.IsZero() {
		u := s.Updated
		out.Updated = &u
	}
	return out
}

// nextSerials serves GET /v1/serials/{name}?count=N&param.NAME=VALUE.
func (h *handler) nextSerials(c v1Call) (any, error) {
	name, n, err := issueArgs(c, "name")
	if err != nil {
		return nil, err
	}
	params, err := serialParams(c.q)
	if err != nil {
		return nil, err
	}
	values, err := h.iss.NextSerial(c.ctx, name, n, params)
	return httpwire.Serials{Serial: name, Values: values}, err
}

// serialParams collects the param.* query parameters. The route has
// refused any parameter the endpoint does not read (see checkQuery), so
// the others (count, token) are someone else's.
func serialParams(q url.Values) (map[string]string, error) {
	params := map[string]string{}
	for k, vs := range q {
		name, ok := strings.CutPrefix(k, httpwire.SerialParamPrefix)
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
	// Gapless, ReuseExpired and Expiry (a Go duration: "10m") make a
	// gap-free serial (idforge.Serial).
	Gapless      bool   `json:"gapless"`
	ReuseExpired bool   `json:"reuse_expired"`
	Expiry       string `json:"expiry"`
}

// serials serves GET and POST /v1/serials: the serial definitions, or a
// new one.
func (h *handler) serials(c v1Call) (any, error) {
	if c.r.Method == http.MethodPost {
		var req createSerialRequest
		if err := decodeJSON(c.w, c.r, &req); err != nil {
			return nil, err
		}
		def := idforge.Serial{Name: req.Name, Template: req.Template, TimeZone: req.TimeZone, Description: req.Description,
			Gapless: req.Gapless, ReuseExpired: req.ReuseExpired}
		if req.Expiry != "" {
			var err error
			if def.Expiry, err = time.ParseDuration(req.Expiry); err != nil {
				return nil, fmt.Errorf("%w: expiry %q: %v", idforge.ErrInvalidArgument, req.Expiry, err)
			}
		}
		return created{toSerialJSON(def)}, h.iss.CreateSerial(c.ctx, def)
	}
	states, err := h.iss.SerialStates(c.ctx)
	if err != nil {
		return nil, err
	}
	out := make([]serialJSON, len(states))
	for i, st := range states {
		out[i] = toSerialJSON(st.Serial)
		out[i].RetiredSources = st.Retired
	}
	return map[string]any{"serials": out}, nil
}
