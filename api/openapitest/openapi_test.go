package openapitest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/errors"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/api"
	"github.com/idforge/idforge/auth"
	"github.com/idforge/idforge/issuer"
	"github.com/idforge/idforge/metrics"
	"github.com/idforge/idforge/segment"
	"github.com/idforge/idforge/sequence/compose"
	"github.com/idforge/idforge/server/compat"
	"github.com/idforge/idforge/server/httpapi"
	"github.com/idforge/idforge/server/ui"
	"github.com/idforge/idforge/snowflake"
	"github.com/idforge/idforge/store/memstore"
)

const (
	adminToken   = "admin-token-0123456789abcdef"
	issueToken   = "issue-token-0123456789abcdef" // may issue order only
	limitedToken = "limited-token-0123456789abcd" // one call, then 429
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// newServer starts the HTTP API as cmd/idforge mounts it (server/httpapi
// with metrics, server/compat, server/ui, behind the token middleware)
// over a memstore store and a snowflake generator.
func newServer(t *testing.T) *httptest.Server {
	t.Helper()
	gen, err := snowflake.New(snowflake.Settings{Worker: 5, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	// A balanced source whose second member's allocator is closed: the
	// first call ejects it, so its status has something to show.
	st := memstore.New()
	ctx := context.Background()
	for _, name := range []string{"ha-a", "ha-b"} {
		if err := st.CreateKey(ctx, idforge.Key{Name: name, Strategy: idforge.StrategySegment, Step: 10, MaxID: 1}); err != nil {
			t.Fatal(err)
		}
	}
	up, down := segment.New(st, "ha-a", segment.Settings{Logger: quiet}), segment.New(st, "ha-b", segment.Settings{Logger: quiet})
	down.Close()
	bal, err := compose.NewBalanced([]idforge.Generator{up, down}, compose.BalancedOptions{Names: []string{"up", "down"}, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bal.Close(); up.Close() })
	iss := issuer.New(st, gen, issuer.Settings{Logger: quiet, Sources: map[string]idforge.Generator{"ha": bal}})
	authn, err := auth.New(auth.Config{Tokens: []auth.Token{
		{Name: "admin", Token: adminToken, Role: auth.RoleAdmin},
		{Name: "issue", Token: issueToken, Role: auth.RoleIssue, Keys: []string{"order"}},
		{Name: "limited", Token: limitedToken, Role: auth.RoleAdmin, Rate: 0.0001, Burst: 1},
	}})
	if err != nil {
		t.Fatal(err)
	}
	root := http.NewServeMux()
	api := httpapi.New(iss, httpapi.Options{Logger: quiet, Metrics: metrics.New().Handler(),
		Node: httpapi.NodeInfo{Version: "test", Store: "memory:", Worker: "worker ID 5: the low 4 bits of IPv4 address 10.0.0.5"}})
	root.Handle("/", api)
	c := compat.New(iss, compat.Options{Logger: quiet})
	for _, p := range compat.Paths() {
		root.Handle(p, c)
	}
	root.Handle("/ui", ui.Handler(api))
	srv := httptest.NewServer(authn.MiddlewareRefusing(root, nil, compat.TinyidRefusal))
	t.Cleanup(func() {
		srv.Close()
		iss.Close()
		gen.Close()
	})
	return srv
}

func newValidator(t *testing.T) validator.Validator {
	t.Helper()
	doc, err := libopenapi.NewDocument(api.OpenAPI())
	if err != nil {
		t.Fatalf("api/openapi.json: %v", err)
	}
	v, errs := validator.NewValidator(doc)
	if len(errs) > 0 {
		t.Fatalf("api/openapi.json: %v", errs)
	}
	if ok, verrs := v.ValidateDocument(); !ok {
		t.Fatalf("api/openapi.json is not a valid OpenAPI document:\n%s", describe(verrs))
	}
	return v
}

func describe(errs []*errors.ValidationError) string {
	var b strings.Builder
	for _, e := range errs {
		fmt.Fprintf(&b, "  %s: %s", e.Message, e.Reason)
		for _, s := range e.SchemaValidationErrors {
			fmt.Fprintf(&b, "\n    %s at %s (schema %s)", s.Reason, s.FieldPath, s.KeywordLocation)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// call is one request of the walk and the status it must get.
type call struct {
	method, path, body, token string
	status                    int
	// code is the error code an error answer must carry.
	code string
	// into, when set, receives the answer's JSON.
	into any
}

// TestAnswersMatchTheDocument sends real requests, successes and every
// kind of refusal, and validates each answer (status, headers, body)
// against the document's schemas; the requests of the successes are
// validated too, so the document accepts what the server takes.
func TestAnswersMatchTheDocument(t *testing.T) {
	srv := newServer(t)
	v := newValidator(t)
	do := func(c call) string {
		t.Helper()
		req, err := http.NewRequest(c.method, srv.URL+c.path, strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		if c.body != "" {
			req.Header.Set("Content-Type", "application/json")
			if strings.HasPrefix(c.path, "/tinyid/") {
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			}
		}
		if c.token != "" {
			req.Header.Set("Authorization", "Bearer "+c.token)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		name := c.method + " " + c.path
		if resp.StatusCode != c.status {
			t.Errorf("%s: %d %s, want %d", name, resp.StatusCode, raw, c.status)
			return string(raw)
		}
		if c.code != "" {
			var body struct {
				Error struct{ Code string } `json:"error"`
			}
			if json.Unmarshal(raw, &body); body.Error.Code != c.code {
				t.Errorf("%s: code %q (%s), want %q", name, body.Error.Code, raw, c.code)
			}
		}
		if c.into != nil {
			if err := json.Unmarshal(raw, c.into); err != nil {
				t.Fatalf("%s: %v: %s", name, err, raw)
			}
		}
		// Validate against a fresh request: the server consumed the body.
		// A 405 is described under the methods the path takes (GET for
		// every path a 405 is tested on), since the refused method has no
		// operation.
		method := c.method
		if c.status == http.StatusMethodNotAllowed {
			method = http.MethodGet
		}
		vreq, _ := http.NewRequest(method, srv.URL+c.path, strings.NewReader(c.body))
		vreq.Header = req.Header.Clone()
		resp.Body = io.NopCloser(bytes.NewReader(raw))
		resp.Request = vreq
		if ok, errs := v.ValidateHttpResponse(vreq, resp); !ok {
			t.Errorf("%s: the %d answer does not match the document:\n%s  body: %s", name, resp.StatusCode, describe(errs), raw)
		}
		if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
			checkText(t, name, method, req.URL.Path, resp.StatusCode, string(raw))
		}
		if c.status < 400 {
			vreq, _ := http.NewRequest(c.method, srv.URL+c.path, strings.NewReader(c.body))
			vreq.Header = req.Header.Clone()
			if ok, errs := v.ValidateHttpRequest(vreq); !ok {
				t.Errorf("%s: the document refuses a request the server serves:\n%s", name, describe(errs))
			}
		}
		return string(raw)
	}

	var msg struct{ IDs []string }
	for _, c := range []call{
		{method: "POST", path: "/v1/keys", body: `{"key":"order","strategy":"segment","step":100,"description":"orders"}`, token: adminToken, status: 201},
		{method: "POST", path: "/v1/keys", body: `{"key":"msg","strategy":"snowflake"}`, token: adminToken, status: 201},
		{method: "POST", path: "/v1/keys", body: `{"key":"order"}`, token: adminToken, status: 409, code: "key_exists"},
		{method: "POST", path: "/v1/keys", body: `{"key":"x","step":1,"step":2}`, token: adminToken, status: 400, code: "invalid_argument"},
		{method: "POST", path: "/v1/serials", body: `{"name":"job","template":"@{param:area,chars=digits,max=4}-@{seq:order,width=5}"}`, token: adminToken, status: 201},
		{method: "GET", path: "/v1/ids/order?count=3", token: issueToken, status: 200},
		{method: "GET", path: "/v1/ids/order?count=3&form=ranges", token: issueToken, status: 200},
		{method: "GET", path: "/v1/ids/order?form=lines", token: issueToken, status: 400, code: "invalid_argument"},
		{method: "GET", path: "/v1/ids/msg?count=2", token: adminToken, status: 200, into: &msg},
		{method: "GET", path: "/v1/serials/job?count=2&param.area=010", token: adminToken, status: 200},
		{method: "GET", path: "/v1/serials", token: adminToken, status: 200},
		// Gap-free serials need a SQL store; this one is in memory.
		{method: "POST", path: "/v1/serials", body: `{"name":"inv","template":"I@{seq:n}","gapless":true,"expiry":"1m"}`, token: adminToken, status: 400, code: "invalid_argument"},
		{method: "POST", path: "/v1/serials/job/reserve?param.area=010", token: adminToken, status: 400, code: "wrong_strategy"},
		{method: "POST", path: "/v1/serials/job/commit", body: `{"reservation":"1-0123456789abcdef"}`, token: adminToken, status: 400, code: "wrong_strategy"},
		{method: "GET", path: "/v1/serials/job/audit?from=1&to=10", token: adminToken, status: 400, code: "wrong_strategy"},
		{method: "GET", path: "/v1/serials/job/reserve", token: adminToken, status: 405, code: "method_not_allowed"},
		{method: "GET", path: "/v1/keys", token: adminToken, status: 200},
		{method: "GET", path: "/v1/keys/order", token: adminToken, status: 200},
		{method: "GET", path: "/v1/keys/msg", token: adminToken, status: 200},
		{method: "GET", path: "/v1/ids/order?count=0", token: adminToken, status: 400, code: "invalid_count"},
		{method: "GET", path: "/v1/ids/order?cuont=2", token: adminToken, status: 400, code: "invalid_argument"},
		{method: "GET", path: "/v1/ids/nokey", token: adminToken, status: 404, code: "unknown_key"},
		{method: "GET", path: "/v1/keys/nokey", token: adminToken, status: 404, code: "unknown_key"},
		{method: "GET", path: "/v1/ids/order", status: 401, code: "unauthenticated"},
		{method: "GET", path: "/v1/ids/order", token: "wrong-token-0123456789abcdef", status: 401, code: "unauthenticated"},
		{method: "POST", path: "/v1/keys", body: `{"key":"other"}`, token: issueToken, status: 403, code: "forbidden"},
		{method: "GET", path: "/v1/ids/msg", token: issueToken, status: 403, code: "forbidden"},
		{method: "GET", path: "/v1/keys", token: limitedToken, status: 200},
		{method: "GET", path: "/v1/keys", token: limitedToken, status: 429, code: "rate_limited"},
		{method: "PUT", path: "/v1/keys/order", token: adminToken, status: 405, code: "method_not_allowed"},
		{method: "PATCH", path: "/v1/keys/order", body: `{"step":200,"description":"orders","min_step":100,"max_step":5000}`, token: adminToken, status: 200},
		{method: "PATCH", path: "/v1/keys/order", body: `{"description":null}`, token: adminToken, status: 400, code: "invalid_argument"},
		{method: "PATCH", path: "/v1/keys/order", body: `{"min_step":50,"max_step":10}`, token: adminToken, status: 400, code: "invalid_argument"},
		{method: "PATCH", path: "/v1/keys/nokey", body: `{"step":5}`, token: adminToken, status: 404, code: "unknown_key"},
		{method: "PATCH", path: "/v1/keys/order", body: `{"step":5}`, token: issueToken, status: 403, code: "forbidden"},
		{method: "POST", path: "/v1/keys", body: `{"key":"gone"}`, token: adminToken, status: 201},
		{method: "DELETE", path: "/v1/keys/gone", token: issueToken, status: 403, code: "forbidden"},
		{method: "DELETE", path: "/v1/keys/gone", token: adminToken, status: 200},
		{method: "DELETE", path: "/v1/keys/gone", token: adminToken, status: 200},
		{method: "DELETE", path: "/v1/keys/nokey", token: adminToken, status: 404, code: "unknown_key"},
		{method: "GET", path: "/v1/ids/gone", token: adminToken, status: 409, code: "retired"},
		{method: "PATCH", path: "/v1/keys/gone", body: `{"step":5}`, token: adminToken, status: 409, code: "retired"},
		{method: "POST", path: "/v1/keys", body: `{"key":"gone"}`, token: adminToken, status: 409, code: "key_exists"},
		{method: "GET", path: "/v1/explain/abc", token: adminToken, status: 400, code: "invalid_argument"},
		// This issuer serves no definitions: no date-packed source.
		{method: "GET", path: "/v1/explain/1?source=orders", token: adminToken, status: 400, code: "invalid_argument"},
		{method: "GET", path: "/healthz", status: 200},
		{method: "GET", path: "/v1/ids/ha", token: adminToken, status: 200},
		{method: "GET", path: "/v1/health/sources", token: adminToken, status: 200},
		{method: "GET", path: "/v1/node", token: adminToken, status: 200},
		{method: "GET", path: "/v1/node", status: 401, code: "unauthenticated"},
		{method: "GET", path: "/v1/keys", token: adminToken, status: 200},
		{method: "GET", path: "/readyz", status: 200},
		{method: "GET", path: "/metrics", status: 200},
		{method: "GET", path: "/openapi.json", status: 200},
		{method: "POST", path: "/openapi.json", status: 405, code: "method_not_allowed"},
		{method: "GET", path: "/ui", status: 200},
		{method: "GET", path: "/api/segment/get/order", token: adminToken, status: 200},
		{method: "GET", path: "/api/segment/get/nokey", token: adminToken, status: 404, code: "unknown_key"},
		{method: "GET", path: "/api/snowflake/get/msg", token: adminToken, status: 200},
		{method: "GET", path: "/api/snowflake/get", token: adminToken, status: 200},
		{method: "GET", path: "/decodeSnowflakeId?snowflakeId=x", token: adminToken, status: 400, code: "invalid_argument"},
		{method: "GET", path: "/tinyid/id/nextId?bizType=order&batchSize=2", token: adminToken, status: 200},
		{method: "POST", path: "/tinyid/id/nextId", body: "bizType=order&batchSize=2", token: adminToken, status: 200},
		{method: "GET", path: "/tinyid/id/nextId?bizType=order", status: 200}, // Tinyid's token refusal
		{method: "GET", path: "/tinyid/id/nextId?bizType=nokey", token: adminToken, status: 404, code: "unknown_key"},
		{method: "GET", path: "/tinyid/id/nextIdSimple?bizType=order&batchSize=3", token: adminToken, status: 200},
		{method: "GET", path: "/tinyid/id/nextIdSimple?bizType=order&batchSize=0", token: adminToken, status: 400, code: "invalid_count"},
		{method: "GET", path: "/tinyid/id/nextSegmentId?bizType=order", token: adminToken, status: 200},
		{method: "GET", path: "/tinyid/id/nextSegmentIdSimple?bizType=order", token: adminToken, status: 200},
		{method: "GET", path: "/genid", token: adminToken, status: 200},
		{method: "GET", path: "/expid?id=x", token: adminToken, status: 400, code: "invalid_argument"},
		{method: "GET", path: "/transtime?time=12235264", token: adminToken, status: 200},
		{method: "GET", path: "/makeid?time=12235264&seq=0", token: adminToken, status: 200},
	} {
		do(c)
	}
	if len(msg.IDs) == 0 {
		t.Fatal("no snowflake ID to explain")
	}
	id := msg.IDs[0]
	do(call{method: "GET", path: "/v1/explain/" + id, token: adminToken, status: 200})
	do(call{method: "GET", path: "/decodeSnowflakeId?snowflakeId=" + id, token: adminToken, status: 200})
	do(call{method: "GET", path: "/expid?id=" + id, token: adminToken, status: 200})
	do(call{method: "GET", path: "/v1/decode/order/" + id, token: adminToken, status: 200})
}

// checkText checks a plain-text answer against the pattern of its schema
// in the document, which the validator leaves unchecked (it validates
// JSON bodies only).
func checkText(t *testing.T, name, method, path string, status int, body string) {
	t.Helper()
	var doc struct {
		Paths map[string]map[string]struct {
			Responses map[string]struct {
				Content map[string]struct {
					Schema struct {
						Pattern string `json:"pattern"`
					} `json:"schema"`
				} `json:"content"`
			} `json:"responses"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(api.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	for template, ops := range doc.Paths {
		segs := strings.Split(template, "/")
		for i, seg := range segs {
			if strings.HasPrefix(seg, "{") {
				segs[i] = "[^/]+"
			} else {
				segs[i] = regexp.QuoteMeta(seg)
			}
		}
		if !regexp.MustCompile("^" + strings.Join(segs, "/") + "$").MatchString(path) {
			continue
		}
		content, ok := ops[strings.ToLower(method)].Responses[strconv.Itoa(status)].Content["text/plain"]
		if !ok {
			t.Errorf("%s: the document has no text/plain %d answer", name, status)
			return
		}
		if p := content.Schema.Pattern; p != "" && !regexp.MustCompile(p).MatchString(body) {
			t.Errorf("%s: the answer %q does not match the document's pattern %s", name, body, p)
		}
		return
	}
	t.Errorf("%s: no path of the document matches", name)
}
