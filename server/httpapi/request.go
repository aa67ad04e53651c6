package httpapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/strictjson"
)

// The /v1 API is strict about what a request holds, so that a misspelt
// parameter or field is reported instead of silently doing something
// else: ?cnt=5 would otherwise issue one ID, and {"key":"a","key":"b"}
// would create key b. Leaf's, Tinyid's and Vesta's endpoints are not held
// to this: they answer as those systems' Spring and Java servers do,
// which ignore what they do not read, and their clients rely on it.

// tokenParam is the query parameter the auth middleware reads a token
// from (see auth.Middleware). Every /v1 endpoint takes it, whether or not
// this node checks tokens, so that one client works against every node.
const tokenParam = "token"

// paramFamily marks an allowed parameter that is a family of names: one
// ending in it, such as "param.", allows "param.NAME" for any non-empty
// NAME.
const paramFamily = "."

// parseQuery parses a query string; a malformed one is an error wrapping
// idforge.ErrInvalidArgument.
func parseQuery(rawQuery string) (url.Values, error) {
	if rawQuery == "" {
		return nil, nil // read only: a nil map answers every lookup, and costs no allocation
	}
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return nil, fmt.Errorf("%w: malformed query string: %v", idforge.ErrInvalidArgument, err)
	}
	return q, nil
}

// checkQuery parses rawQuery and checks that every parameter is one the
// endpoint (route: "METHOD /path") reads: a name in allowed, a member of
// a family in allowed (see paramFamily), or tokenParam. It checks names
// only; each parameter's reader checks its values and repeats. Errors
// wrap idforge.ErrInvalidArgument, name the parameter and list what the
// endpoint takes.
func checkQuery(route, rawQuery string, allowed []string) (url.Values, error) {
	q, err := parseQuery(rawQuery)
	if err != nil {
		return nil, err
	}
	var unknown []string
	for name := range q {
		if !queryAllows(allowed, name) {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) == 0 {
		return q, nil
	}
	sort.Strings(unknown) // the same answer for the same request
	takes := "no query parameters"
	if len(allowed) > 0 {
		shown := make([]string, len(allowed))
		for i, a := range allowed {
			if strings.HasSuffix(a, paramFamily) {
				a += "NAME"
			}
			shown[i] = a
		}
		takes = strings.Join(shown, ", ")
	}
	return nil, fmt.Errorf("%w: unknown query parameter %q; %s takes %s (and %s for authentication)",
		idforge.ErrInvalidArgument, unknown[0], route, takes, tokenParam)
}

// queryAllows reports whether allowed lets name through.
func queryAllows(allowed []string, name string) bool {
	if name == tokenParam {
		return true
	}
	for _, a := range allowed {
		if !strings.HasSuffix(a, paramFamily) {
			if a == name {
				return true
			}
		} else if rest, ok := strings.CutPrefix(name, a); ok && rest != "" {
			return true
		}
	}
	return false
}

// v1Call is one request to an endpoint of the JSON API: its query,
// parsed once, and its context, bounded by the request timeout.
type v1Call struct {
	ctx context.Context
	w   http.ResponseWriter
	r   *http.Request
	q   url.Values
	// key, when set, is the path's {key}, found without the mux (see
	// v1Key).
	key string
}

// pathValue returns the path's wildcard name.
func (c v1Call) pathValue(name string) string {
	if name == "key" && c.key != "" {
		return c.key
	}
	return c.r.PathValue(name)
}

// created is an endpoint's answer of 201 Created rather than 200.
type created struct{ v any }

// v1 wraps an endpoint of the JSON API that reads the query parameters
// params: a request with any other one is answered 400 invalid_argument
// before serve runs. serve's answer is written as JSON with 200 (201 for
// a created value), or, when it returns an error, the error's.
func (h *handler) v1(route string, serve func(*handler, v1Call) (any, error), params []string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		h.serveV1(w, r, route, "", serve, params)
	}
}

// v1Key is v1 for a route whose {key} was found without the mux (see
// httpmux.Mux.HandleLast).
func (h *handler) v1Key(route string, serve func(*handler, v1Call) (any, error), params []string) func(http.ResponseWriter, *http.Request, string) {
	return func(w http.ResponseWriter, r *http.Request, key string) {
		h.serveV1(w, r, route, key, serve, params)
	}
}

// serveV1 answers one request of the JSON API's route ("METHOD /path");
// key is the path's {key} when the route found it without the mux, else
// "".
func (h *handler) serveV1(w http.ResponseWriter, r *http.Request, route, key string, serve func(*handler, v1Call) (any, error), params []string) {
	q, err := checkQuery(route, r.URL.RawQuery, params)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	ctx := h.withTimeout(r)
	defer ctx.Release()
	v, err := serve(h, v1Call{ctx: ctx, w: w, r: r, q: q, key: key})
	switch c, ok := v.(created); {
	case err != nil:
		h.writeError(w, r, err)
	case ok:
		WriteJSON(w, http.StatusCreated, c.v)
	default:
		WriteJSON(w, http.StatusOK, v)
	}
}

// decodeJSON reads r's body, at most maxBodyBytes of it, into v: exactly
// one JSON object, with no field v lacks and no field given twice.
// encoding/json alone would keep the last of two values silently, and it
// matches field names regardless of case, so "key" and "Key" count as the
// same field here too. Errors wrap idforge.ErrInvalidArgument and name the
// field.
func decodeJSON(w http.ResponseWriter, r *http.Request, v any) error {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return fmt.Errorf("%w: request body is larger than %d bytes", idforge.ErrInvalidArgument, tooLarge.Limit)
		}
		return fmt.Errorf("%w: reading the request body: %v", idforge.ErrInvalidArgument, err)
	}
	return strictjson.Decode(body, v, "request body")
}
