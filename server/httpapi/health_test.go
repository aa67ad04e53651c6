package httpapi_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idforge/idforge/internal/testsvc"
	"github.com/idforge/idforge/node"
	_ "github.com/idforge/idforge/sequence/redis" // redis:// sources
	"github.com/idforge/idforge/server/httpapi"
	"github.com/idforge/idforge/server/ui"
	_ "github.com/idforge/idforge/store/sqlite" // the node's default store
)

// records is a slog.Handler that keeps every record's message and
// attributes, for tests that count log lines.
type records struct {
	mu    sync.Mutex
	lines []map[string]string
}

func (r *records) Enabled(context.Context, slog.Level) bool { return true }
func (r *records) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r *records) WithGroup(string) slog.Handler            { return r }
func (r *records) Handle(_ context.Context, rec slog.Record) error {
	line := map[string]string{"msg": rec.Message}
	rec.Attrs(func(a slog.Attr) bool {
		line[a.Key] = a.Value.String()
		return true
	})
	r.mu.Lock()
	r.lines = append(r.lines, line)
	r.mu.Unlock()
	return nil
}

// count counts the records with msg about source.
func (r *records) count(msg, source string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, l := range r.lines {
		if l["msg"] == msg && l["source"] == source {
			n++
		}
	}
	return n
}

// A balanced source over two Redis servers of the test's own: one is
// stopped (SIGSTOP) and its member is ejected; the node shows it in
// /metrics, /readyz (degraded), GET /v1/health/sources, /v1/keys and the
// admin page, and logs it once. With both stopped the node is
// unavailable (503). Both continue, and after the rescue time the
// members are admitted again, each logged once.
func TestSourceHealthEjectAndRescue(t *testing.T) {
	a := testsvc.StartRedisServer(t)
	b := testsvc.StartRedisServer(t)
	const q = "?key=qj&max_retries=-1&dial_timeout=300ms&read_timeout=200ms&write_timeout=200ms"
	urlA, urlB := a.URL()+q, b.URL()+q
	nameB := "redis://" + b.Addr() + "/0" + q
	logs := &records{}
	const rescue = 3 * time.Second
	ctx := context.Background()
	n, err := node.Open(ctx, node.Settings{
		DataDir: t.TempDir(),
		Logger:  slog.New(logs),
		Sources: []node.Source{{Name: "qj", Balance: []string{urlA, urlB}, RescueAfter: rescue}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	api := httpapi.New(n.Issuer(), httpapi.Options{Logger: slog.New(logs), Metrics: n.Metrics().Handler(),
		Node: httpapi.NodeInfo{Version: "test", Store: "sqlite://…"}})
	mux := http.NewServeMux()
	mux.Handle("/", api)
	mux.Handle("/ui", ui.Handler(api))
	get := func(path string) (int, string) {
		t.Helper()
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		return rec.Code, rec.Body.String()
	}
	issue := func() error {
		_, err := n.Issuer().Next(ctx, "qj")
		return err
	}
	memberState := func(i int) string {
		for _, s := range n.Issuer().Sources() {
			if s.Name == "qj" {
				return s.Members[i].State
			}
		}
		t.Fatal("no status for qj")
		return ""
	}

	for range 10 {
		if err := issue(); err != nil {
			t.Fatal(err)
		}
	}
	if code, body := get("/readyz"); code != 200 || strings.Contains(body, `"sources"`) {
		t.Fatalf("/readyz with every member up: %d %s", code, body)
	}

	b.Stop()
	for memberState(1) != "ejected" {
		if err := issue(); err != nil {
			t.Fatalf("with one member stopped: %v", err)
		}
	}
	code, body := get("/readyz")
	var ready struct {
		Status  string `json:"status"`
		Sources map[string]struct {
			Health  string   `json:"health"`
			Ejected []string `json:"ejected"`
		} `json:"sources"`
	}
	if err := json.Unmarshal([]byte(body), &ready); err != nil {
		t.Fatal(err)
	}
	if code != 200 || ready.Status != "degraded" || ready.Sources["qj"].Health != "degraded" ||
		len(ready.Sources["qj"].Ejected) != 1 || ready.Sources["qj"].Ejected[0] != nameB {
		t.Errorf("/readyz with a member ejected: %d %s", code, body)
	}
	_, metrics := get("/metrics")
	for _, want := range []string{
		`idforge_source_health{source="qj"} 1`,
		`idforge_source_member_ejected{member="` + nameB + `",source="qj"} 1`,
		`idforge_source_member_ejections_total{member="` + nameB + `",source="qj"} 1`,
		`idforge_source_member_rescue_seconds{member="` + nameB + `",source="qj"} `,
		`idforge_source_last_error_timestamp_seconds{source="qj"} `,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if _, body := get("/v1/health/sources"); !strings.Contains(body, `"state":"ejected"`) || !strings.Contains(body, `"rescue_in_ns":`) ||
		!strings.Contains(body, `"last_error_at":`) {
		t.Errorf("/v1/health/sources: %s", body)
	}
	_, keys := get("/v1/keys")
	if !strings.Contains(keys, `"key":"qj","strategy":"source","description":"","health":"degraded","last_error":"`) ||
		!strings.Contains(keys, `"last_error_at":"`) {
		t.Errorf("/v1/keys: %s", keys)
	}
	if _, page := get("/ui"); !strings.Contains(page, `\"state\":\"ejected\"`) && !strings.Contains(page, `"state":"ejected"`) {
		t.Error("the admin page does not embed the ejected member")
	}

	a.Stop()
	if err := issue(); err == nil {
		t.Fatal("issued with both members stopped")
	}
	if code, body := get("/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, `"status":"unavailable"`) ||
		!strings.Contains(body, `"health":"down"`) {
		t.Errorf("/readyz with every member ejected: %d %s", code, body)
	}

	a.Continue()
	b.Continue()
	deadline := time.Now().Add(rescue + 5*time.Second)
	for memberState(0) != "admitted" || memberState(1) != "admitted" {
		if time.Now().After(deadline) {
			t.Fatal("the members were not rescued")
		}
		time.Sleep(50 * time.Millisecond)
	}
	for range 10 {
		if err := issue(); err != nil {
			t.Fatalf("after the rescue: %v", err)
		}
	}
	if code, body := get("/readyz"); code != 200 || !strings.Contains(body, `"status":"ready"`) {
		t.Errorf("/readyz after the rescue: %d %s", code, body)
	}
	for _, m := range []string{"redis://" + a.Addr() + "/0" + q, nameB} {
		if e, r := logs.count("sequence source ejected", m), logs.count("sequence source admitted again", m); e != 1 || r != 1 {
			t.Errorf("%s: logged ejected %d times, admitted again %d times; want once each", m, e, r)
		}
	}
}
