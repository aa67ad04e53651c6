package main_test

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/idforge/idforge/internal/e2e"
)

// An auto-increment table that fails is set aside and the others serve
// (JD's platform switches away from it): that raises the alarm the
// design asks for, logged once, counted in /metrics and reported through
// the same source status as a balanced source's ejection
// (/v1/health/sources, /readyz degraded).
func TestAutoincTableFailureAlarms(t *testing.T) {
	endToEnd(t, parallel)
	dir := t.TempDir()
	db := filepath.Join(dir, "ai.db")
	cfg := filepath.Join(dir, "idforge.toml")
	os.WriteFile(cfg, []byte(fmt.Sprintf(`[[sources]]
name = "ai"
url = "autoinc+sqlite://%s?tables=2&rescue=1h"
`, db)), 0o600)
	n := e2e.StartNode(t, "--config", cfg)
	ctx := context.Background()
	take := func() {
		t.Helper()
		if status, body, err := e2e.Get(ctx, n.URL("/v1/ids/ai")); err != nil || status != http.StatusOK {
			t.Fatalf("GET /v1/ids/ai: %d %s %v", status, body, err)
		}
	}
	for range 4 {
		take()
	}
	raw, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec("DROP TABLE idforge_autoinc_1"); err != nil {
		t.Fatal(err)
	}
	for range 20 {
		take() // table 0 serves every one
	}
	get := func(path string, want int) string {
		t.Helper()
		status, body, err := e2e.Get(ctx, n.URL(path))
		if err != nil || status != want {
			t.Fatalf("GET %s: %d %s %v; want %d", path, status, body, err, want)
		}
		return body
	}
	if body := get("/v1/health/sources", http.StatusOK); !strings.Contains(body, `"name":"ai"`) || !strings.Contains(body, `"health":"degraded"`) ||
		!strings.Contains(body, `"state":"ejected"`) || !strings.Contains(body, "idforge_autoinc_1") {
		t.Fatalf("/v1/health/sources does not report the failed table: %s", body)
	}
	if body := get("/readyz", http.StatusOK); !strings.Contains(body, `"status":"degraded"`) || !strings.Contains(body, "idforge_autoinc_1") {
		t.Fatalf("/readyz does not report the failed table: %s", body)
	}
	metrics := get("/metrics", http.StatusOK)
	for _, series := range []string{`idforge_source_member_ejections_total{member="idforge_autoinc_1 on `, `idforge_source_health{source="ai"} 1`} {
		if !strings.Contains(metrics, series) {
			t.Errorf("/metrics has no %s…", series)
		}
	}
	if logged := strings.Count(n.Logs(), "member failed; set aside"); logged != 1 {
		t.Errorf("the failed table was logged %d times; want once:\n%s", logged, n.Logs())
	}
}
