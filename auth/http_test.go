package auth

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/idforge/idforge/internal/httperr"
)

// echo answers 200 with the caller's name, or "open".
var echo = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	c, ok := CallerFrom(r.Context())
	if !ok {
		io.WriteString(w, "open")
		return
	}
	io.WriteString(w, c.Name)
})

type httpCase struct {
	name   string
	method string
	path   string
	bearer string // Authorization: Bearer …, when set
	header string // a raw Authorization header, when set
	form   string // a url-encoded body, when set
	status int
	code   string // error code, for failures
	body   string // answer, for successes
}

func runHTTP(t *testing.T, srv *httptest.Server, tc httpCase) *http.Response {
	t.Helper()
	method := tc.method
	if method == "" {
		method = http.MethodGet
	}
	var body io.Reader
	if tc.form != "" {
		body = strings.NewReader(tc.form)
	}
	req, err := http.NewRequest(method, srv.URL+tc.path, body)
	if err != nil {
		t.Fatal(err)
	}
	if tc.form != "" {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if tc.bearer != "" {
		req.Header.Set("Authorization", "Bearer "+tc.bearer)
	}
	if tc.header != "" {
		req.Header.Set("Authorization", tc.header)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != tc.status {
		t.Fatalf("%s %s: status %d (%s), want %d", method, tc.path, resp.StatusCode, raw, tc.status)
	}
	if tc.status == http.StatusOK {
		if string(raw) != tc.body {
			t.Errorf("%s %s: body %q, want %q", method, tc.path, raw, tc.body)
		}
		return resp
	}
	var eb httperr.Body
	if err := json.Unmarshal(raw, &eb); err != nil || string(eb.Error.Code) != tc.code || eb.Error.Message == "" {
		t.Errorf("%s %s: body %s, want error code %q with a message", method, tc.path, raw, tc.code)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	return resp
}

func TestMiddleware(t *testing.T) {
	a, _ := newTestAuth(t)
	srv := httptest.NewServer(a.Middleware(echo, nil))
	defer srv.Close()
	tests := []httpCase{
		{name: "healthz open", path: "/healthz", status: 200, body: "open"},
		{name: "readyz open", path: "/readyz", status: 200, body: "open"},
		{name: "metrics open", path: "/metrics", status: 200, body: "open"},
		{name: "openapi open", path: "/openapi.json", status: 200, body: "open"},
		{name: "ui open", path: "/ui", status: 200, body: "open"},
		{name: "missing token", path: "/v1/ids/order", status: 401, code: "unauthenticated"},
		{name: "wrong token", path: "/v1/ids/order", bearer: unknownTok, status: 401, code: "unauthenticated"},
		{name: "not bearer", path: "/v1/ids/order", header: "Basic YWxhZGRpbjpvcGVuc2VzYW1l", status: 401, code: "unauthenticated"},
		{name: "bearer lower case", path: "/v1/ids/order", header: "bearer " + issueTok, status: 200, body: "issue"},
		{name: "issue token issues", path: "/v1/ids/order?count=3", bearer: issueTok, status: 200, body: "issue"},
		{name: "query token", path: "/v1/ids/order?token=" + issueTok, status: 200, body: "issue"},
		{name: "key token, its key", path: "/api/segment/get/order", bearer: orderTok, status: 200, body: "order"},
		{name: "key token, other key", path: "/v1/ids/msg", bearer: orderTok, status: 403, code: "forbidden"},
		{name: "key token, keyless genid", path: "/genid", bearer: orderTok, status: 403, code: "forbidden"},
		{name: "key token reads keys", path: "/v1/keys", bearer: orderTok, status: 200, body: "order"},
		{name: "issue token on admin call", method: "POST", path: "/v1/keys", bearer: issueTok, status: 403, code: "forbidden"},
		{name: "admin creates keys", method: "POST", path: "/v1/keys", bearer: adminTok, status: 200, body: "admin"},
		{name: "unknown path needs a token", path: "/nope", status: 401, code: "unauthenticated"},
		{name: "tinyid query token", path: "/tinyid/id/nextIdSimple?bizType=order&token=" + orderTok, status: 200, body: "order"},
		{name: "tinyid other key", path: "/tinyid/id/nextIdSimple?bizType=msg&token=" + orderTok, status: 403, code: "forbidden"},
		{name: "tinyid post, query token", method: "POST", path: "/tinyid/id/nextSegmentIdSimple?token=" + orderTok + "&bizType=order", form: "", status: 200, body: "order"},
		{name: "tinyid form token and key", method: "POST", path: "/tinyid/id/nextId", form: "bizType=order&token=" + orderTok, status: 200, body: "order"},
		{name: "tinyid ambiguous key", method: "POST", path: "/tinyid/id/nextId?bizType=order", form: "bizType=msg&token=" + orderTok, status: 403, code: "forbidden"},
		{name: "unclean path", path: "/ui/../v1/ids/msg", bearer: orderTok, status: 403, code: "forbidden"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp := runHTTP(t, srv, tc)
			if tc.status == http.StatusUnauthorized && !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("401 without WWW-Authenticate: Bearer (got %q)", resp.Header.Get("WWW-Authenticate"))
			}
		})
	}
}

func TestMiddlewareRateLimit(t *testing.T) {
	a, clk := newTestAuth(t)
	srv := httptest.NewServer(a.Middleware(echo, nil))
	defer srv.Close()
	ok := httpCase{path: "/v1/ids/order", bearer: limitedTok, status: 200, body: "limited"}
	runHTTP(t, srv, ok)
	runHTTP(t, srv, ok)
	resp := runHTTP(t, srv, httpCase{path: "/v1/ids/order", bearer: limitedTok, status: 429, code: "rate_limited"})
	if ra := resp.Header.Get("Retry-After"); ra != "1" {
		t.Errorf("Retry-After %q, want 1", ra)
	}
	clk.advance(time.Second)
	runHTTP(t, srv, ok) // recovered
}

func TestMiddlewareCustomClassify(t *testing.T) {
	a, _ := newTestAuth(t)
	everythingAdmin := func(*http.Request) Access { return Access{} }
	srv := httptest.NewServer(a.Middleware(echo, everythingAdmin))
	defer srv.Close()
	runHTTP(t, srv, httpCase{path: "/healthz", bearer: issueTok, status: 403, code: "forbidden"})
	runHTTP(t, srv, httpCase{path: "/healthz", bearer: adminTok, status: 200, body: "admin"})
}

func TestDefaultClassify(t *testing.T) {
	tests := []struct {
		method, target string
		want           Access
	}{
		{"GET", "/healthz", Access{Level: Open}},
		{"GET", "/readyz", Access{Level: Open}},
		{"GET", "/metrics", Access{Level: Open}},
		{"GET", "/openapi.json", Access{Level: Open}},
		{"GET", "/ui", Access{Level: Open}},
		{"GET", "/ui/", Access{Level: Open}},
		{"GET", "/v1/ids/order?count=5", Access{Level: Issue, Key: "order"}},
		{"GET", "/api/segment/get/order", Access{Level: Issue, Key: "order"}},
		{"GET", "/api/snowflake/get/msg", Access{Level: Issue, Key: "msg"}},
		{"GET", "/api/snowflake/get", Access{Level: Issue}},
		{"GET", "/genid", Access{Level: Issue}},
		{"GET", "/tinyid/id/nextId?bizType=order&batchSize=3", Access{Level: Issue, Key: "order"}},
		{"GET", "/tinyid/id/nextId?bizType=order&bizType=order", Access{Level: Issue, Key: "order"}},
		{"GET", "/tinyid/id/nextId?bizType=order&bizType=msg", Access{Level: Issue}},
		{"GET", "/tinyid/id/nextId", Access{Level: Issue}},
		{"GET", "/v1/keys", Access{Level: Read}},
		{"HEAD", "/v1/keys", Access{Level: Read}},
		{"POST", "/v1/keys", Access{Level: Admin}},
		{"GET", "/v1/keys/order", Access{Level: Read}},
		{"DELETE", "/v1/keys/order", Access{Level: Admin, Key: "order"}},
		{"GET", "/v1/explain/123", Access{Level: Read}},
		{"GET", "/v1/serials", Access{Level: Read}},
		{"POST", "/v1/serials", Access{Level: Admin}},
		{"POST", "/v1/serials/", Access{Level: Admin}},
		{"GET", "/v1/serials/bill?count=3", Access{Level: Issue, Key: "bill"}},
		{"POST", "/v1/serials/bill/reserve", Access{Level: Issue, Key: "bill"}},
		{"POST", "/v1/serials/bill/void", Access{Level: Issue, Key: "bill"}},
		{"GET", "/v1/serials/bill/audit?from=1", Access{Level: Read}},
		{"GET", "/v1/decode/order/abc", Access{Level: Read}},
		{"GET", "/decodeSnowflakeId?snowflakeId=1", Access{Level: Read}},
		{"GET", "/expid?id=1", Access{Level: Read}},
		{"GET", "/makeid?time=1&seq=0", Access{Level: Read}},
		{"GET", "/transtime?time=1", Access{Level: Read}},
		{"GET", "/", Access{Level: Read}},
		{"GET", "/healthz/../v1/keys", Access{Level: Read}},
	}
	for _, tc := range tests {
		r := httptest.NewRequest(tc.method, tc.target, nil)
		if got := DefaultClassify(r); got != tc.want {
			t.Errorf("DefaultClassify(%s %s) = %v %q, want %v %q", tc.method, tc.target, got.Level, got.Key, tc.want.Level, tc.want.Key)
		}
	}
}

// A Refuser answers the refusals it takes in its own protocol; the rest
// get the middleware's JSON error, and authorized requests never reach it.
func TestMiddlewareRefusing(t *testing.T) {
	a, _ := newTestAuth(t)
	var offered []string
	refuse := func(w http.ResponseWriter, r *http.Request, status int, code, message string) bool {
		offered = append(offered, fmt.Sprintf("%d %s", status, code))
		if !strings.HasPrefix(r.URL.Path, "/legacy/") {
			return false
		}
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, "legacy refusal: "+code)
		return true
	}
	srv := httptest.NewServer(a.MiddlewareRefusing(echo, nil, refuse))
	defer srv.Close()
	runHTTP(t, srv, httpCase{path: "/legacy/x", status: 200, body: "legacy refusal: unauthenticated"})
	runHTTP(t, srv, httpCase{path: "/legacy/x", header: "Basic YWxhZGRpbjpvcGVuc2VzYW1l", status: 200, body: "legacy refusal: unauthenticated"})
	runHTTP(t, srv, httpCase{path: "/v1/ids/msg", bearer: orderTok, status: 403, code: "forbidden"})
	runHTTP(t, srv, httpCase{path: "/v1/ids/order", bearer: orderTok, status: 200, body: "order"})
	if got := strings.Join(offered, ","); got != "401 unauthenticated,401 unauthenticated,403 forbidden" {
		t.Fatalf("refusals offered: %s", got)
	}
}
