package compat

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/auth"
	"github.com/idforge/idforge/issuer"
	"github.com/idforge/idforge/segment"
	"github.com/idforge/idforge/snowflake"
	"github.com/idforge/idforge/store/memstore"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// cst is the zone of Vesta's documentation (China Standard Time).
var cst = time.FixedZone("CST", 8*3600)

type fixture struct {
	store *memstore.Store
	iss   *issuer.Issuer
	srv   *httptest.Server
}

type fixtureOpts struct {
	layout     string // snowflake preset; "" means no generator
	worker     int64
	datacenter int64
	wrap       func(http.Handler) http.Handler
}

func newFixture(t testing.TB, o fixtureOpts) *fixture {
	t.Helper()
	st := memstore.New()
	ctx := context.Background()
	for _, k := range []idforge.Key{
		{Name: "order", Strategy: idforge.StrategySegment, Step: 100, MaxID: 1},
		{Name: "test", Strategy: idforge.StrategySegment, Step: 2000, MaxID: 1},
		{Name: "msg", Strategy: idforge.StrategySnowflake},
	} {
		if err := st.CreateKey(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	var gen *snowflake.Generator
	if o.layout != "" {
		l, err := snowflake.ParseLayout(o.layout)
		if err != nil {
			t.Fatal(err)
		}
		gen, err = snowflake.New(snowflake.Settings{Layout: l, Worker: o.worker, Datacenter: o.datacenter, Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
	}
	iss := issuer.New(st, gen, issuer.Settings{Logger: quiet, Segment: segment.Settings{
		MaxStep: 100, RetryMin: time.Millisecond, RetryMax: 2 * time.Millisecond}})
	opts := Options{Logger: quiet, Location: cst}
	var h http.Handler = New(iss, opts)
	if o.wrap != nil {
		h = o.wrap(h)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		srv.Close()
		iss.Close()
		if gen != nil {
			gen.Close()
		}
	})
	return &fixture{store: st, iss: iss, srv: srv}
}

// do sends a request; a POST carries form as a url-encoded body (empty
// when form is "", as Tinyid's Java client sends it).
func (f *fixture) do(t testing.TB, method, target, form string) (int, string, http.Header) {
	t.Helper()
	req, err := http.NewRequest(method, f.srv.URL+target, strings.NewReader(form))
	if err != nil {
		t.Fatal(err)
	}
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := f.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b), resp.Header
}

func (f *fixture) get(t testing.TB, target string) (int, string) {
	t.Helper()
	status, body, _ := f.do(t, http.MethodGet, target, "")
	return status, body
}

// mustGet returns the body of a request that must succeed.
func (f *fixture) mustGet(t testing.TB, target string) string {
	t.Helper()
	status, body := f.get(t, target)
	if status != http.StatusOK {
		t.Fatalf("GET %s: %d %s", target, status, body)
	}
	return body
}

// wantError checks an error answer: status, idforge's code and, for the
// JSON Tinyid endpoints, Tinyid's code 6.
func wantError(t testing.TB, target string, status int, body string, wantStatus int, wantCode string, tinyid bool) {
	t.Helper()
	if status != wantStatus {
		t.Fatalf("%s: status %d (%s), want %d", target, status, body, wantStatus)
	}
	var eb struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
		Code    *int    `json:"code"`
		Message *string `json:"message"`
		Data    any     `json:"data"`
	}
	if err := json.Unmarshal([]byte(body), &eb); err != nil {
		t.Fatalf("%s: body %q is not JSON: %v", target, body, err)
	}
	if eb.Error.Code != wantCode || eb.Error.Message == "" {
		t.Errorf("%s: error %+v, want code %q with a message", target, eb.Error, wantCode)
	}
	if tinyid {
		if eb.Code == nil || *eb.Code != 6 || eb.Message == nil || *eb.Message == "" || !strings.Contains(body, `"data":null`) {
			t.Errorf("%s: body %s lacks Tinyid's data:null, code 6 and message", target, body)
		}
	} else if eb.Code != nil {
		t.Errorf("%s: body %s has Tinyid's fields", target, body)
	}
}

func TestTinyidNextID(t *testing.T) {
	f := newFixture(t, fixtureOpts{layout: "twitter", worker: 1})
	// Tinyid's README: nextId, then nextIdSimple, then with batchSize.
	if body := f.mustGet(t, "/tinyid/id/nextId?bizType=test&token=0f673adf80504e2eaa552f5d791b644c"); body != `{"data":[1],"code":200,"message":""}`+"\n" {
		t.Errorf("nextId = %q", body)
	}
	if body := f.mustGet(t, "/tinyid/id/nextIdSimple?bizType=test&token=0f673adf80504e2eaa552f5d791b644c"); body != "2" {
		t.Errorf("nextIdSimple = %q", body)
	}
	if body := f.mustGet(t, "/tinyid/id/nextIdSimple?bizType=test&batchSize=10"); body != "3,4,5,6,7,8,9,10,11,12" {
		t.Errorf("nextIdSimple batchSize=10 = %q", body)
	}
	// POST with the parameters in the body, as Spring binds them.
	status, body, hdr := f.do(t, http.MethodPost, "/tinyid/id/nextId", "bizType=test&batchSize=3")
	if status != 200 || body != `{"data":[13,14,15],"code":200,"message":""}`+"\n" || hdr.Get("Content-Type") != "application/json" {
		t.Errorf("POST nextId = %d %q %q", status, body, hdr.Get("Content-Type"))
	}
	// batchSize above the maximum is cut to it, as in Tinyid.
	var big tinyidResponse[[]int64]
	if err := json.Unmarshal([]byte(f.mustGet(t, "/tinyid/id/nextId?bizType=order&batchSize=20000")), &big); err != nil || len(big.Data) != idforge.MaxCount {
		t.Fatalf("batchSize=20000: %d IDs (%v), want %d", len(big.Data), err, idforge.MaxCount)
	}
	for i := 1; i < len(big.Data); i++ {
		if big.Data[i] <= big.Data[i-1] {
			t.Fatalf("IDs not increasing at %d: %d, %d", i, big.Data[i-1], big.Data[i])
		}
	}
	if body := f.mustGet(t, "/tinyid/id/nextIdSimple?bizType=order&batchSize=99999999999999999999"); strings.Count(body, ",") != idforge.MaxCount-1 {
		t.Errorf("a batchSize beyond int64 is not cut to %d", idforge.MaxCount)
	}
	// A snowflake key works too.
	if body := f.mustGet(t, "/tinyid/id/nextIdSimple?bizType=msg&batchSize=2"); strings.Count(body, ",") != 1 {
		t.Errorf("snowflake key: %q", body)
	}

	for _, tc := range []struct {
		target string
		status int
		code   string
	}{
		{"/tinyid/id/nextId", 400, "invalid_key"},
		{"/tinyid/id/nextId?bizType=", 400, "invalid_key"},
		{"/tinyid/id/nextId?bizType=a/b", 400, "invalid_key"},
		{"/tinyid/id/nextId?bizType=nope", 404, "unknown_key"},
		{"/tinyid/id/nextId?bizType=test&batchSize=0", 400, "invalid_count"},
		{"/tinyid/id/nextId?bizType=test&batchSize=-3", 400, "invalid_count"},
		{"/tinyid/id/nextId?bizType=test&batchSize=abc", 400, "invalid_count"},
		{"/tinyid/id/nextId?bizType=test&bizType=order", 400, "invalid_argument"},
		{"/tinyid/id/nextId?bizType=%zz", 400, "invalid_argument"},
	} {
		status, body := f.get(t, tc.target)
		wantError(t, tc.target, status, body, tc.status, tc.code, true)
		simple := strings.Replace(tc.target, "nextId", "nextIdSimple", 1)
		status, body = f.get(t, simple)
		wantError(t, simple, status, body, tc.status, tc.code, false)
	}
	status, body = f.get(t, "/tinyid/id/nope")
	wantError(t, "/tinyid/id/nope", status, body, 404, "not_found", false)
}

// tinyidClient hands out IDs from a segment the way Tinyid's Java client
// does (SegmentId.init and nextId): from the simple form
// "currentId,loadingId,maxId,delta,remainder", the IDs in
// (currentId, maxId] that leave remainder modulo delta.
func tinyidClient(t *testing.T, simple string) []int64 {
	t.Helper()
	parts := strings.Split(simple, ",")
	if len(parts) != 5 {
		t.Fatalf("segment %q: %d fields, want 5", simple, len(parts))
	}
	var v [5]int64
	for i, p := range parts {
		n, err := strconv.ParseInt(p, 10, 64)
		if err != nil {
			t.Fatalf("segment %q: field %d: %v", simple, i, err)
		}
		v[i] = n
	}
	cur, loading, maxID, delta, rem := v[0], v[1], v[2], v[3], v[4]
	if !(cur < loading && loading <= maxID) || delta < 1 || rem < 0 || rem >= delta {
		t.Fatalf("segment %q is not a usable Tinyid segment", simple)
	}
	if cur%delta != rem {
		for i := int64(0); i <= delta; i++ {
			cur++
			if cur%delta == rem {
				cur -= delta
				break
			}
		}
	}
	var ids []int64
	for {
		cur += delta
		if cur > maxID {
			return ids
		}
		ids = append(ids, cur)
	}
}

func TestTinyidSegment(t *testing.T) {
	for _, layout := range []string{"twitter"} {
		t.Run(layout, func(t *testing.T) {
			f := newFixture(t, fixtureOpts{layout: layout})
			// JSON form: Tinyid's SegmentId for the row (max_id 1, step 2000).
			want := `{"data":{"maxId":2000,"loadingId":400,"currentId":0,"delta":1,"remainder":0},"code":200,"message":""}` + "\n"
			if body := f.mustGet(t, "/tinyid/id/nextSegmentId?bizType=test&token=x"); body != want {
				t.Errorf("nextSegmentId = %s, want %s", body, want)
			}
			// The Java client's call: POST, empty body, parameters in the URL.
			status, simple, _ := f.do(t, http.MethodPost, "/tinyid/id/nextSegmentIdSimple?token=x&bizType=test", "")
			if status != 200 || simple != "2000,2400,4000,1,0" {
				t.Fatalf("nextSegmentIdSimple = %d %q, want 2000,2400,4000,1,0", status, simple)
			}

			// Every ID a client issues from its segments is its own: none
			// repeats, and the server issues none of them.
			seen := map[int64]string{}
			note := func(id int64, who string) {
				if prev, dup := seen[id]; dup {
					t.Fatalf("ID %d issued to %s and %s", id, prev, who)
				}
				seen[id] = who
			}
			for i := range 3 {
				ids := tinyidClient(t, f.mustGet(t, "/tinyid/id/nextSegmentIdSimple?bizType=order"))
				if len(ids) != 100 {
					t.Fatalf("segment %d of order holds %d IDs, want the step 100", i, len(ids))
				}
				for _, id := range ids {
					note(id, "segment client "+strconv.Itoa(i))
				}
				for _, s := range strings.Split(f.mustGet(t, "/tinyid/id/nextIdSimple?bizType=order&batchSize=150"), ",") {
					id, _ := strconv.ParseInt(s, 10, 64)
					note(id, "nextId")
				}
			}

			for _, tc := range []struct {
				target string
				status int
				code   string
			}{
				{"/tinyid/id/nextSegmentId?bizType=msg", 400, "wrong_strategy"},
				{"/tinyid/id/nextSegmentId?bizType=nope", 404, "unknown_key"},
				{"/tinyid/id/nextSegmentId", 400, "invalid_key"},
			} {
				status, body := f.get(t, tc.target)
				wantError(t, tc.target, status, body, tc.status, tc.code, true)
				simple := strings.Replace(tc.target, "nextSegmentId", "nextSegmentIdSimple", 1)
				status, body = f.get(t, simple)
				wantError(t, simple, status, body, tc.status, tc.code, false)
			}
		})
	}
}

func TestTinyidStoreDown(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	f.store.Fail(io.ErrUnexpectedEOF)
	status, body := f.get(t, "/tinyid/id/nextSegmentId?bizType=test")
	wantError(t, "nextSegmentId", status, body, 503, "unavailable", true)
	status, body = f.get(t, "/tinyid/id/nextIdSimple?bizType=test")
	wantError(t, "nextIdSimple", status, body, 503, "unavailable", false)
}

func TestVestaMaxPeak(t *testing.T) {
	f := newFixture(t, fixtureOpts{layout: "vesta-max-peak", worker: 1})

	// The pairs of Vesta's REST guide (see the package documentation).
	const docID = "13137514684481537"
	if body := f.mustGet(t, "/expid?id="+docID); body != `{"genMethod":0,"machine":1,"seq":0,"time":12235264,"type":0,"version":0}`+"\n" {
		t.Errorf("expid = %s", body)
	}
	if body := f.mustGet(t, "/transtime?time=12235264"); body != "Fri May 22 14:41:04 CST 2015" {
		t.Errorf("transtime = %q", body)
	}
	for _, q := range []string{
		"time=12235264&seq=0&machine=1",
		"time=12235264&seq=0",
		"machine=1&seq=0&time=12235264&genMethod=0&type=0&version=0",
		"time=12235264&seq=0&genmethod=0",
	} {
		if body := f.mustGet(t, "/makeid?"+q); body != docID {
			t.Errorf("makeid?%s = %s, want %s", q, body, docID)
		}
	}

	// genid → expid: this node's machine, now.
	id := f.mustGet(t, "/genid")
	var exp vestaID
	if err := json.Unmarshal([]byte(f.mustGet(t, "/expid?id="+id)), &exp); err != nil {
		t.Fatal(err)
	}
	nowTicks := time.Since(time.UnixMilli(1420041600000)) / time.Second
	if exp.Machine != 1 || exp.Type != 0 || exp.GenMethod != 0 || exp.Version != 0 || exp.Time < int64(nowTicks)-5 || exp.Time > int64(nowTicks)+5 {
		t.Errorf("expid of a fresh ID %s = %+v (now is tick %d)", id, exp, nowTicks)
	}
	// makeid of its fields gives it back.
	back := f.mustGet(t, "/makeid?time="+strconv.FormatInt(exp.Time, 10)+"&seq="+strconv.FormatInt(exp.Seq, 10)+"&machine=1")
	if back != id {
		t.Errorf("makeid(expid(%s)) = %s", id, back)
	}

	minGran := "4624515622740431873" // a vesta-min-granularity ID: type 1
	for _, tc := range []struct {
		target string
		status int
		code   string
	}{
		{"/expid", 400, "invalid_argument"},
		{"/expid?id=abc", 400, "invalid_argument"},
		{"/expid?id=-1", 400, "invalid_argument"},
		{"/expid?id=1&id=2", 400, "invalid_argument"},
		{"/expid?id=" + minGran, 400, "invalid_argument"},
		{"/transtime", 400, "invalid_argument"},
		{"/transtime?time=-1", 400, "invalid_argument"},
		{"/transtime?time=1073741824", 400, "invalid_argument"}, // 2^30: past the time field
		{"/makeid?seq=0", 400, "invalid_argument"},
		{"/makeid?time=1", 400, "invalid_argument"},
		{"/makeid?time=1&seq=1048576", 400, "invalid_argument"}, // 2^20: past the sequence field
		{"/makeid?time=1&seq=0&machine=1024", 400, "invalid_argument"},
		{"/makeid?time=1&seq=0&machine=-1", 400, "invalid_argument"},
		{"/makeid?time=1&seq=0&type=1", 400, "invalid_argument"},
		{"/makeid?time=1&seq=0&genMethod=2", 400, "invalid_argument"},
		{"/makeid?time=1&seq=0&version=1", 400, "invalid_argument"},
		{"/makeid?time=99999999999999999999&seq=0", 400, "invalid_argument"},
		{"/nope", 404, "not_found"},
	} {
		status, body := f.get(t, tc.target)
		wantError(t, tc.target, status, body, tc.status, tc.code, false)
	}
}

// A node whose layout sets Vesta's REST generation method decodes IDs a
// Vesta REST server made, and makes them, genMethod 2 included.
func TestVestaRESTMethod(t *testing.T) {
	f := newFixture(t, fixtureOpts{layout: "vesta-max-peak,method=2", worker: 1})
	const restID = "2318980523898175489" // 2<<60 | 12235264<<30 | 1: the guide's ID, genMethod 2
	if body := f.mustGet(t, "/expid?id="+restID); body != `{"genMethod":2,"machine":1,"seq":0,"time":12235264,"type":0,"version":0}`+"\n" {
		t.Errorf("expid = %s", body)
	}
	if body := f.mustGet(t, "/makeid?time=12235264&seq=0&machine=1&genMethod=2&version=0"); body != restID {
		t.Errorf("makeid = %s, want %s", body, restID)
	}
	status, body := f.get(t, "/expid?id=13137514684481537") // genMethod 0: another node's
	wantError(t, "expid of an embedded ID", status, body, 400, "invalid_argument", false)
}

func TestVestaOtherLayouts(t *testing.T) {
	t.Run("min granularity", func(t *testing.T) {
		f := newFixture(t, fixtureOpts{layout: "vesta-min-granularity", worker: 1})
		if body := f.mustGet(t, "/expid?id=4624515622740431873"); body != `{"genMethod":0,"machine":1,"seq":5,"time":12235264123,"type":1,"version":0}`+"\n" {
			t.Errorf("expid = %s", body)
		}
		if body := f.mustGet(t, "/makeid?time=12235264123&seq=5&type=1"); body != "4624515622740431873" {
			t.Errorf("makeid = %s", body)
		}
		if body := f.mustGet(t, "/transtime?time=12235264123"); body != "Fri May 22 14:41:04 CST 2015" {
			t.Errorf("transtime = %q", body)
		}
	})
	t.Run("twitter with a datacenter", func(t *testing.T) {
		f := newFixture(t, fixtureOpts{layout: "twitter", worker: 5, datacenter: 3})
		id := f.mustGet(t, "/genid")
		var exp vestaID
		if err := json.Unmarshal([]byte(f.mustGet(t, "/expid?id="+id)), &exp); err != nil {
			t.Fatal(err)
		}
		if exp.Machine != 3<<5|5 || exp.Type != 0 || exp.GenMethod != 0 {
			t.Errorf("expid = %+v, want machine %d (datacenter 3, worker 5)", exp, 3<<5|5)
		}
		q := url.Values{"time": {strconv.FormatInt(exp.Time, 10)}, "seq": {strconv.FormatInt(exp.Seq, 10)}}
		if back := f.mustGet(t, "/makeid?"+q.Encode()); back != id {
			t.Errorf("makeid with the node's machine = %s, want %s", back, id)
		}
		q.Set("machine", strconv.FormatInt(exp.Machine, 10))
		if back := f.mustGet(t, "/makeid?"+q.Encode()); back != id {
			t.Errorf("makeid with machine %d = %s, want %s", exp.Machine, back, id)
		}
		for _, bad := range []string{"genMethod=1", "type=1", "machine=1024"} {
			status, body := f.get(t, "/makeid?time=1&seq=0&"+bad)
			wantError(t, bad, status, body, 400, "invalid_argument", false)
		}
	})
	t.Run("no generator", func(t *testing.T) {
		f := newFixture(t, fixtureOpts{})
		for _, target := range []string{"/genid", "/expid?id=1", "/transtime?time=1", "/makeid?time=1&seq=1"} {
			status, body := f.get(t, target)
			wantError(t, target, status, body, 503, "unavailable", false)
		}
	})
}

// TestWithAuth wraps the handler in the auth middleware, as the server
// does: Tinyid's token parameter is checked there.
func TestWithAuth(t *testing.T) {
	const (
		token      = "0f673adf80504e2eaa552f5d791b644c"
		orderToken = "order-only-0123456789"
	)
	a, err := auth.New(auth.Config{Tokens: []auth.Token{
		{Token: token, Role: auth.RoleIssue},
		{Token: orderToken, Keys: []string{"order"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, fixtureOpts{layout: "vesta-max-peak", wrap: func(h http.Handler) http.Handler {
		return a.MiddlewareRefusing(h, nil, TinyidRefusal)
	}})
	if body := f.mustGet(t, "/tinyid/id/nextIdSimple?bizType=test&token="+token); body != "1" {
		t.Errorf("with the token: %q", body)
	}
	// A bad token, none, or one not allowed this bizType: what Tinyid's
	// IdContronller answers (canVisit false), HTTP 200 with TOKEN_ERR or
	// an empty body; nothing is issued.
	for _, target := range []string{
		"/tinyid/id/nextId?bizType=test&token=bad-token-0123456789",
		"/tinyid/id/nextId?bizType=test",
		"/tinyid/id/nextSegmentId?bizType=test&token=" + orderToken,
	} {
		status, body := f.get(t, target)
		if status != 200 || body != `{"data":null,"code":5,"message":"token is error"}`+"\n" {
			t.Errorf("%s: %d %q, want Tinyid's 200 token error", target, status, body)
		}
	}
	for _, target := range []string{
		"/tinyid/id/nextIdSimple?bizType=test&token=bad-token-0123456789",
		"/tinyid/id/nextIdSimple?bizType=test",
		"/tinyid/id/nextSegmentIdSimple?bizType=test&token=" + orderToken,
	} {
		if status, body := f.get(t, target); status != 200 || body != "" {
			t.Errorf("%s: %d %q, want Tinyid's 200 and an empty body", target, status, body)
		}
	}
	if body := f.mustGet(t, "/tinyid/id/nextIdSimple?bizType=test&token="+token); body != "2" {
		t.Errorf("after the refusals: %q, want 2 (they consumed nothing)", body)
	}
	if body := f.mustGet(t, "/tinyid/id/nextSegmentIdSimple?bizType=order&token="+orderToken); body != "0,20,100,1,0" {
		t.Errorf("key token, its key: %q", body)
	}
	// bizType in the URL and a different one in the body: refused (as a
	// token error, nothing issued), so the key authorized is the key
	// issued for.
	st, body, _ := f.do(t, http.MethodPost, "/tinyid/id/nextIdSimple?bizType=order&token="+orderToken, "bizType=test")
	if st != 200 || body != "" {
		t.Errorf("ambiguous bizType: %d %q, want Tinyid's token error", st, body)
	}
	status, body := f.get(t, "/genid?token="+orderToken)
	wantError(t, "genid with a key token", status, body, 403, "forbidden", false)
	if _, err := strconv.ParseInt(f.mustGet(t, "/genid?token="+token), 10, 64); err != nil {
		t.Errorf("genid: %v", err)
	}
	if body := f.mustGet(t, "/transtime?time=12235264&token="+orderToken); body != "Fri May 22 14:41:04 CST 2015" {
		t.Errorf("transtime: %q", body)
	}
}

// The compatibility endpoints answer the clients of Tinyid and Vesta as
// those servers do: parameters they do not read are ignored, not refused
// as on idforge's own /v1 API. Tinyid's Java client sends token and
// bizType (its HTTP users add batchSize); browsers and proxies add cache
// busters such as jQuery's _=.
func TestUnknownParametersIgnored(t *testing.T) {
	f := newFixture(t, fixtureOpts{layout: "vesta-max-peak", worker: 1})
	for _, target := range []string{
		"/tinyid/id/nextSegmentIdSimple?token=0f673adf80504e2eaa552f5d791b644c&bizType=test",
		"/tinyid/id/nextIdSimple?bizType=order&batchSize=2&token=t&_=1700000000000",
		"/tinyid/id/nextId?bizType=order&traceId=abc",
		"/genid?_=1700000000000",
		"/expid?id=13137514684481537&verbose=1",
	} {
		f.mustGet(t, target)
	}
}
