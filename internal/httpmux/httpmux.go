// Package httpmux is the HTTP router of server/httpapi and server/compat:
// an http.ServeMux that remembers the patterns registered on it, so that
// a test can walk the real routes (and compare them with the OpenAPI
// document, api/openapi.json) instead of a second list of them.
package httpmux

import "net/http"

// Mux is an http.ServeMux that records its patterns.
type Mux struct {
	*http.ServeMux
	patterns []string
}

// New returns an empty Mux.
func New() *Mux { return &Mux{ServeMux: http.NewServeMux()} }

// HandleFunc registers fn for pattern, as http.ServeMux.HandleFunc does,
// and records the pattern.
func (m *Mux) HandleFunc(pattern string, fn func(http.ResponseWriter, *http.Request)) {
	m.patterns = append(m.patterns, pattern)
	m.ServeMux.HandleFunc(pattern, fn)
}

// Handle registers h for pattern, as http.ServeMux.Handle does, and
// records the pattern.
func (m *Mux) Handle(pattern string, h http.Handler) {
	m.patterns = append(m.patterns, pattern)
	m.ServeMux.Handle(pattern, h)
}

// Patterns returns the patterns registered, in order, e.g. "GET /v1/keys"
// or "/genid" (any method).
func (m *Mux) Patterns() []string { return append([]string(nil), m.patterns...) }
