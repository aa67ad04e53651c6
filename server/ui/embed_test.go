package ui

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/issuer"
	"github.com/idforge/idforge/metrics"
	"github.com/idforge/idforge/server/httpapi"
	"github.com/idforge/idforge/store/memstore"
)

// TestPageEmbedsAnswers checks that the page comes with the API's
// answers for its first paint, as JSON that cannot end its <script>.
func TestPageEmbedsAnswers(t *testing.T) {
	st := memstore.New()
	ctx := context.Background()
	if err := st.CreateKey(ctx, idforge.Key{Name: "order", Strategy: idforge.StrategySegment, Step: 10, MaxID: 1,
		Description: "</script><b>not markup</b>"}); err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	m := metrics.New()
	iss := issuer.New(st, nil, issuer.Settings{Logger: quiet})
	defer iss.Close()
	m.Observe(iss)
	if _, err := iss.NextN(ctx, "order", 3); err != nil {
		t.Fatal(err)
	}
	api := httpapi.New(iss, httpapi.Options{Logger: quiet, Metrics: m.Handler(),
		Node: httpapi.NodeInfo{Version: "v9.9.9", Store: "mysql://root:xxxxx@db/idforge"}})
	rec := httptest.NewRecorder()
	Handler(api).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/ui", nil))
	body := rec.Body.String()
	if strings.Count(body, "</script>") != 2 {
		t.Fatalf("the embedded data ends its <script>: %d </script>", strings.Count(body, "</script>"))
	}
	m1 := regexp.MustCompile(`(?s)<script type="application/json" id="initial">(.*?)</script>`).FindStringSubmatch(body)
	if m1 == nil {
		t.Fatal("no embedded data")
	}
	var in struct {
		Answers map[string]struct {
			Status int             `json:"status"`
			Body   json.RawMessage `json:"body"`
		} `json:"answers"`
	}
	if err := json.Unmarshal([]byte(m1[1]), &in); err != nil {
		t.Fatal(err)
	}
	for _, p := range Paths {
		a, ok := in.Answers[p]
		if !ok || a.Status != 200 {
			t.Errorf("%s: %+v", p, a)
		}
	}
	for p, want := range map[string]string{
		"v1/keys": `"next":"4"`, "v1/node": `"version":"v9.9.9"`, "metrics": `idforge_segment_buffered_ids{key=\"order\"} `,
	} {
		if !strings.Contains(string(in.Answers[p].Body), want) {
			t.Errorf("%s: %s lacks %s", p, in.Answers[p].Body, want)
		}
	}
	if strings.Contains(string(in.Answers["metrics"].Body), "go_goroutines") {
		t.Error("the Go runtime's metrics are embedded")
	}
}
