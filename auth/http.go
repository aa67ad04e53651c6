package auth

import (
	"errors"
	"fmt"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/httperr"
)

// maxFormBytes bounds a form body read to find a token or a key.
const maxFormBytes = 64 << 10

// Middleware returns next guarded by a's tokens. classify says what each
// request needs; nil means DefaultClassify. The token is taken from
// "Authorization: Bearer <token>", else from the token query parameter,
// else from a token field of a url-encoded form body (Tinyid's clients).
// Refusals are answered with idforge's JSON error body:
//
//	401 unauthenticated  no token or an unknown one (with WWW-Authenticate: Bearer)
//	403 forbidden        an issue token on an admin call, or a key the token does not list
//	429 rate_limited     the token is over its rate (with Retry-After in seconds)
//
// An authorized request's context carries its Caller (see CallerFrom).
//
// Put the middleware outermost, before any handler that reads a request
// body, so refused requests cost nothing.
func (a *Authenticator) Middleware(next http.Handler, classify func(*http.Request) Access) http.Handler {
	return a.MiddlewareRefusing(next, classify, nil)
}

// A Refuser may answer a refused request in the protocol of its endpoint
// and report true (Tinyid's clients, for one, expect HTTP 200 and
// Tinyid's own error body); false leaves the answer to the middleware.
// status, code and message are what the middleware would answer.
type Refuser func(w http.ResponseWriter, r *http.Request, status int, code, message string) bool

// MiddlewareRefusing is Middleware whose refusals are first offered to
// refuse (nil: none).
func (a *Authenticator) MiddlewareRefusing(next http.Handler, classify func(*http.Request) Access, refuse Refuser) http.Handler {
	if classify == nil {
		classify = DefaultClassify
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		acc := classify(r)
		if acc.Level == Open {
			next.ServeHTTP(w, r)
			return
		}
		token, malformed := tokenOf(r)
		if malformed != "" {
			writeAuthError(w, r, fmt.Errorf("%w: %s", ErrUnauthenticated, malformed), `Bearer realm="idforge", error="invalid_request"`, refuse)
			return
		}
		caller, err := a.Authorize(token, acc)
		if err != nil {
			challenge := `Bearer realm="idforge"`
			if token != "" {
				challenge = `Bearer realm="idforge", error="invalid_token"`
			}
			writeAuthError(w, r, err, challenge, refuse)
			return
		}
		next.ServeHTTP(w, r.WithContext(withCaller(r.Context(), caller)))
	})
}

// httpTokenHint says how an HTTP request sends its token (see tokenOf).
const httpTokenHint = `the header "Authorization: Bearer <token>" (or ?token=<token>)`

// writeAuthError answers a refused request, offering it to refuse first.
// The status and code are err's (see idforge.Code); a 401 carries the
// challenge as WWW-Authenticate, a 429 says in Retry-After when to come
// back.
func writeAuthError(w http.ResponseWriter, r *http.Request, err error, challenge string, refuse Refuser) {
	err = withTokenHint(err, httpTokenHint)
	code := idforge.ErrorCode(err)
	if refuse != nil && refuse(w, r, code.HTTPStatus(), string(code), err.Error()) {
		return
	}
	var rl *RateLimitError
	switch {
	case errors.As(err, &rl):
		w.Header().Set("Retry-After", strconv.FormatInt(retryAfterSeconds(rl.RetryAfter), 10))
	case code == idforge.CodeUnauthenticated:
		w.Header().Set("WWW-Authenticate", challenge)
	}
	w.Header().Set("Cache-Control", "no-store")
	httperr.Write(w, r, nil, err)
}

// tokenOf returns the token a request presents, "" when none; or, when
// the Authorization header is not a bearer token, a message saying so.
func tokenOf(r *http.Request) (token, malformed string) {
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, tok, ok := strings.Cut(strings.TrimSpace(h), " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") {
			return "", "the Authorization header must be \"Bearer <token>\""
		}
		return strings.TrimSpace(tok), ""
	}
	if t := r.URL.Query().Get("token"); t != "" {
		return t, ""
	}
	if parseForm(r) {
		return r.PostForm.Get("token"), ""
	}
	return "", ""
}

// parseForm parses a url-encoded POST/PUT/PATCH body, at most
// maxFormBytes of it, and reports whether the request has one. The parsed
// form stays on the request (r.Form, r.PostForm), so handlers see the same
// values.
func parseForm(r *http.Request) bool {
	switch r.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch:
	default:
		return false
	}
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct != "application/x-www-form-urlencoded" {
		return false
	}
	if r.PostForm == nil && r.Body != nil {
		r.Body = http.MaxBytesReader(nil, r.Body, maxFormBytes)
		if err := r.ParseForm(); err != nil {
			return false
		}
	}
	return r.PostForm != nil
}

// Prefixes of the routes DefaultClassify knows.
const (
	prefixIDs       = "/v1/ids/"
	prefixKeys      = "/v1/keys/"
	pathSerials     = "/v1/serials"
	prefixSerials   = "/v1/serials/"
	prefixLeafSeg   = "/api/segment/get/"
	prefixLeafSnow  = "/api/snowflake/get/"
	prefixTinyid    = "/tinyid/"
	prefixUI        = "/ui/"
	tinyidKeyParam  = "bizType"
	pathLeafSnowAll = "/api/snowflake/get"
)

// DefaultClassify classifies idforge's HTTP routes (server/httpapi,
// server/compat and server/ui) on the cleaned path:
//
//	Open   /healthz, /readyz, /metrics, /openapi.json (the API's description); /ui and /ui/… (the admin page's HTML only: its data calls need a token)
//	Issue  /v1/ids/{key}, /api/segment/get/{key}, /api/snowflake/get/{key}: that key
//	       /v1/serials/{name} and POST /v1/serials/{name}/{reserve,commit,void}: that serial
//	       /tinyid/id/… : the key in bizType (query or url-encoded form; several different values: no key)
//	       /genid, /api/snowflake/get: no key (the node-wide snowflake generator)
//	Admin  /v1/keys and /v1/keys/{key} with any method but GET and HEAD (POST /v1/keys creates a key);
//	       likewise /v1/serials, /v1/sources, /v1/sources/{name}, /v1/counters, /v1/counters/{name},
//	       /v1/quotas and /v1/quotas/{name}
//	Read   everything else: GET /v1/keys, /v1/keys/{key}, /v1/explain/{id}, /v1/serials/{name}/audit, /decodeSnowflakeId,
//	       Vesta's /expid, /transtime, /makeid, and unknown paths (so 404s need a token too)
func DefaultClassify(r *http.Request) Access {
	p := r.URL.Path
	if p == "" {
		p = "/"
	}
	p = path.Clean(p)
	readOnly := r.Method == http.MethodGet || r.Method == http.MethodHead
	switch {
	case p == "/healthz" || p == "/readyz" || p == "/metrics" || p == "/openapi.json":
		return Access{Level: Open}
	case p == "/ui" || strings.HasPrefix(p, prefixUI):
		return Access{Level: Open}
	case strings.HasPrefix(p, prefixIDs):
		return Access{Level: Issue, Key: strings.TrimPrefix(p, prefixIDs)}
	case strings.HasPrefix(p, prefixLeafSeg):
		return Access{Level: Issue, Key: strings.TrimPrefix(p, prefixLeafSeg)}
	case strings.HasPrefix(p, prefixLeafSnow):
		return Access{Level: Issue, Key: strings.TrimPrefix(p, prefixLeafSnow)}
	case p == pathLeafSnowAll || p == "/genid":
		return Access{Level: Issue}
	case strings.HasPrefix(p, prefixTinyid):
		return Access{Level: Issue, Key: TinyidKey(r)}
	case p == pathSerials:
		if readOnly {
			return Access{Level: Read}
		}
		return Access{Level: Admin}
	case strings.HasPrefix(p, prefixSerials):
		// A serial is issued under its own name: a token limited to
		// keys names the serials it may issue, not the keys they draw on.
		// Reserving, committing and voiding a gap-free serial's number
		// issue it; its audit reads.
		name, step, _ := strings.Cut(strings.TrimPrefix(p, prefixSerials), "/")
		if step == "audit" && readOnly {
			return Access{Level: Read}
		}
		return Access{Level: Issue, Key: name}
	case p == "/v1/sources" || p == "/v1/counters" || p == "/v1/quotas" ||
		strings.HasPrefix(p, "/v1/sources/") || strings.HasPrefix(p, "/v1/counters/") || strings.HasPrefix(p, "/v1/quotas/"):
		// Defining and retiring sources, counters and quotas administers
		// the node; reading them does not.
		if readOnly {
			return Access{Level: Read}
		}
		return Access{Level: Admin}
	case p == "/v1/keys":
		if readOnly {
			return Access{Level: Read}
		}
		return Access{Level: Admin}
	case strings.HasPrefix(p, prefixKeys):
		if readOnly {
			return Access{Level: Read}
		}
		return Access{Level: Admin, Key: strings.TrimPrefix(p, prefixKeys)}
	}
	return Access{Level: Read}
}

// TinyidKey returns the key a Tinyid request names: its bizType parameter,
// from the query string or a url-encoded form body (which it parses and
// leaves on the request). It returns "" when there is none, or when
// bizType is given more than once with different values, so that the key
// authorized is always the key issued for: server/compat refuses such
// requests with a 400.
func TinyidKey(r *http.Request) string {
	vals := r.URL.Query()[tinyidKeyParam]
	if parseForm(r) {
		vals = append(vals, r.PostForm[tinyidKeyParam]...)
	}
	if len(vals) == 0 {
		return ""
	}
	for _, v := range vals[1:] {
		if v != vals[0] {
			return ""
		}
	}
	return vals[0]
}
