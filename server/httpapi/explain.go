package httpapi

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/httpwire"
	"github.com/idforge/idforge/snowflake"
)

func (h *handler) snowflakeInfo() *httpwire.Snowflake {
	g := h.iss.Snowflake()
	if g == nil {
		return nil
	}
	l := g.Layout()
	out := &httpwire.Snowflake{Layout: l.String(), Worker: g.Worker(), Datacenter: g.Datacenter(), Expires: l.Expires(),
		Lease: "unlimited", Now: idforge.SystemClock.Now().UTC()}
	switch until := g.ValidUntil(); {
	case until.IsZero():
	case until.After(out.Now):
		out.Lease, out.ValidUntil = "held", &until
	default:
		out.Lease = "lost"
	}
	if last := g.LastIssued(); !last.IsZero() {
		last = last.UTC()
		out.LastIssued = &last
	}
	return out
}

// parseID reads a snowflake ID: a non-negative decimal int64.
func parseID(s string) (int64, error) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id < 0 {
		return 0, fmt.Errorf("%w: ID %q is not a non-negative 64-bit decimal number", idforge.ErrInvalidArgument, s)
	}
	return id, nil
}

// explainID decodes s with the node's layout.
func (h *handler) explainID(s string) (int64, snowflake.Layout, snowflake.Parts, error) {
	g := h.iss.Snowflake()
	if g == nil {
		return 0, snowflake.Layout{}, snowflake.Parts{}, fmt.Errorf("%w: this node runs no snowflake generator", idforge.ErrUnavailable)
	}
	id, err := parseID(s)
	if err != nil {
		return 0, snowflake.Layout{}, snowflake.Parts{}, err
	}
	l := g.Layout()
	p, err := l.Explain(id)
	return id, l, p, err
}

// explain decodes a snowflake ID, or with source= a number of that
// date-packed source.
func (h *handler) explain(c v1Call) (any, error) {
	source, err := queryValue(c.q, "source")
	if err != nil {
		return nil, err
	}
	if c.q.Has("source") {
		id, err := parseID(c.r.PathValue("id"))
		if err != nil {
			return nil, err
		}
		u, err := h.iss.ExplainPacked(c.ctx, source, id)
		if err != nil {
			return nil, err
		}
		return httpwire.NewUnpacked(u), nil
	}
	id, l, p, err := h.explainID(c.r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	return httpwire.NewExplain(strconv.FormatInt(id, 10), l, p), nil
}

// leafDecode serves Leaf's GET /decodeSnowflakeId?snowflakeId=…, answering
// as Leaf's monitor controller does:
//
//	{"timestamp":"1567733700834(2019-09-06 09:35:00.834)","sequenceId":"3448","workerId":"39"}
//
// Leaf's workerId is every bit between time and sequence, so with the
// twitter layout it is datacenter<<5 | worker. The time is in the server's
// local zone, as in Leaf.
func (h *handler) leafDecode(w http.ResponseWriter, r *http.Request) {
	q, err := parseQuery(r.URL.RawQuery)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	_, l, p, err := h.explainID(q.Get("snowflakeId"))
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	ms := p.Time.UnixMilli()
	WriteJSON(w, http.StatusOK, map[string]string{
		"timestamp":  fmt.Sprintf("%d(%s)", ms, p.Time.Local().Format("2006-01-02 15:04:05.000")),
		"workerId":   strconv.FormatInt(p.Datacenter*(l.MaxWorker()+1)+p.Worker, 10),
		"sequenceId": strconv.FormatInt(p.Sequence, 10),
	})
}
