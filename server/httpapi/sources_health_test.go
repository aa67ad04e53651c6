package httpapi_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idforge/idforge/internal/testsvc"
	"github.com/idforge/idforge/node"
	"github.com/idforge/idforge/server/httpapi"
	"github.com/idforge/idforge/server/ui"
)

// Issue 24, item 2: a source defined through the API is as visible to
// health as one from the configuration file, on the node that defined it
// at once and on another node sharing the store within its re-check:
// GET /v1/health/sources, its status on /v1/sources and /v1/keys, the
// admin page, /readyz and /metrics all read the one registry of open
// sources (issuer.Issuer.Sources). Retired, it leaves them all.
func TestSourcesFromTheAPIReportHealth(t *testing.T) {
	a := testsvc.StartRedisServer(t)
	b := testsvc.StartRedisServer(t)
	const q = "?key=bx&max_retries=-1&dial_timeout=300ms&read_timeout=200ms&write_timeout=200ms"
	shared := "sqlite://" + filepath.Join(t.TempDir(), "shared.db")
	ctx := context.Background()
	open := func(worker string) http.Handler {
		t.Helper()
		n, err := node.Open(ctx, node.Settings{DataDir: t.TempDir(), Store: shared, Worker: worker, Logger: silent,
			RecheckDefinitions: 100 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { n.Close() })
		api := httpapi.New(n.Issuer(), httpapi.Options{Logger: silent, Metrics: n.Metrics().Handler()})
		mux := http.NewServeMux()
		mux.Handle("/", api)
		mux.Handle("/ui", ui.Handler(api))
		return mux
	}
	one, other := open("1"), open("2")
	call := func(h http.Handler, method, path, body string) (int, string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(method, path, strings.NewReader(body)))
		return rec.Code, rec.Body.String()
	}
	// Every surface of a node, and what it says of source bx.
	surfaces := map[string]struct {
		path string
		says []string
	}{
		"health":  {"/v1/health/sources", []string{`"name":"bx"`, `"health":"`}},
		"sources": {"/v1/sources/bx", []string{`"status":{`}},
		"keys":    {"/v1/keys", []string{`"key":"bx","strategy":"source"`, `"health":"`}},
		"node":    {"/v1/node", []string{`"name":"bx"`}},
		"page":    {"/ui", []string{`bx`}},
		"metrics": {"/metrics", []string{`idforge_source_health{source="bx"}`}},
	}
	showsAll := func(h http.Handler) []string {
		var missing []string
		for name, s := range surfaces {
			_, body := call(h, "GET", s.path, "")
			for _, want := range s.says {
				if !strings.Contains(body, want) {
					missing = append(missing, name+" lacks "+want)
				}
			}
		}
		return missing
	}

	body := `{"name":"bx","balance":["` + a.URL() + q + `","` + b.URL() + q + `"],"expand":2,"rescue_after":"1m"}`
	if code, resp := call(one, "POST", "/v1/sources", body); code != 201 {
		t.Fatalf("POST /v1/sources: %d %s", code, resp)
	}
	// The node that defined it, at once, before anything was issued.
	if missing := showsAll(one); len(missing) > 0 {
		t.Errorf("the defining node: %s", strings.Join(missing, "; "))
	}
	// The other node within its re-check, without being asked for IDs.
	deadline := time.Now().Add(30 * time.Second)
	for missing := showsAll(other); len(missing) > 0; missing = showsAll(other) {
		if time.Now().After(deadline) {
			t.Fatalf("the other node: %s", strings.Join(missing, "; "))
		}
		time.Sleep(50 * time.Millisecond)
	}

	// A member stopped: /readyz degrades for the source.
	b.Stop()
	t.Cleanup(b.Continue)
	deadline = time.Now().Add(30 * time.Second)
	for {
		call(one, "GET", "/v1/ids/bx?count=50", "")
		code, ready := call(one, "GET", "/readyz", "")
		if code == 200 && strings.Contains(ready, `"status":"degraded"`) && strings.Contains(ready, `"bx":{"health":"degraded"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz with a member of bx stopped: %d %s", code, ready)
		}
		time.Sleep(20 * time.Millisecond)
	}
	b.Continue()

	// Retired: it leaves every health surface of both nodes; the lists
	// say it is retired.
	if code, resp := call(one, "DELETE", "/v1/sources/bx", ""); code != 200 || !strings.Contains(resp, `"retired":true`) {
		t.Fatalf("DELETE /v1/sources/bx: %d %s", code, resp)
	}
	gone := func(h http.Handler) bool {
		for _, path := range []string{"/v1/health/sources", "/v1/node", "/metrics"} {
			if _, body := call(h, "GET", path, ""); strings.Contains(body, `"bx"`) {
				return false
			}
		}
		_, keys := call(h, "GET", "/v1/keys", "")
		return strings.Contains(keys, `"key":"bx","strategy":"source","description":"","retired":true`)
	}
	if !gone(one) {
		t.Error("the retiring node still reports bx's health, or does not mark it retired")
	}
	deadline = time.Now().Add(30 * time.Second)
	for !gone(other) {
		if time.Now().After(deadline) {
			t.Fatal("the other node still reports bx's health")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if code, _ := call(other, "GET", "/v1/ids/bx", ""); code != 409 {
		t.Errorf("the other node issues from retired bx: %d", code)
	}
}

var silent = slog.New(slog.NewTextHandler(io.Discard, nil))
