package httpapi_test

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/node"
	"github.com/idforge/idforge/plugin"
	"github.com/idforge/idforge/quota"
	"github.com/idforge/idforge/server/httpapi"
)

// Issue 24, items 8 and 11: /v1/node and /v1/keys name the same plugin
// chain (the quota plugin included), and the rejection handler the
// configuration sets (log, count, for which keys) is what /v1/node shows
// and what happens when a plugin refuses.
func TestPluginChainAndRejections(t *testing.T) {
	logs := &records{}
	ctx := context.Background()
	n, err := node.Open(ctx, node.Settings{
		DataDir:    t.TempDir(),
		Logger:     slog.New(logs),
		Keys:       []node.Key{{Key: idforge.Key{Name: "order"}}, {Key: idforge.Key{Name: "bill"}}},
		Plugins:    []plugin.Config{{Kind: "history", Keys: []string{"order"}}},
		Rejections: plugin.Rejections{Log: true, Count: true, Keys: []string{"order"}},
		Quotas:     []quota.Spec{{Name: "shut", Closed: true, Keys: []string{"order", "bill"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	api := httpapi.New(n.Issuer(), httpapi.Options{Logger: silent, Metrics: n.Metrics().Handler()})
	get := func(path string) (int, string) {
		rec := httptest.NewRecorder()
		api.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		return rec.Code, rec.Body.String()
	}
	if _, body := get("/v1/node"); !strings.Contains(body, `"plugins":["quota","history (keys order)"]`) ||
		!strings.Contains(body, `"rejections":{"log":true,"count":true,"keys":["order"]}`) {
		t.Errorf("/v1/node: %s", body)
	}
	if _, body := get("/v1/keys/order"); !strings.Contains(body, `"plugins":["quota","history"]`) {
		t.Errorf("/v1/keys/order: %s", body)
	}
	if _, body := get("/v1/keys/bill"); !strings.Contains(body, `"plugins":["quota"]`) {
		t.Errorf("/v1/keys/bill: %s", body)
	}
	for _, key := range []string{"order", "order", "bill"} {
		if code, body := get("/v1/ids/" + key); code != 403 || !strings.Contains(body, `"rejected"`) {
			t.Fatalf("GET /v1/ids/%s under a closed quota: %d %s", key, code, body)
		}
	}
	// Logged and counted for order, the keys it names; bill is refused
	// all the same, neither logged nor counted.
	logged := 0
	logs.mu.Lock()
	for _, l := range logs.lines {
		if l["msg"] == "call refused by a plugin" {
			logged++
			if l["key"] != "order" || l["plugin"] != "quota" || !strings.Contains(l["reason"], "shut") {
				t.Errorf("logged %v", l)
			}
		}
	}
	logs.mu.Unlock()
	if logged != 2 {
		t.Errorf("%d refusals logged, want 2 (order's)", logged)
	}
	_, metrics := get("/metrics")
	if !strings.Contains(metrics, `idforge_plugin_rejections_total{key="order",plugin="quota"} 2`) || strings.Contains(metrics, `key="bill"`) {
		t.Errorf("/metrics counts refusals wrongly:\n%s", grep(metrics, "idforge_plugin_rejections_total"))
	}
}

// grep returns the lines of s that contain sub.
func grep(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
