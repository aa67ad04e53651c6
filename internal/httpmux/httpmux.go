// Package httpmux is the HTTP router of server/httpapi and server/compat:
// an http.ServeMux that remembers the patterns registered on it, so that
// a test can walk the real routes (and compare them with the OpenAPI
// document, api/openapi.json) instead of a second list of them.
package httpmux

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/idforge/idforge"
)

// Mux is an http.ServeMux that records its patterns.
type Mux struct {
	*http.ServeMux
	patterns []string
	fast     []fastRoute
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

// fastRoute is a route answered before the ServeMux: see HandleLast.
type fastRoute struct {
	method, prefix string
	fn             func(w http.ResponseWriter, r *http.Request, last string)
}

// HandleLast answers the paths prefix+NAME, NAME one clean path segment
// (no '/', not "." or ".."), with fn(w, r, NAME) before the ServeMux looks
// at them, so that a hot route skips the mux's path cleaning and pattern
// matching. method "" takes any method; "GET" takes GET and HEAD, as a
// ServeMux pattern does. It is an acceleration only: the same paths must
// also be registered with a pattern ("prefix{name}") whose handler answers
// them the same way, for the requests HandleLast leaves to the mux (a
// path with escapes, another method) and for Patterns.
func (m *Mux) HandleLast(method, prefix string, fn func(w http.ResponseWriter, r *http.Request, last string)) {
	m.fast = append(m.fast, fastRoute{method, prefix, fn})
}

// ServeHTTP answers a request of a HandleLast route directly and passes
// every other one to the ServeMux.
func (m *Mux) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.RawPath == "" {
		for _, f := range m.fast {
			last, ok := strings.CutPrefix(r.URL.Path, f.prefix)
			if !ok || last == "" || last == "." || last == ".." || strings.IndexByte(last, '/') >= 0 {
				continue
			}
			if f.method == "" || r.Method == f.method || (f.method == http.MethodGet && r.Method == http.MethodHead) {
				f.fn(w, r, last)
				return
			}
		}
	}
	m.ServeMux.ServeHTTP(w, r)
}

// Issuing checks a request to a route that issues values (IDs, serials,
// a range handed out): it must be one of the methods the route
// documents, given in allowed. HEAD never is, whatever allowed says: its
// answer has no body, so the values would be drawn and lost, and a
// ServeMux pattern for GET also takes HEAD. Any other method is refused
// the same way. On refusal it sets the Allow header and returns an error
// wrapping idforge.ErrMethodNotAllowed for the caller to answer; nothing
// has been drawn.
func Issuing(w http.ResponseWriter, r *http.Request, allowed ...string) error {
	if r.Method != http.MethodHead && slices.Contains(allowed, r.Method) {
		return nil
	}
	list := strings.Join(allowed, ", ")
	w.Header().Set("Allow", list)
	if r.Method == http.MethodHead {
		return fmt.Errorf("%w: HEAD on a route that issues values: its answer has no body, so they would be drawn and lost; use %s",
			idforge.ErrMethodNotAllowed, list)
	}
	return fmt.Errorf("%w: %s; this route issues values and takes %s", idforge.ErrMethodNotAllowed, r.Method, list)
}
