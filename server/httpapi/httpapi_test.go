package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/httperr"
	"github.com/idforge/idforge/internal/httpwire"
	"github.com/idforge/idforge/issuer"
	"github.com/idforge/idforge/obfuscate"
	"github.com/idforge/idforge/plugin"
	"github.com/idforge/idforge/quota"
	"github.com/idforge/idforge/segment"
	"github.com/idforge/idforge/snowflake"
	"github.com/idforge/idforge/store/memstore"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

type fixture struct {
	store *memstore.Store
	srv   *httptest.Server
	iss   *issuer.Issuer
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	st := memstore.New()
	ctx := context.Background()
	for _, k := range []idforge.Key{
		{Name: "order", Strategy: idforge.StrategySegment, Step: 100, MaxID: 1},
		{Name: "msg", Strategy: idforge.StrategySnowflake},
		{Name: "secret", Strategy: idforge.StrategySegment, Step: 100, MaxID: 1},
	} {
		if err := st.CreateKey(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	gen, err := snowflake.New(snowflake.Settings{Worker: 5, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	secret, err := obfuscate.ParseFormat("feistel:bits=40+base62:min=7")
	if err != nil {
		t.Fatal(err)
	}
	if secret, err = secret.WithKey([]byte("a test key, 16+ bytes")); err != nil {
		t.Fatal(err)
	}
	lim := quota.NewLimiter(nil)
	quotas, err := quota.NewManager(ctx, lim, st, nil, nil, quiet)
	if err != nil {
		t.Fatal(err)
	}
	iss := issuer.New(st, gen, issuer.Settings{Logger: quiet, Plugins: plugin.NewChain(nil, lim), Formats: map[string]obfuscate.Format{"secret": secret}, Segment: segment.Settings{
		MaxStep: 100, RetryMin: time.Millisecond, RetryMax: 2 * time.Millisecond},
		Serials: []idforge.Serial{
			{Name: "job", Template: "@{param:area,chars=digits,max=4}-@{param:unit,width=4,chars=digits}-@{seq:order,width=5}"},
		}})
	srv := httptest.NewServer(New(iss, Options{Logger: quiet, Quotas: quotas}))
	t.Cleanup(func() {
		srv.Close()
		iss.Close()
		gen.Close()
		lim.Close()
	})
	return &fixture{store: st, srv: srv, iss: iss}
}

func (f *fixture) do(t testing.TB, method, path, body string) (int, string, http.Header) {
	t.Helper()
	req, err := http.NewRequest(method, f.srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := f.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

func errorCode(t testing.TB, body string) string {
	t.Helper()
	var e httperr.Body
	if err := json.Unmarshal([]byte(body), &e); err != nil || e.Error.Code == "" || e.Error.Message == "" {
		t.Fatalf("not a JSON error body: %q (%v)", body, err)
	}
	return string(e.Error.Code)
}

func TestLeafEndpoints(t *testing.T) {
	f := newFixture(t)
	// Leaf's row semantics: max_id 1, step 100 → 1, 2, 3 …
	for want := 1; want <= 3; want++ {
		status, body, hdr := f.do(t, "GET", "/api/segment/get/order", "")
		if status != 200 || body != strconv.Itoa(want) {
			t.Fatalf("segment get = %d %q, want 200 %q", status, body, strconv.Itoa(want))
		}
		if ct := hdr.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
			t.Fatalf("Content-Type %q, want text/plain", ct)
		}
	}
	// Leaf clients use GET, but Leaf answers any method.
	if status, _, _ := f.do(t, "POST", "/api/segment/get/order", ""); status != 200 {
		t.Errorf("POST to the Leaf endpoint: %d", status)
	}
	// Snowflake: any well-formed key, as in Leaf.
	status, body, _ := f.do(t, "GET", "/api/snowflake/get/whatever", "")
	id, err := strconv.ParseInt(body, 10, 64)
	if status != 200 || err != nil || id <= 0 {
		t.Fatalf("snowflake get = %d %q", status, body)
	}
	// decodeSnowflakeId answers as Leaf's monitor does.
	status, body, _ = f.do(t, "GET", "/decodeSnowflakeId?snowflakeId="+strconv.FormatInt(id, 10), "")
	var dec map[string]string
	if status != 200 || json.Unmarshal([]byte(body), &dec) != nil {
		t.Fatalf("decode = %d %q", status, body)
	}
	if dec["workerId"] != "5" || dec["sequenceId"] == "" || !strings.Contains(dec["timestamp"], "(") {
		t.Fatalf("decode = %v", dec)
	}
	ms, _ := strconv.ParseInt(dec["timestamp"][:strings.Index(dec["timestamp"], "(")], 10, 64)
	if d := time.Since(time.UnixMilli(ms)); d < 0 || d > time.Minute {
		t.Fatalf("decoded timestamp %v is not now", time.UnixMilli(ms))
	}
	// Unknown keys and wrong strategies are not 200.
	for path, code := range map[string]string{
		"/api/segment/get/nope": "unknown_key",
		"/api/segment/get/msg":  "wrong_strategy",
	} {
		status, body, _ := f.do(t, "GET", path, "")
		if status == 200 || errorCode(t, body) != code {
			t.Errorf("%s = %d %s, want %s", path, status, body, code)
		}
	}
}

func TestIDs(t *testing.T) {
	f := newFixture(t)
	for _, key := range []string{"order", "msg"} {
		status, body, _ := f.do(t, "GET", "/v1/ids/"+key+"?count=250", "")
		if status != 200 {
			t.Fatalf("%s: %d %s", key, status, body)
		}
		var resp struct {
			Key string   `json:"key"`
			IDs []string `json:"ids"`
		}
		if err := json.Unmarshal([]byte(body), &resp); err != nil {
			t.Fatal(err)
		}
		if resp.Key != key || len(resp.IDs) != 250 {
			t.Fatalf("%s: key %q with %d IDs", key, resp.Key, len(resp.IDs))
		}
		prev := int64(0)
		for _, s := range resp.IDs {
			v, err := strconv.ParseInt(s, 10, 64)
			if err != nil || v <= prev {
				t.Fatalf("%s: IDs not increasing decimal strings: %v", key, resp.IDs)
			}
			prev = v
		}
	}
	status, body, _ := f.do(t, "GET", "/v1/ids/order", "")
	if status != 200 || !strings.Contains(body, `"ids":["`) {
		t.Fatalf("default count: %d %s", status, body)
	}
}

func TestBadInput(t *testing.T) {
	f := newFixture(t)
	long := strings.Repeat("k", idforge.MaxKeyLen+1)
	tests := []struct {
		name, method, path, body string
		status                   int
		code                     string
	}{
		{"empty key", "GET", "/v1/ids/", "", 400, "invalid_key"},
		{"overlong key", "GET", "/v1/ids/" + long, "", 400, "invalid_key"},
		{"odd key", "GET", "/v1/ids/a%20b", "", 400, "invalid_key"},
		{"slash in key", "GET", "/v1/ids/a/b", "", 400, "invalid_key"},
		{"unicode key", "GET", "/v1/ids/%E8%AE%A2%E5%8D%95", "", 400, "invalid_key"},
		{"unknown key", "GET", "/v1/ids/nope", "", 404, "unknown_key"},
		{"count 0", "GET", "/v1/ids/order?count=0", "", 400, "invalid_count"},
		{"count -1", "GET", "/v1/ids/order?count=-1", "", 400, "invalid_count"},
		{"count 10^9", "GET", "/v1/ids/order?count=1000000000", "", 400, "invalid_count"},
		{"count above max", "GET", "/v1/ids/order?count=10001", "", 400, "invalid_count"},
		{"count not a number", "GET", "/v1/ids/order?count=ten", "", 400, "invalid_count"},
		{"count float", "GET", "/v1/ids/order?count=1.5", "", 400, "invalid_count"},
		{"count empty", "GET", "/v1/ids/order?count=", "", 400, "invalid_count"},
		{"count twice", "GET", "/v1/ids/order?count=1&count=2", "", 400, "invalid_count"},
		{"count overflow", "GET", "/v1/ids/order?count=99999999999999999999", "", 400, "invalid_count"},
		{"bad query escape", "GET", "/v1/ids/order?count=%zz", "", 400, "invalid_argument"},
		{"segment empty key", "GET", "/api/segment/get/", "", 400, "invalid_key"},
		{"segment odd key", "GET", "/api/segment/get/a%2Fb", "", 400, "invalid_key"},
		{"snowflake odd key", "GET", "/api/snowflake/get/a%20b", "", 400, "invalid_key"},
		{"explain not a number", "GET", "/v1/explain/abc", "", 400, "invalid_argument"},
		{"explain negative", "GET", "/v1/explain/-5", "", 400, "invalid_argument"},
		{"explain overflow", "GET", "/v1/explain/9223372036854775808", "", 400, "invalid_argument"},
		{"decode missing", "GET", "/decodeSnowflakeId", "", 400, "invalid_argument"},
		{"decode not a number", "GET", "/decodeSnowflakeId?snowflakeId=x1", "", 400, "invalid_argument"},
		{"malformed JSON", "POST", "/v1/keys", `{"key":`, 400, "invalid_argument"},
		{"not an object", "POST", "/v1/keys", `[1,2]`, 400, "invalid_argument"},
		{"unknown field", "POST", "/v1/keys", `{"key":"a","stepp":5}`, 400, "invalid_argument"},
		{"two values", "POST", "/v1/keys", `{"key":"a"}{"key":"b"}`, 400, "invalid_argument"},
		{"empty body", "POST", "/v1/keys", ``, 400, "invalid_argument"},
		{"create empty key", "POST", "/v1/keys", `{"key":""}`, 400, "invalid_key"},
		{"create odd key", "POST", "/v1/keys", `{"key":"a b"}`, 400, "invalid_key"},
		{"create bad strategy", "POST", "/v1/keys", `{"key":"a","strategy":"uuid"}`, 400, "invalid_argument"},
		{"create step negative", "POST", "/v1/keys", `{"key":"a","step":-3}`, 400, "invalid_argument"},
		{"create step string", "POST", "/v1/keys", `{"key":"a","step":"5"}`, 400, "invalid_argument"},
		{"create step overflow", "POST", "/v1/keys", `{"key":"a","step":99999999999999999999}`, 400, "invalid_argument"},
		{"create start negative", "POST", "/v1/keys", `{"key":"a","start":-1}`, 400, "invalid_argument"},
		{"create start at the largest int64", "POST", "/v1/keys", `{"key":"a","start":9223372036854775807}`, 400, "invalid_argument"},
		{"create first segment past int64", "POST", "/v1/keys", `{"key":"a","start":9223372036854775000,"step":1000}`, 400, "invalid_argument"},
		{"create snowflake with step", "POST", "/v1/keys", `{"key":"a","strategy":"snowflake","step":5}`, 400, "invalid_argument"},
		{"create long description", "POST", "/v1/keys", `{"key":"a","description":"` + strings.Repeat("d", 300) + `"}`, 400, "invalid_argument"},
		{"create existing", "POST", "/v1/keys", `{"key":"order"}`, 409, "key_exists"},
		{"create existing other strategy", "POST", "/v1/keys", `{"key":"order","strategy":"snowflake"}`, 409, "key_exists"},
		{"wrong method", "DELETE", "/v1/keys", "", 405, "method_not_allowed"},
		{"wrong method ids", "POST", "/v1/ids/order", "", 405, "method_not_allowed"},
		{"no such endpoint", "GET", "/v2/ids/order", "", 404, "not_found"},
		{"unknown key state", "GET", "/v1/keys/nope", "", 404, "unknown_key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body, hdr := f.do(t, tt.method, tt.path, tt.body)
			if status != tt.status {
				t.Fatalf("status %d, want %d; body %s", status, tt.status, body)
			}
			if ct := hdr.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q, want application/json", ct)
			}
			if code := errorCode(t, body); code != tt.code {
				t.Fatalf("code %q, want %q; body %s", code, tt.code, body)
			}
		})
	}
	// The server kept serving through all of it.
	if status, _, _ := f.do(t, "GET", "/v1/ids/order", ""); status != 200 {
		t.Fatalf("server unhealthy after bad input: %d", status)
	}
}

func TestBodyTooLarge(t *testing.T) {
	f := newFixture(t)
	body := `{"key":"a","description":"` + strings.Repeat("x", maxBodyBytes) + `"}`
	status, resp, _ := f.do(t, "POST", "/v1/keys", body)
	if status != 400 || errorCode(t, resp) != "invalid_argument" {
		t.Fatalf("oversized body: %d %s", status, resp)
	}
}

func TestKeys(t *testing.T) {
	f := newFixture(t)
	status, body, _ := f.do(t, "POST", "/v1/keys", `{"key":"waybill","step":500,"start":1000000,"description":"waybills"}`)
	if status != 201 {
		t.Fatalf("create: %d %s", status, body)
	}
	status, body, _ = f.do(t, "POST", "/v1/keys", `{"key":"evt","strategy":"snowflake"}`)
	if status != 201 {
		t.Fatalf("create snowflake: %d %s", status, body)
	}
	status, body, _ = f.do(t, "GET", "/api/segment/get/waybill", "")
	if status != 200 || body != "1000000" {
		t.Fatalf("first waybill = %d %q, want the start 1000000", status, body)
	}
	status, body, _ = f.do(t, "GET", "/v1/keys", "")
	if status != 200 {
		t.Fatalf("list: %d %s", status, body)
	}
	var list httpwire.Keys
	if err := json.Unmarshal([]byte(body), &list); err != nil {
		t.Fatal(err)
	}
	names := []string{}
	for _, k := range list.Keys {
		names = append(names, k.Key+":"+k.Strategy)
	}
	if got := strings.Join(names, ","); got != "evt:snowflake,msg:snowflake,order:segment,secret:segment,waybill:segment" {
		t.Fatalf("keys = %s", got)
	}
	w := list.Keys[4]
	if w.Step != 500 || w.Description != "waybills" || w.Segment == nil || w.Segment.Current == nil || w.Segment.Next != "1000001" ||
		w.Segment.ClaimedUpTo != w.Segment.Current.End {
		t.Fatalf("waybill state = %+v (segment %+v)", w, w.Segment)
	}
	if list.Snowflake == nil || list.Snowflake.Worker != 5 || list.Snowflake.Expires.Year() != 2080 {
		t.Fatalf("snowflake info = %+v", list.Snowflake)
	}
}

// A step or start of 0 means the default, as on every path that defines a
// key (a config file's start = 0 and keys create --start 0 always did; a
// TOML file or a CLI flag cannot tell 0 from left out): "start":0 was
// refused here while the others took it as 1.
func TestKeyZeroMeansDefault(t *testing.T) {
	f := newFixture(t)
	for _, body := range []string{`{"key":"z1","start":0}`, `{"key":"z2","step":0,"start":0}`, `{"key":"z3","step":null,"start":null}`} {
		status, resp, _ := f.do(t, "POST", "/v1/keys", body)
		var k httpwire.Key
		if status != 201 || json.Unmarshal([]byte(resp), &k) != nil || k.Step != issuer.DefaultStep || k.MaxID != strconv.Itoa(issuer.DefaultStart) {
			t.Fatalf("POST %s: %d %s, want 201 with step %d and start %d", body, status, resp, issuer.DefaultStep, issuer.DefaultStart)
		}
	}
	if status, body, _ := f.do(t, "GET", "/v1/ids/z1", ""); status != 200 || !strings.Contains(body, `"ids":["1"]`) {
		t.Fatalf("first ID of a key created with start 0: %d %s, want 1", status, body)
	}
	// A snowflake key takes neither, and 0 is neither.
	if status, body, _ := f.do(t, "POST", "/v1/keys", `{"key":"z4","strategy":"snowflake","step":0,"start":0}`); status != 201 {
		t.Fatalf("snowflake key with step 0, start 0: %d %s", status, body)
	}
}

// A key whose first segment cannot be claimed is refused with the range
// of starts that fits (it was accepted, and every issue then answered
// 500); the last start that fits is accepted and its first segment issues
// in full.
func TestKeyAtTheTop(t *testing.T) {
	f := newFixture(t)
	status, body, _ := f.do(t, "POST", "/v1/keys", `{"key":"bad","start":9223372036854775807}`)
	if status != 400 || errorCode(t, body) != "invalid_argument" || !strings.Contains(body, "[1, 9223372036854774807]") {
		t.Fatalf("start MaxInt64: %d %s, want 400 invalid_argument with the range that fits", status, body)
	}
	if status, body, _ := f.do(t, "GET", "/v1/keys/bad", ""); status != 404 {
		t.Fatalf("the refused key was stored: %d %s", status, body)
	}
	start := strconv.FormatInt(idforge.MaxSegmentID-99, 10)
	if status, body, _ := f.do(t, "POST", "/v1/keys", `{"key":"top","step":100,"start":`+start+`}`); status != 201 {
		t.Fatalf("the last start that fits: %d %s", status, body)
	}
	status, body, _ = f.do(t, "GET", "/v1/ids/top?count=100", "")
	var resp httpwire.IDs
	if status != 200 || json.Unmarshal([]byte(body), &resp) != nil || len(resp.IDs) != 100 {
		t.Fatalf("the first segment: %d %s", status, body)
	}
	if resp.IDs[0] != start || resp.IDs[99] != strconv.FormatInt(idforge.MaxSegmentID, 10) {
		t.Fatalf("the first segment runs %s to %s, want %s to %d", resp.IDs[0], resp.IDs[99], start, int64(idforge.MaxSegmentID))
	}
}

func TestExplain(t *testing.T) {
	f := newFixture(t)
	// 1541815603606036480: a snowflake from 2022-06-28 16:07:40.105 UTC.
	status, body, _ := f.do(t, "GET", "/v1/explain/1541815603606036480", "")
	if status != 200 {
		t.Fatalf("%d %s", status, body)
	}
	var e httpwire.Explain
	if err := json.Unmarshal([]byte(body), &e); err != nil {
		t.Fatal(err)
	}
	if got := e.Time.UTC().Format("2006-01-02 15:04:05.000"); got != "2022-06-28 16:07:40.105" {
		t.Fatalf("time = %s", got)
	}
	if e.ID != "1541815603606036480" || e.Expires.Year() != 2080 {
		t.Fatalf("explain = %+v", e)
	}
}

func TestHealth(t *testing.T) {
	f := newFixture(t)
	if status, body, _ := f.do(t, "GET", "/healthz", ""); status != 200 {
		t.Fatalf("healthz %d %s", status, body)
	}
	if status, body, _ := f.do(t, "GET", "/readyz", ""); status != 200 {
		t.Fatalf("readyz %d %s", status, body)
	}
	// Issue once so the key has buffers, then take the store down: the
	// node is degraded but still ready while buffers last.
	if status, _, _ := f.do(t, "GET", "/api/segment/get/order", ""); status != 200 {
		t.Fatal("issue failed")
	}
	f.store.Fail(errors.New("disk on fire"))
	status, body, _ := f.do(t, "GET", "/readyz?verbose=1", "")
	var r readyResponse
	json.Unmarshal([]byte(body), &r)
	if status != 200 || r.Status != "degraded" || !strings.Contains(r.Store, "disk on fire") || r.Keys["order"].BufferedIDs != 99 || r.SegmentKeys != 1 {
		t.Fatalf("readyz with a failing store and buffers left: %d %s", status, body)
	}
	// Without verbose, the answer counts the keys but does not list them.
	status, body, _ = f.do(t, "GET", "/readyz", "")
	if status != 200 || strings.Contains(body, `"order"`) || !strings.Contains(body, `"segment_keys":1`) {
		t.Fatalf("readyz without verbose: %d %s", status, body)
	}
	for range 99 {
		f.do(t, "GET", "/api/segment/get/order", "")
	}
	status, body, _ = f.do(t, "GET", "/readyz", "")
	if status != 503 || !strings.Contains(body, `"unavailable"`) {
		t.Fatalf("readyz with a failing store and no buffers: %d %s", status, body)
	}
}

// With the store down, a node serves what it has buffered, then answers a
// clear 503, then recovers by itself when the store comes back.
func TestStoreOutage(t *testing.T) {
	f := newFixture(t)
	// Warm up: the current segment and the prefetched next one.
	for range 20 {
		if status, body, _ := f.do(t, "GET", "/api/segment/get/order", ""); status != 200 {
			t.Fatalf("%d %s", status, body)
		}
	}
	time.Sleep(50 * time.Millisecond) // let the prefetch land
	f.store.Fail(errors.New("connection refused"))
	served := 0
	for {
		status, body, _ := f.do(t, "GET", "/api/segment/get/order", "")
		if status == 200 {
			served++
			continue
		}
		if status != 503 || errorCode(t, body) != "unavailable" || !strings.Contains(body, "connection refused") {
			t.Fatalf("after %d buffered IDs: %d %s", served, status, body)
		}
		break
	}
	if served < 100 {
		t.Fatalf("only %d IDs served from buffers, want at least a whole segment", served)
	}
	f.store.Fail(nil)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if status, _, _ := f.do(t, "GET", "/api/segment/get/order", ""); status == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no recovery 10 s after the store came back")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestConcurrentHTTPClients(t *testing.T) {
	f := newFixture(t)
	const clients, each = 8, 100
	var mu sync.Mutex
	seen := map[string]bool{}
	errs := make(chan error, clients)
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			path := "/api/segment/get/order"
			if c%2 == 1 {
				path = "/api/snowflake/get/msg"
			}
			for range each {
				resp, err := f.srv.Client().Get(f.srv.URL + path)
				if err != nil {
					errs <- err
					return
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				mu.Lock()
				dup := seen[path+string(b)]
				seen[path+string(b)] = true
				mu.Unlock()
				if resp.StatusCode != 200 || dup {
					errs <- errors.New(path + ": status " + resp.Status + " duplicate=" + strconv.FormatBool(dup))
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

func FuzzParseCount(f *testing.F) {
	for _, s := range []string{"", "count=1", "count=10000", "count=0", "count=-1", "count=1e9", "count=%zz", "count=1&count=2", "a=b&count=7", "count=+5", "count= 5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		vals, err := parseQuery(q)
		n := 0
		if err == nil {
			n, err = parseCount(vals)
		}
		if err != nil {
			if !errors.Is(err, idforge.ErrInvalidCount) && !errors.Is(err, idforge.ErrInvalidArgument) {
				t.Fatalf("parseCount(%q): %v is not a 4xx error", q, err)
			}
			return
		}
		if n < 1 || n > idforge.MaxCount {
			t.Fatalf("parseCount(%q) = %d, out of range", q, n)
		}
	})
}

// Whatever a client sends, the server answers 200, a redirect to the clean
// path (the mux's "//x" → "/x"), or a 4xx with a JSON error whose status
// is its code's (see idforge.Code); never a 5xx: the fixture's store
// works, so no state a request reaches is the server's fault. The key
// "full" has used up its space (see addFullKey).
func FuzzRequests(f *testing.F) {
	fx := newFixture(f)
	fx.addFullKey(f)
	if status, body := fx.drain(f, "full"); status != 409 {
		f.Fatalf("draining full: %d %s", status, body)
	}
	for _, s := range [][2]string{
		{"GET /v1/ids/order?count=3", ""}, {"GET /v1/ids/msg", ""}, {"POST /v1/keys", `{"key":"k1"}`},
		{"GET /api/segment/get/order", ""}, {"GET /decodeSnowflakeId?snowflakeId=123", ""},
		{"GET /v1/explain/77", ""}, {"POST /v1/keys", `{"key":"s","strategy":"snowflake"}`},
		{"GET /v1/ids/full", ""}, {"GET /v1/serials/job?param.area=1&param.unit=0001", ""},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, line, body string) {
		method, target, ok := strings.Cut(line, " ")
		if !ok || (method != "GET" && method != "POST") || !strings.HasPrefix(target, "/") {
			return
		}
		req := httptest.NewRequest(method, "http://x/", strings.NewReader(body))
		u, err := req.URL.Parse(target)
		if err != nil {
			return
		}
		req.URL, req.RequestURI = u, ""
		rec := httptest.NewRecorder()
		fx.srv.Config.Handler.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%s %s %q: %d %s", method, target, body, rec.Code, rec.Body)
		}
		switch {
		case rec.Code == 200 || rec.Code == 201:
		case rec.Code >= 300 && rec.Code < 400:
			if rec.Header().Get("Location") == "" {
				t.Fatalf("%s %s: redirect without Location", method, target)
			}
		default:
			if code := idforge.Code(errorCode(t, rec.Body.String())); code.HTTPStatus() != rec.Code {
				t.Fatalf("%s %s %q: %d with code %s, whose status is %d", method, target, body, rec.Code, code, code.HTTPStatus())
			}
		}
	})
}

func TestSerials(t *testing.T) {
	f := newFixture(t)
	status, body, _ := f.do(t, "GET", "/v1/serials/job?param.area=010&param.unit=6541&count=2", "")
	if status != 200 || body != `{"serial":"job","values":["010-6541-00001","010-6541-00002"]}`+"\n" {
		t.Fatalf("job = %d %s", status, body)
	}
	status, body, _ = f.do(t, "POST", "/v1/serials", `{"name":"sn","template":"SN-@{seq:order,width=6}-@{checksum:mod,of=seq}"}`)
	if status != 201 {
		t.Fatalf("create = %d %s", status, body)
	}
	status, body, _ = f.do(t, "GET", "/v1/serials/sn", "")
	if status != 200 || !strings.Contains(body, `"SN-000003-`) {
		t.Fatalf("sn = %d %s", status, body)
	}
	status, body, _ = f.do(t, "GET", "/v1/serials", "")
	if status != 200 || !strings.Contains(body, `"name":"job"`) || !strings.Contains(body, `"name":"sn"`) {
		t.Fatalf("list = %d %s", status, body)
	}
	for _, tt := range []struct {
		name, method, path, body string
		status                   int
		code, mention            string
	}{
		{"unknown serial", "GET", "/v1/serials/nope", "", 404, "unknown_key", "nope"},
		{"missing parameter", "GET", "/v1/serials/job?param.area=010", "", 400, "invalid_argument", "unit"},
		{"malformed parameter", "GET", "/v1/serials/job?param.area=01x&param.unit=6541", "", 400, "invalid_argument", "area"},
		{"over-long parameter", "GET", "/v1/serials/job?param.area=01000&param.unit=6541", "", 400, "invalid_argument", "area"},
		{"wrong width", "GET", "/v1/serials/job?param.area=010&param.unit=65", "", 400, "invalid_argument", "unit"},
		{"unknown query parameter", "GET", "/v1/serials/job?area=010", "", 400, "invalid_argument", "param.NAME"},
		{"parameter twice", "GET", "/v1/serials/job?param.area=1&param.area=2&param.unit=6541", "", 400, "invalid_argument", "area"},
		{"count 0", "GET", "/v1/serials/job?count=0&param.area=010&param.unit=6541", "", 400, "invalid_count", ""},
		{"count too big", "GET", "/v1/serials/job?count=10001&param.area=010&param.unit=6541", "", 400, "invalid_count", ""},
		{"bad name", "GET", "/v1/serials/a%20b", "", 400, "invalid_key", ""},
		{"bad template", "POST", "/v1/serials", `{"name":"x","template":"AB@{date:qq}"}`, 400, "invalid_argument", "col 10"},
		{"unknown source", "POST", "/v1/serials", `{"name":"x","template":"@{seq:nope}"}`, 400, "invalid_argument", "nope"},
		{"taken", "POST", "/v1/serials", `{"name":"job","template":"x"}`, 409, "key_exists", ""},
		{"unknown field", "POST", "/v1/serials", `{"name":"x","templ":"x"}`, 400, "invalid_argument", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			status, body, _ := f.do(t, tt.method, tt.path, tt.body)
			if status != tt.status || errorCode(t, body) != tt.code || !strings.Contains(body, tt.mention) {
				t.Fatalf("%d %s; want %d %s mentioning %q", status, body, tt.status, tt.code, tt.mention)
			}
		})
	}
}

func TestFormatsAndDecode(t *testing.T) {
	f := newFixture(t)
	status, body, _ := f.do(t, "GET", "/v1/ids/secret?count=3", "")
	var resp httpwire.IDs
	if status != 200 || json.Unmarshal([]byte(body), &resp) != nil || len(resp.IDs) != 3 {
		t.Fatalf("secret ids: %d %s", status, body)
	}
	for k, s := range resp.IDs {
		if len(s) < 7 || s == strconv.Itoa(k+1) {
			t.Fatalf("%q is not an obfuscated base62 ID", s)
		}
		status, body, _ := f.do(t, "GET", "/v1/decode/secret/"+s, "")
		if status != 200 || !strings.Contains(body, `"id":"`+strconv.Itoa(k+1)+`"`) {
			t.Fatalf("decode %s: %d %s", s, status, body)
		}
	}
	status, body, _ = f.do(t, "GET", "/v1/keys/secret", "")
	if status != 200 || !strings.Contains(body, `"format":"feistel:bits=40+base62:min=7"`) {
		t.Fatalf("key shows no format: %s", body)
	}
	status, body, _ = f.do(t, "GET", "/v1/ids/order?count=2&format=base62:min=4", "")
	if status != 200 || !strings.Contains(body, `"ids":["0001","0002"]`) {
		t.Fatalf("order as base62: %d %s", status, body)
	}
	status, body, _ = f.do(t, "POST", "/v1/keys", `{"key":"trace","strategy":"uuidv7"}`)
	if status != 201 {
		t.Fatalf("create uuidv7 key: %d %s", status, body)
	}
	status, body, _ = f.do(t, "GET", "/v1/ids/trace?count=2", "")
	if status != 200 || strings.Count(body, "-") != 8 {
		t.Fatalf("uuidv7 ids: %d %s", status, body)
	}
	for _, tt := range []struct{ path, code string }{
		{"/v1/ids/order?format=base64", "invalid_argument"},
		{"/v1/ids/order?format=feistel:bits=40", "invalid_argument"},
		{"/v1/ids/order?format=hex&format=hex", "invalid_argument"},
		{"/v1/decode/secret/!!", "invalid_argument"},
		{"/v1/decode/order/12a", "invalid_argument"},
		{"/v1/decode/a%20b/1", "invalid_key"},
		{"/v1/ids/trace?format=hex", "wrong_strategy"},
	} {
		status, body, _ := f.do(t, "GET", tt.path, "")
		if status != 400 || errorCode(t, body) != tt.code {
			t.Errorf("%s: %d %s, want 400 %s", tt.path, status, body, tt.code)
		}
	}
	if status, body, _ := f.do(t, "GET", "/api/segment/get/trace", ""); status != 400 || errorCode(t, body) != "wrong_strategy" {
		t.Errorf("Leaf endpoint on a uuidv7 key: %d %s", status, body)
	}
}

// Every call naming a key that does not exist answers 404 unknown_key,
// decoding included (it answered 200 with the number before). Only Leaf's
// snowflake endpoint, which takes any well-formed key, is the exception.
func TestUnknownKeyIsNotFoundEverywhere(t *testing.T) {
	f := newFixture(t)
	for _, path := range []string{
		"/v1/ids/nosuch",
		"/v1/ids/nosuch?count=3&format=hex",
		"/v1/keys/nosuch",
		"/v1/decode/nosuch/1",
		"/v1/decode/nosuch/G9?format=base62",
		"/v1/serials/nosuch",
		"/api/segment/get/nosuch",
	} {
		status, body, _ := f.do(t, "GET", path, "")
		if status != 404 || errorCode(t, body) != "unknown_key" || !strings.Contains(body, "nosuch") {
			t.Errorf("%s: %d %s, want 404 unknown_key naming the key", path, status, body)
		}
	}
	if status, body, _ := f.do(t, "GET", "/v1/decode/msg/77", ""); status != 200 || !strings.Contains(body, `"id":"77"`) {
		t.Errorf("decode on a snowflake key: %d %s", status, body)
	}
}

// A plugin's refusal is the caller's clear 403 "rejected" on every
// endpoint, never a 500, and it consumes nothing.
func TestPluginRejection(t *testing.T) {
	st := memstore.New()
	ctx := context.Background()
	if err := st.CreateKey(ctx, idforge.Key{Name: "order", Strategy: idforge.StrategySegment, Step: 100, MaxID: 1}); err != nil {
		t.Fatal(err)
	}
	var closed atomic.Bool
	gate := &plugin.Func{PluginName: "gate", BeforeFunc: func(ctx context.Context, c plugin.Call) error {
		if closed.Load() {
			return errors.New("orders are closed")
		}
		return nil
	}}
	iss := issuer.New(st, nil, issuer.Settings{Logger: quiet, Plugins: plugin.NewChain(nil, gate),
		Serials: []idforge.Serial{{Name: "bill", Template: "B@{seq:order,width=4}"}}})
	srv := httptest.NewServer(New(iss, Options{Logger: quiet}))
	defer iss.Close()
	defer srv.Close()
	f := &fixture{store: st, srv: srv}

	closed.Store(true)
	for _, path := range []string{"/api/segment/get/order", "/v1/ids/order?count=3", "/v1/serials/bill"} {
		status, body, _ := f.do(t, "GET", path, "")
		if status != http.StatusForbidden || errorCode(t, body) != "rejected" || !strings.Contains(body, "orders are closed") {
			t.Errorf("GET %s while closed = %d %s, want 403 rejected with the plugin's reason", path, status, body)
		}
	}
	closed.Store(false)
	if status, body, _ := f.do(t, "GET", "/api/segment/get/order", ""); status != 200 || body != "1" {
		t.Fatalf("after reopening = %d %q, want 1: the refusals consumed nothing", status, body)
	}
}

// settableGuard is a snowflake.Guard whose ValidUntil the test moves.
type settableGuard struct{ until atomic.Int64 }

func (g *settableGuard) ValidUntil() time.Time { return time.Unix(0, g.until.Load()) }

// GET /v1/keys reports the worker ID's lease, the node's clock and the
// newest tick issued in: what the admin page shows an operator.
func TestSnowflakeLeaseInKeys(t *testing.T) {
	guard := &settableGuard{}
	guard.until.Store(time.Now().Add(time.Minute).UnixNano())
	gen, err := snowflake.New(snowflake.Settings{Worker: 3, Guard: guard, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer gen.Close()
	iss := issuer.New(memstore.New(), gen, issuer.Settings{Logger: quiet})
	defer iss.Close()
	srv := httptest.NewServer(New(iss, Options{Logger: quiet}))
	defer srv.Close()
	f := &fixture{srv: srv}
	snow := func() httpwire.Snowflake {
		t.Helper()
		status, body, _ := f.do(t, "GET", "/v1/keys", "")
		var resp struct{ Snowflake httpwire.Snowflake }
		if status != 200 || json.Unmarshal([]byte(body), &resp) != nil {
			t.Fatalf("GET /v1/keys = %d %s", status, body)
		}
		return resp.Snowflake
	}
	before := time.Now()
	s := snow()
	if s.Lease != "held" || s.ValidUntil == nil || !s.ValidUntil.After(before) || s.LastIssued != nil {
		t.Fatalf("held lease, nothing issued: %+v", s)
	}
	if s.Now.Before(before.Add(-time.Second)) || s.Now.After(time.Now().Add(time.Second)) {
		t.Fatalf("now %v is not the node's clock", s.Now)
	}
	if status, _, _ := f.do(t, "GET", "/api/snowflake/get/msg", ""); status != 200 {
		t.Fatalf("snowflake ID: %d", status)
	}
	if s = snow(); s.LastIssued == nil {
		t.Fatalf("no last_issued after an ID: %+v", s)
	}
	guard.until.Store(0) // lost: the epoch, as worker.Renewal reports it
	if s = snow(); s.Lease != "lost" || s.ValidUntil != nil {
		t.Fatalf("lost lease: %+v", s)
	}
}

// samplePath fills a route pattern's wildcards with names the fixture
// knows, so that the request reaches the endpoint.
func samplePath(pattern string) string {
	return strings.NewReplacer("{key}", "order", "{name}", "job", "{id}", "1", "{value}", "1").Replace(pattern)
}

// Every /v1 endpoint refuses a query parameter it does not read (?cnt=5
// issued one ID before), naming it, before doing anything; token, which
// the auth middleware reads, passes everywhere.
func TestUnknownQueryParameters(t *testing.T) {
	f := newFixture(t)
	for _, rt := range v1Routes {
		for _, method := range strings.Split(rt.methods, ",") {
			path := samplePath(rt.pattern)
			status, body, _ := f.do(t, method, path+"?cnt=5", `{"key":"made-by-a-refused-request"}`)
			if status != 400 || errorCode(t, body) != "invalid_argument" || !strings.Contains(body, `\"cnt\"`) {
				t.Errorf("%s %s?cnt=5: %d %s, want 400 invalid_argument naming cnt", method, path, status, body)
			}
			for _, p := range rt.params {
				if !strings.Contains(body, p) {
					t.Errorf("%s %s: %s does not list the parameter %s", method, path, body, p)
				}
			}
			if method == "GET" {
				status, body, _ = f.do(t, method, path+"?token=t", "")
				if status == 400 && strings.Contains(body, "unknown query parameter") {
					t.Errorf("%s %s?token=t: %d %s; token must pass", method, path, status, body)
				}
			}
		}
	}
	if status, _, _ := f.do(t, "GET", "/v1/keys/made-by-a-refused-request", ""); status != 404 {
		t.Errorf("a request refused for its parameters created a key: %d", status)
	}
	for _, tt := range []struct{ path, says string }{
		{"/v1/ids/order?count=2&cnt=5", `\"cnt\"`},
		{"/v1/ids/order?Count=2", `\"Count\"`},
		{"/v1/ids/nosuch?cnt=5", `\"cnt\"`},
		{"/v1/decode/order/1?fromat=hex", `\"fromat\"`},
		{"/v1/serials/job?param.=1&param.area=010&param.unit=6541", `\"param.\"`},
		{"/v1/keys?b=1&a=1", `\"a\"`},
	} {
		status, body, _ := f.do(t, "GET", tt.path, "")
		if status != 400 || errorCode(t, body) != "invalid_argument" || !strings.Contains(body, tt.says) {
			t.Errorf("%s: %d %s, want 400 invalid_argument naming %s", tt.path, status, body, tt.says)
		}
	}
	// The parameters an endpoint reads still work.
	for _, path := range []string{
		"/v1/ids/order?count=2&format=hex&token=t",
		"/v1/decode/order/ff?format=hex",
		"/v1/serials/job?count=2&param.area=010&param.unit=6541",
	} {
		if status, body, _ := f.do(t, "GET", path, ""); status != 200 {
			t.Errorf("%s: %d %s", path, status, body)
		}
	}
}

// Leaf's endpoints answer as Leaf's Spring controllers do, which ignore
// parameters they do not read: clients of Leaf keep working whatever they
// add (cache busters, tracing).
func TestLeafEndpointsIgnoreUnknownParameters(t *testing.T) {
	f := newFixture(t)
	for _, path := range []string{"/api/segment/get/order?_=1700000000000", "/api/snowflake/get/order?cnt=5"} {
		if status, body, _ := f.do(t, "GET", path, ""); status != 200 {
			t.Errorf("%s: %d %s", path, status, body)
		}
	}
}

// A field given twice in a request body is refused, naming it, on every
// endpoint that reads a body (it was accepted, the last value winning).
// encoding/json matches names regardless of case, so "key" and "KEY" are
// the same field.
func TestDuplicateJSONFields(t *testing.T) {
	f := newFixture(t)
	for _, tt := range []struct{ path, body, field string }{
		{"/v1/keys", `{"key":"a","key":"b"}`, `\"key\"`},
		{"/v1/keys", `{"key":"a","step":5,"KEY":"b"}`, `\"KEY\"`},
		{"/v1/keys", `{"key":"a","description":"x","step":10,"description":"y"}`, `\"description\"`},
		{"/v1/serials", `{"name":"x","template":"S@{seq:order}","template":"T@{seq:order}"}`, `\"template\"`},
	} {
		status, body, _ := f.do(t, "POST", tt.path, tt.body)
		if status != 400 || errorCode(t, body) != "invalid_argument" || !strings.Contains(body, tt.field) || !strings.Contains(body, "twice") {
			t.Errorf("POST %s %s: %d %s, want 400 invalid_argument naming %s", tt.path, tt.body, status, body, tt.field)
		}
	}
	for _, name := range []string{"a", "b", "x"} {
		if status, _, _ := f.do(t, "GET", "/v1/keys/"+name, ""); status != 404 {
			t.Errorf("a refused body created key %s", name)
		}
	}
	if status, body, _ := f.do(t, "POST", "/v1/keys", `{"key":"fine","step":10,"description":"key and Key are one field, once"}`); status != 201 {
		t.Errorf("a body without duplicates: %d %s", status, body)
	}
}

// TestKeysPages: GET /v1/keys answers a page at a time, in name order,
// with next naming where the following page starts.
func TestKeysPages(t *testing.T) {
	f := newFixture(t)
	var names []string
	after := ""
	for pages := 0; ; pages++ {
		path := "/v1/keys?limit=2"
		if after != "" {
			path += "&after=" + after
		}
		status, body, _ := f.do(t, "GET", path, "")
		var page httpwire.Keys
		if err := json.Unmarshal([]byte(body), &page); status != 200 || err != nil {
			t.Fatalf("GET %s: %d %s", path, status, body)
		}
		if len(page.Keys) > 2 || pages > 3 {
			t.Fatalf("GET %s: %d keys on page %d", path, len(page.Keys), pages)
		}
		for _, k := range page.Keys {
			names = append(names, k.Key)
		}
		if page.Next == "" {
			break
		}
		after = page.Next
	}
	if strings.Join(names, ",") != "msg,order,secret" {
		t.Fatalf("pages held %v, want msg, order, secret once each", names)
	}
	for _, bad := range []string{"0", "10001", "x"} {
		if status, body, _ := f.do(t, "GET", "/v1/keys?limit="+bad, ""); status != 400 || errorCode(t, body) != "invalid_argument" {
			t.Errorf("limit=%s: %d %s", bad, status, body)
		}
	}
}

// TestHotRoutesAnswerAsTheMux: the paths the hot routes take before the
// mux (httpmux.Mux.HandleLast) are answered as the mux's patterns answer
// them, and the ones they leave reach the mux.
func TestHotRoutesAnswerAsTheMux(t *testing.T) {
	f := newFixture(t)
	for _, c := range []struct {
		method, path string
		status       int
		code         string
	}{
		{"GET", "/api/segment/get/order", 200, ""},
		{"POST", "/api/segment/get/order", 200, ""}, // Leaf's clients may POST
		{"HEAD", "/api/segment/get/order", 405, ""}, // nothing to carry the ID away
		{"GET", "/api/segment/get/ord%65r", 200, ""},
		{"GET", "/api/segment/get/nope", 404, "unknown_key"},
		{"GET", "/v1/ids/order", 200, ""},
		{"HEAD", "/v1/ids/order", 405, ""},
		{"POST", "/v1/ids/order", 405, ""},
		{"GET", "/v1/ids/order?cnt=2", 400, "invalid_argument"},
		{"GET", "/v1/ids/a/b", 400, "invalid_key"},
	} {
		status, body, _ := f.do(t, c.method, c.path, "")
		if status != c.status || (c.code != "" && errorCode(t, body) != c.code) {
			t.Errorf("%s %s: %d %s; want %d %s", c.method, c.path, status, body, c.status, c.code)
		}
	}
}
