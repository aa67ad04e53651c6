// Package httpapi is idforge's HTTP transport: the Leaf-compatible
// endpoints, the JSON API under /v1, and health checks. Every failure is
// answered with a JSON body {"error":{"code","message"}} and the status of
// its code in idforge's one error vocabulary (see idforge.Code).
package httpapi

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/api"
	"github.com/idforge/idforge/internal/budget"
	"github.com/idforge/idforge/internal/httperr"
	"github.com/idforge/idforge/internal/httpmux"
	"github.com/idforge/idforge/internal/httpwire"
	"github.com/idforge/idforge/issuer"
	"github.com/idforge/idforge/quota"
)

// maxBodyBytes bounds request bodies.
const maxBodyBytes = 64 << 10

// v1Routes are the endpoints of the JSON API: each method of a path
// with the query parameters it reads. Any other parameter is refused with
// 400 invalid_argument (see checkQuery), so a misspelt one is reported,
// not ignored; a path answers 405 to the methods it does not list.
var v1Routes = []v1Route{
	{"GET", "/v1/ids/{key}", (*handler).ids, []string{"count", "format", "form"}},
	{"GET", "/v1/keys", (*handler).keys, []string{"limit", "after"}},
	{"POST", "/v1/keys", (*handler).createKey, nil},
	{"GET,PATCH,DELETE", "/v1/keys/{key}", (*handler).keyRoute, nil}, // keyadmin.go
	{"GET", "/v1/explain/{id}", (*handler).explain, []string{"source"}},
	{"GET", "/v1/decode/{key}/{value}", (*handler).decode, []string{"format"}},
	{"GET,POST", "/v1/serials", (*handler).serials, nil},
	{"GET", "/v1/serials/{name}", (*handler).nextSerials, []string{"count", httpwire.SerialParamPrefix}},
	// Gap-free serials (gapless.go).
	{"GET", "/v1/serials/{name}/{step}", (*handler).gapless, []string{"from", "to"}},
	{"POST", "/v1/serials/{name}/{step}", (*handler).gapless, []string{httpwire.SerialParamPrefix}},
	{"GET", "/v1/health/sources", (*handler).sourcesHealth, nil},
	{"GET", "/v1/node", (*handler).nodeInfo, nil},
	// Sources and counters defined through the API (sources.go).
	{"GET,POST", "/v1/sources", (*handler).definitions, nil},
	{"GET,DELETE", "/v1/sources/{name}", (*handler).definition, nil},
	{"GET,POST", "/v1/counters", (*handler).definitions, nil},
	{"GET,DELETE", "/v1/counters/{name}", (*handler).definition, nil},
	// Quotas (package quota; quotas.go).
	{"GET,POST", "/v1/quotas", (*handler).quotas, nil},
	{"GET,DELETE", "/v1/quotas/{name}", (*handler).quota, nil},
}

// v1Route is an endpoint of the JSON API: methods of a path that read
// the same query parameters.
type v1Route struct {
	methods, pattern string
	serve            func(*handler, v1Call) (any, error)
	params           []string
}

// Options configure the handler.
type Options struct {
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// RequestTimeout bounds how long a request for IDs may wait for the
	// store. Default 5 s.
	RequestTimeout time.Duration
	// Metrics, when set, is served at GET /metrics.
	Metrics http.Handler
	// Node is what GET /v1/node says about the node besides its sources.
	Node NodeInfo
	// Quotas, when set, is served under /v1/quotas; without it those
	// endpoints answer 404.
	Quotas *quota.Manager
}

type handler struct {
	node    NodeInfo
	iss     *issuer.Issuer
	log     *slog.Logger
	timeout time.Duration
	qm      *quota.Manager
}

// New returns the HTTP handler serving iss, and the API's description
// (api.OpenAPI) at GET /openapi.json.
func New(iss *issuer.Issuer, opts Options) http.Handler {
	h := &handler{iss: iss, log: opts.Logger, timeout: opts.RequestTimeout, node: opts.Node, qm: opts.Quotas}
	if h.log == nil {
		h.log = slog.Default()
	}
	if h.timeout <= 0 {
		h.timeout = idforge.DefaultRequestTimeout
	}
	mux := httpmux.New()
	// allow gathers every path's methods; refuse answers the others.
	allow := map[string][]string{}
	var paths []string
	handle := func(methods, pattern string, fn http.HandlerFunc) {
		if allow[pattern] == nil {
			paths = append(paths, pattern)
		}
		for _, m := range strings.Split(methods, ",") {
			mux.HandleFunc(m+" "+pattern, fn)
			allow[pattern] = append(allow[pattern], m)
		}
	}
	// refuse answers a path's other methods: a JSON 405 rather than the
	// mux's plain-text one.
	refuse := func() {
		for _, pattern := range paths {
			methods := strings.Join(allow[pattern], ",")
			mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Allow", methods)
				h.writeError(w, r, fmt.Errorf("%w: %s; use %s", idforge.ErrMethodNotAllowed, r.Method, methods))
			})
		}
	}
	// Leaf's endpoints answer GET and POST (Leaf's @RequestMapping takes
	// any method, but one that cannot carry the ID away must not draw
	// it: see leafID).
	mux.HandleFunc("/api/segment/get/{key}", h.leafSegment)
	// The two hot routes skip the mux's matching (see
	// httpmux.Mux.HandleLast); the patterns above and below answer the
	// same paths the same way.
	mux.HandleLast("", "/api/segment/get/", func(w http.ResponseWriter, r *http.Request, key string) {
		h.leafID(w, r, key, h.iss.NextSegment)
	})
	mux.HandleFunc("/api/snowflake/get/{key}", h.leafSnowflake)
	mux.HandleFunc("/api/snowflake/get", h.leafSnowflake)
	mux.HandleFunc("/decodeSnowflakeId", h.leafDecode)
	// A missing key, or one with a '/', reaches these prefixes.
	for _, p := range []string{"/api/segment/get/", "/api/snowflake/get/", "/v1/ids/", "/v1/keys/", "/v1/explain/", "/v1/serials/", "/v1/sources/", "/v1/counters/", "/v1/quotas/"} {
		mux.HandleFunc(p, h.badKeyPath)
	}
	for _, rt := range v1Routes {
		for _, m := range strings.Split(rt.methods, ",") {
			handle(m, rt.pattern, h.v1(m+" "+rt.pattern, rt.serve, rt.params))
			if rt.pattern == "/v1/ids/{key}" {
				mux.HandleLast(m, "/v1/ids/", h.v1Key(m+" "+rt.pattern, rt.serve, rt.params))
			}
		}
	}
	handle("GET", "/healthz", h.healthz)
	handle("GET", "/readyz", h.readyz)
	if opts.Metrics != nil {
		handle("GET", "/metrics", opts.Metrics.ServeHTTP)
	}
	handle("GET", "/openapi.json", serveOpenAPI)
	refuse()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		h.writeError(w, r, fmt.Errorf("%w: %s", idforge.ErrNoEndpoint, r.URL.Path))
	})
	return mux
}

func (h *handler) badKeyPath(w http.ResponseWriter, r *http.Request) {
	h.writeError(w, r, fmt.Errorf("%w: the path must end in one key with no '/' (got %q)", idforge.ErrInvalidKey, r.URL.Path))
}

// withTimeout bounds a request that may wait on the store.
// The timer starts only if the request has to wait (see budget.Ctx):
// release the context when the request is answered.
func (h *handler) withTimeout(r *http.Request) *budget.Ctx {
	return budget.New(r.Context(), h.timeout)
}

// textPlain is the Content-Type of a text answer, shared by every
// answer rather than allocated for each (net/http only reads it).
var textPlain = []string{"text/plain; charset=utf-8"}

func writeText(w http.ResponseWriter, s string) {
	w.Header()["Content-Type"] = textPlain
	io.WriteString(w, s)
}

// leafSegment serves Leaf's GET /api/segment/get/{key}: the ID as plain
// decimal text with 200, anything else non-200.
func (h *handler) leafSegment(w http.ResponseWriter, r *http.Request) {
	h.leafID(w, r, r.PathValue("key"), h.iss.NextSegment)
}

// leafSnowflake serves Leaf's GET /api/snowflake/get/{key}. Like Leaf, the
// key only has to be well formed: every key shares the node's generator.
func (h *handler) leafSnowflake(w http.ResponseWriter, r *http.Request) {
	if key := r.PathValue("key"); key != "" {
		if err := idforge.ValidateKeyName(key); err != nil {
			h.writeError(w, r, err)
			return
		}
	}
	h.leafID(w, r, r.PathValue("key"), h.iss.NextSnowflake)
}

// leafID answers one ID of key from next as Leaf does: plain decimal
// text with 200, anything else non-200.
func (h *handler) leafID(w http.ResponseWriter, r *http.Request, key string, next func(context.Context, string) (int64, error)) {
	if err := httpmux.Issuing(w, r, http.MethodGet, http.MethodPost); err != nil {
		h.writeError(w, r, err)
		return
	}
	ctx := h.withTimeout(r)
	defer ctx.Release()
	id, err := next(ctx, key)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeText(w, strconv.FormatInt(id, 10))
}

// ids serves GET /v1/ids/{key}?count=N&format=F, and with form=ranges
// the compact bulk answer (idRanges).
func (h *handler) ids(c v1Call) (any, error) {
	key, n, err := issueArgs(c, "key")
	if err != nil {
		return nil, err
	}
	format, err := queryValue(c.q, "format")
	if err != nil {
		return nil, err
	}
	if ranges, err := readForm(c, format); err != nil || ranges {
		if err != nil {
			return nil, err
		}
		return h.idRanges(c, key, n)
	}
	ids, err := h.iss.NextStrings(c.ctx, key, n, format)
	return httpwire.IDs{Key: key, IDs: ids}, err
}

// issueArgs reads what every endpoint that issues values takes, in the
// order they are checked: a method that can carry the values away (GET:
// see httpmux.Issuing), the name in the path (a well-formed key name)
// and the count.
func issueArgs(c v1Call, path string) (string, int, error) {
	if err := httpmux.Issuing(c.w, c.r, http.MethodGet); err != nil {
		return "", 0, err
	}
	name := c.pathValue(path)
	if err := idforge.ValidateKeyName(name); err != nil {
		return "", 0, err
	}
	n, err := parseCount(c.q)
	return name, n, err
}

// queryValue returns the single value of a query parameter, "" if absent.
func queryValue(q url.Values, name string) (string, error) {
	vals := q[name]
	if len(vals) > 1 {
		return "", fmt.Errorf("%w: %s given %d times", idforge.ErrInvalidArgument, name, len(vals))
	}
	if len(vals) == 0 {
		return "", nil
	}
	return vals[0], nil
}

// decodeResponse is the answer of GET /v1/decode/{key}/{value}.
type decodeResponse struct {
	Key   string `json:"key"`
	Value string `json:"value"`
	ID    string `json:"id"`
}

// decode serves GET /v1/decode/{key}/{value}[?format=]: a string ID of the
// key's format back to its integer. It checks the form only, not that the
// ID was issued.
func (h *handler) decode(c v1Call) (any, error) {
	key, value := c.r.PathValue("key"), c.r.PathValue("value")
	format, err := queryValue(c.q, "format")
	if err != nil {
		return nil, err
	}
	id, err := h.iss.Decode(c.ctx, key, value, format)
	return decodeResponse{Key: key, Value: value, ID: strconv.FormatInt(id, 10)}, err
}

// parseCount reads the count parameter of a query: absent means 1,
// otherwise a decimal integer in [1, idforge.MaxCount].
func parseCount(q url.Values) (int, error) {
	vals, ok := q["count"]
	if !ok {
		return 1, nil
	}
	if len(vals) != 1 {
		return 0, fmt.Errorf("%w: count given %d times", idforge.ErrInvalidCount, len(vals))
	}
	s := vals[0]
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: %q is not a whole number (want 1..%d)", idforge.ErrInvalidCount, s, idforge.MaxCount)
	}
	if n < 1 || n > idforge.MaxCount {
		return 0, fmt.Errorf("%w: %d is out of range (want 1..%d)", idforge.ErrInvalidCount, n, idforge.MaxCount)
	}
	return int(n), nil
}

func toRange(s idforge.Segment) *httpwire.Range {
	if s.Len() == 0 {
		return nil
	}
	return &httpwire.Range{Start: strconv.FormatInt(s.Start, 10), End: strconv.FormatInt(s.End, 10)}
}

func toKeyJSON(k issuer.KeyState) httpwire.Key {
	out := httpwire.Key{Key: k.Name, Strategy: string(k.Strategy), Description: k.Description, Format: k.Format, Plugins: k.Plugins}
	if !k.Updated.IsZero() {
		u := k.Updated
		out.Updated = &u
	}
	if k.Strategy == idforge.StrategySegment {
		out.Step = k.Step
		out.MaxID = strconv.FormatInt(k.MaxID, 10)
		out.Order = string(k.Order)
	}
	out.Retired, out.MinStep, out.MaxStep = k.Retired, k.Bounds.MinStep, k.Bounds.MaxStep
	if st := k.Segment; st != nil {
		s := &httpwire.Segment{
			Current: toRange(st.Current), Pending: toRange(st.Pending),
			Buffered: st.Buffered, BufferedSeconds: st.BufferedFor.Seconds(), Rate: st.Rate, Issued: st.Issued, Waits: st.Waits,
			Step: st.Step, Loads: st.Loads, Failures: st.Failures,
		}
		if s.Current != nil {
			s.Next = strconv.FormatInt(st.Next, 10)
		}
		if st.LastError != nil {
			s.LastError = st.LastError.Error()
		}
		if st.ClaimedUpTo > 0 {
			s.ClaimedUpTo = strconv.FormatInt(st.ClaimedUpTo, 10)
		}
		out.Segment = s
		out.LastError, out.LastErrorAt = lastError(st.LastFailure, st.LastFailureAt)
	}
	if src := k.Source; src != nil {
		out.Health = string(src.Health)
		out.LastError, out.LastErrorAt = lastError(src.LastError, src.LastErrorAt)
	}
	return out
}

// keys serves GET /v1/keys: one page of the keys.
func (h *handler) keys(c v1Call) (any, error) {
	limit, after, err := keysPage(c.q)
	if err != nil {
		return nil, err
	}
	states, err := h.iss.Keys(c.ctx)
	if err != nil {
		return nil, err
	}
	// Keys answers in name order: the page starts past after.
	from, _ := slices.BinarySearchFunc(states, after, func(k issuer.KeyState, name string) int {
		if k.Name <= name {
			return -1
		}
		return 1
	})
	states = states[from:]
	resp := httpwire.Keys{Snowflake: h.snowflakeInfo()}
	if len(states) > limit {
		states = states[:limit]
		resp.Next = states[limit-1].Name
	}
	resp.Keys = make([]httpwire.Key, len(states))
	for i, k := range states {
		resp.Keys[i] = toKeyJSON(k)
	}
	return resp, nil
}

// keysPage reads the limit and after parameters of GET /v1/keys.
func keysPage(q url.Values) (limit int, after string, err error) {
	if after, err = queryValue(q, "after"); err != nil {
		return 0, "", err
	}
	s, err := queryValue(q, "limit")
	if err != nil || s == "" {
		return httpwire.DefaultKeysPage, after, err
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > httpwire.MaxKeysPage {
		return 0, "", fmt.Errorf("%w: limit %q: want a whole number in 1..%d", idforge.ErrInvalidArgument, s, httpwire.MaxKeysPage)
	}
	return n, after, nil
}

func (h *handler) key(c v1Call) (any, error) {
	k, err := h.iss.Key(c.ctx, c.r.PathValue("key"))
	return toKeyJSON(k), err
}

// createKeyRequest is the body of POST /v1/keys. A step or start left
// out or 0 takes its default (issuer.WithDefaults).
type createKeyRequest struct {
	Key         string `json:"key"`
	Strategy    string `json:"strategy"`
	Step        int64  `json:"step"`
	Start       int64  `json:"start"`
	Description string `json:"description"`
	Order       string `json:"order"`
}

func (h *handler) createKey(c v1Call) (any, error) {
	var req createKeyRequest
	if err := decodeJSON(c.w, c.r, &req); err != nil {
		return nil, err
	}
	k, err := req.key()
	if err == nil {
		err = h.iss.CreateKey(c.ctx, k)
	}
	return created{toKeyJSON(issuer.KeyState{Key: k})}, err
}

// key applies the defaults of a key definition to a request and checks
// the key (the rules that need the key's format are the issuer's, at
// creation).
func (req createKeyRequest) key() (idforge.Key, error) {
	k := issuer.WithDefaults(idforge.Key{Name: req.Key, Strategy: idforge.Strategy(req.Strategy),
		Step: req.Step, MaxID: req.Start, Description: req.Description, Order: idforge.Order(req.Order)})
	return k, k.Validate()
}

// serveOpenAPI answers the OpenAPI 3.1 document of the HTTP API.
func serveOpenAPI(w http.ResponseWriter, r *http.Request) {
	httperr.JSONHeaders(w)
	w.Write(api.OpenAPI())
}

func (h *handler) healthz(w http.ResponseWriter, r *http.Request) {
	WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// readyResponse is the answer of GET /readyz. Its size does not grow
// with the number of keys unless the caller asks for them (verbose).
type readyResponse struct {
	// Status is "ready", "degraded" (the store is failing but every active
	// segment key still has buffered IDs) or "unavailable".
	Status string `json:"status"`
	// Store is "ok" or the store's error.
	Store string `json:"store"`
	// SegmentKeys counts the segment keys this node has issued from; of
	// them, FailingKeys are those whose claims fail and EmptyKeys those
	// with no IDs buffered.
	SegmentKeys int `json:"segment_keys"`
	FailingKeys int `json:"failing_keys,omitempty"`
	EmptyKeys   int `json:"empty_keys,omitempty"`
	// Keys gives, with ?verbose=1 only, per segment key this node has
	// issued from, the IDs left and how long they last at the current
	// rate.
	Keys map[string]bufferJSON `json:"keys,omitempty"`
	// Sources summarises the sequence sources that are not up.
	Sources map[string]sourceSummary `json:"sources,omitempty"`
	// Snowflake says why the snowflake generator refuses to issue (the
	// clock is behind what it issued beyond the allowed wait, or the
	// worker ID's lease is lost): the node is unavailable until it
	// issues again.
	Snowflake string `json:"snowflake,omitempty"`
}

type bufferJSON struct {
	BufferedIDs     int64   `json:"buffered_ids"`
	BufferedSeconds float64 `json:"buffered_seconds"`
	FailingClaims   int     `json:"failing_claims,omitempty"`
}

// readyz answers 200 while the node can issue: the store answers, or it
// does not but every active segment key still has IDs buffered
// ("degraded"); otherwise, or while the snowflake generator refuses to
// issue, 503. ?verbose=1 adds every key's buffers.
func (h *handler) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	rd := h.iss.Readiness(ctx)
	resp := readyResponse{Status: rd.Status, Store: "ok", SegmentKeys: len(rd.Keys)}
	if rd.StoreErr != nil {
		resp.Store = rd.StoreErr.Error()
	}
	verbose, _ := strconv.ParseBool(r.URL.Query().Get("verbose"))
	if verbose {
		resp.Keys = make(map[string]bufferJSON, len(rd.Keys))
	}
	for _, k := range rd.Keys {
		st := k.Segment
		if st.Failures > 0 {
			resp.FailingKeys++
		}
		if st.Buffered == 0 {
			resp.EmptyKeys++
		}
		if verbose {
			resp.Keys[k.Name] = bufferJSON{BufferedIDs: st.Buffered, BufferedSeconds: st.BufferedFor.Seconds(), FailingClaims: st.Failures}
		}
	}
	resp.Sources = summarise(rd.Sources)
	if rd.Snowflake != nil {
		resp.Snowflake = rd.Snowflake.Error()
	}
	status := http.StatusOK
	if !rd.CanServe() {
		status = http.StatusServiceUnavailable
	}
	WriteJSON(w, status, resp)
}
