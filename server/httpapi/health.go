package httpapi

import (
	"fmt"
	"strings"
	"time"

	"github.com/idforge/idforge/issuer"
	"github.com/idforge/idforge/plugin"
	"github.com/idforge/idforge/sequence"
)

// NodeInfo is what GET /v1/node and the admin page say about a node
// besides what its issuer says.
type NodeInfo struct {
	// Version is the idforge build's version.
	Version string `json:"version"`
	// Store is the store's URL without its password
	// (dsn.RedactedString).
	Store string `json:"store"`
	// Worker says where the snowflake worker ID came from
	// (node.Node.WorkerSource).
	Worker string `json:"worker,omitempty"`
}

// nodeResponse is the answer of GET /v1/node.
type nodeResponse struct {
	NodeInfo
	// Plugins describes the plugin chain every issue runs through, in
	// order (issuer.Issuer.Plugins): each with the keys it is limited to.
	Plugins []string `json:"plugins"`
	// Rejections is what the node does when a plugin refuses a call;
	// absent when the chain's handler is not described.
	Rejections *plugin.Rejections `json:"rejections,omitempty"`
	// Counters names the per-period counters.
	Counters []string `json:"counters"`
	// Sources is every sequence source that reports its status.
	Sources []sourceJSON `json:"sources"`
}

// sourceJSON is a source's status in the API.
type sourceJSON struct {
	Name string `json:"name"`
	sequence.Status
}

// sourcesResponse is the answer of GET /v1/health/sources.
type sourcesResponse struct {
	Sources []sourceJSON `json:"sources"`
}

func (h *handler) sourceList() []sourceJSON {
	out := []sourceJSON{}
	for _, s := range h.iss.Sources() {
		out = append(out, sourceJSON{s.Name, s.Status})
	}
	return out
}

// sourcesHealth serves GET /v1/health/sources: the status of every
// sequence source that reports one (compositions, ticket servers).
func (h *handler) sourcesHealth(c v1Call) (any, error) {
	return sourcesResponse{Sources: h.sourceList()}, nil
}

// nodeInfo serves GET /v1/node: the version, the store (password redacted),
// plugins, counters and sources' status.
func (h *handler) nodeInfo(c v1Call) (any, error) {
	plugins, rejections := h.iss.Plugins()
	return nodeResponse{NodeInfo: h.node, Plugins: plugins, Rejections: rejections, Counters: h.counterNames(c), Sources: h.sourceList()}, nil
}

// counterNames names the live per-period counters: the configuration's
// and those defined through the API, when the node serves definitions.
func (h *handler) counterNames(c v1Call) []string {
	defs, err := h.iss.ListDefined(c.ctx, issuer.KindCounter)
	if err != nil {
		return h.iss.Counters()
	}
	names := []string{}
	for _, d := range defs {
		if !d.Retired {
			names = append(names, d.Name)
		}
	}
	return names
}

// sourceSummary is an unhealthy source in /readyz: kept small, the
// detail is at GET /v1/health/sources.
type sourceSummary struct {
	Health    string   `json:"health"`
	Ejected   []string `json:"ejected,omitempty"`
	LastError string   `json:"last_error,omitempty"`
}

// Bounds of a source's summary in /readyz: its last error, and the
// ejected members named (the rest are counted).
const (
	maxSummaryError   = 200
	maxSummaryMembers = 8
)

// summarise returns the /readyz entries of the sources that are not up.
func summarise(sources []issuer.SourceStatus) map[string]sourceSummary {
	if len(sources) == 0 {
		return nil
	}
	out := make(map[string]sourceSummary, len(sources))
	for _, s := range sources {
		sum := sourceSummary{Health: string(s.Health), LastError: s.LastError}
		if len(sum.LastError) > maxSummaryError {
			sum.LastError = strings.ToValidUTF8(sum.LastError[:maxSummaryError], "") + "…"
		}
		more := 0
		for in := &s.Status; in != nil; in = in.Inner {
			for _, m := range in.Members {
				switch {
				case m.Admitted():
				case len(sum.Ejected) < maxSummaryMembers:
					sum.Ejected = append(sum.Ejected, m.Name)
				default:
					more++
				}
			}
		}
		if more > 0 {
			sum.Ejected = append(sum.Ejected, fmt.Sprintf("… and %d more", more))
		}
		out[s.Name] = sum
	}
	return out
}

// lastError returns an error and its time for JSON: nil time when none.
func lastError(msg string, at time.Time) (string, *time.Time) {
	if msg == "" || at.IsZero() {
		return msg, nil
	}
	return msg, &at
}
