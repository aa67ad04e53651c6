package httpapi

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/httpwire"
)

// gapless serves POST /v1/serials/{name}/{reserve,commit,void}, a
// gap-free serial's steps, each answered with the reservation, and GET
// /v1/serials/{name}/audit (one route: the mux cannot tell them apart).
func (h *handler) gapless(c v1Call) (any, error) {
	name, step := c.pathValue("name"), c.pathValue("step")
	if err := idforge.ValidateKeyName(name); err != nil {
		return nil, err
	}
	switch post := c.r.Method == http.MethodPost; {
	case !slices.Contains([]string{"audit", "reserve", "commit", "void"}, step):
		return nil, fmt.Errorf("%w: /v1/serials/%s/%s", idforge.ErrNoEndpoint, name, step)
	case post == (step == "audit"):
		c.w.Header().Set("Allow", map[bool]string{true: "GET", false: "POST"}[step == "audit"])
		return nil, fmt.Errorf("%w: %s on /v1/serials/%s/%s", idforge.ErrMethodNotAllowed, c.r.Method, name, step)
	case !post:
		return h.audit(c, name)
	}
	var r idforge.Reservation
	var err error
	switch step {
	case "reserve":
		var params map[string]string
		if params, err = serialParams(c.q); err == nil {
			r, err = h.iss.Reserve(c.ctx, name, params)
		}
	default: // commit, void
		var req httpwire.End
		if err = decodeJSON(c.w, c.r, &req); err == nil && step == "commit" {
			if req.Reason != "" {
				return nil, fmt.Errorf("%w: a commit takes no reason", idforge.ErrInvalidArgument)
			}
			r, err = h.iss.Commit(c.ctx, name, req.Reservation)
		} else if err == nil {
			r, err = h.iss.Void(c.ctx, name, req.Reservation, req.Reason)
		}
	}
	return httpwire.NewReservation(r), err
}

// audit serves GET /v1/serials/{name}/audit?from=&to=.
func (h *handler) audit(c v1Call, name string) (any, error) {
	bounds := [2]int64{1, 0}
	for i, p := range []string{"from", "to"} {
		v, err := queryValue(c.q, p)
		if err == nil && v != "" {
			bounds[i], err = strconv.ParseInt(v, 10, 64)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %s=%q: want a number", idforge.ErrInvalidArgument, p, v)
		}
	}
	rs, last, err := h.iss.Audit(c.ctx, name, bounds[0], bounds[1])
	if err != nil {
		return nil, err
	}
	out := httpwire.Audit{Serial: name, From: bounds[0], To: min(bounds[0]+idforge.MaxAudit-1, last), Last: last, Numbers: []httpwire.Reservation{}}
	if bounds[1] != 0 {
		out.To = min(out.To, bounds[1])
	}
	for _, r := range rs {
		out.Numbers = append(out.Numbers, httpwire.NewReservation(r))
	}
	return out, nil
}
