package compat

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/budget"
	"github.com/idforge/idforge/internal/httperr"
	"github.com/idforge/idforge/internal/httpmux"
	"github.com/idforge/idforge/issuer"
)

// maxFormBytes bounds a url-encoded request body.
const maxFormBytes = 64 << 10

// Options configure the handler. The zero value of every field means the
// default.
type Options struct {
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// RequestTimeout bounds how long a request may wait for the store.
	// Default 5 s.
	RequestTimeout time.Duration
	// Location is the time zone of Vesta's transtime answer, as a Java
	// server's default zone would be. Default time.Local.
	Location *time.Location
}

type handler struct {
	iss     *issuer.Issuer
	log     *slog.Logger
	timeout time.Duration
	loc     *time.Location
}

// Paths returns the patterns New's handler answers, for mounting it on a
// mux beside server/httpapi: "/tinyid/" and Vesta's four paths.
func Paths() []string {
	return []string{"/tinyid/", "/genid", "/expid", "/transtime", "/makeid"}
}

// New returns the handler of Tinyid's and Vesta's HTTP APIs over iss. See
// the package documentation for the endpoints.
func New(iss *issuer.Issuer, opts Options) http.Handler {
	h := &handler{iss: iss, log: opts.Logger, timeout: opts.RequestTimeout, loc: opts.Location}
	if h.log == nil {
		h.log = slog.Default()
	}
	if h.timeout <= 0 {
		h.timeout = idforge.DefaultRequestTimeout
	}
	if h.loc == nil {
		h.loc = time.Local
	}
	mux := httpmux.New()
	// The endpoints that issue answer GET and POST, as their clients
	// call them; the others any method, as the Java servers do.
	mux.HandleFunc("/tinyid/id/nextId", issuing(h.tinyidNextID, h.writeTinyidError))
	mux.HandleFunc("/tinyid/id/nextIdSimple", issuing(h.tinyidNextIDSimple, h.writeError))
	mux.HandleFunc("/tinyid/id/nextSegmentId", issuing(h.tinyidNextSegment, h.writeTinyidError))
	mux.HandleFunc("/tinyid/id/nextSegmentIdSimple", issuing(h.tinyidNextSegmentSimple, h.writeError))
	mux.HandleFunc("/genid", issuing(h.vestaGenID, h.writeError))
	mux.HandleFunc("/expid", h.vestaExpID)
	mux.HandleFunc("/transtime", h.vestaTransTime)
	mux.HandleFunc("/makeid", h.vestaMakeID)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		h.writeError(w, r, fmt.Errorf("%w: %s", idforge.ErrNoEndpoint, r.URL.Path))
	})
	return mux
}

// issuing answers only GET and POST on an endpoint that issues values
// (httpmux.Issuing): a HEAD request, or one of a method the endpoint
// does not document, is answered 405 with fail and draws nothing.
func issuing(serve http.HandlerFunc, fail func(http.ResponseWriter, *http.Request, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := httpmux.Issuing(w, r, http.MethodGet, http.MethodPost); err != nil {
			fail(w, r, err)
			return
		}
		serve(w, r)
	}
}

// withTimeout bounds a request that may wait on the store.
// The timer starts only if the request has to wait (see budget.Ctx):
// release the context when the request is answered.
func (h *handler) withTimeout(r *http.Request) *budget.Ctx {
	return budget.New(r.Context(), h.timeout)
}

// params returns a request's parameters: its query string and, for a
// url-encoded body, the body's fields, as Spring binds them. A malformed
// query or body is an error wrapping idforge.ErrInvalidArgument.
func params(w http.ResponseWriter, r *http.Request) (url.Values, error) {
	if r.Body != nil && r.PostForm == nil {
		r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	}
	if err := r.ParseForm(); err != nil {
		return nil, fmt.Errorf("%w: malformed query string or form body: %v", idforge.ErrInvalidArgument, err)
	}
	return r.Form, nil
}

// tinyidErrorBody adds Tinyid's own fields to idforge's error body: null
// data, Tinyid's code 6 (ErrorCode.SYS_ERR) and the message.
type tinyidErrorBody struct {
	httperr.Body
	Data    *struct{} `json:"data"`
	Code    int       `json:"code"`
	Message string    `json:"message"`
}

// tinyidSysErr is Tinyid's ErrorCode.SYS_ERR.
const tinyidSysErr = 6

// writeError answers err with idforge's JSON error body.
func (h *handler) writeError(w http.ResponseWriter, r *http.Request, err error) {
	httperr.Write(w, r, h.log, err)
}

// writeTinyidError answers err with idforge's JSON error body plus
// Tinyid's fields.
func (h *handler) writeTinyidError(w http.ResponseWriter, r *http.Request, err error) {
	status, body := httperr.Of(h.log, r, err)
	writeJSON(w, status, tinyidErrorBody{Body: body, Code: tinyidSysErr, Message: err.Error()})
}

func writeJSON(w http.ResponseWriter, status int, v any) { httperr.WriteJSON(w, status, v) }

func writeText(w http.ResponseWriter, s string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Write([]byte(s))
}
