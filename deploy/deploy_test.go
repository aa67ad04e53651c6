// Package deploy holds the tests of idforge's deployment files: the
// Prometheus alerting rules and the Grafana dashboard (the Kubernetes
// chart and manifests are tested in the module deploy/deploytest, which
// scripts/test.sh runs).
package deploy

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/idforge/idforge/internal/e2e"
)

func TestMain(m *testing.M) { os.Exit(e2e.Main(m)) }

// promtool returns the path of Prometheus' promtool, skipping the test
// without it (failing under CI, whose .ci/run installs it).
func promtool(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("promtool")
	if err != nil {
		msg := "promtool not found: apt-get install -y prometheus (Debian's package ships it)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return path
}

// TestPrometheusRules checks the alerting rules with promtool and runs
// their unit tests, which prove each rule fires and stays quiet on
// synthetic series.
func TestPrometheusRules(t *testing.T) {
	bin := promtool(t)
	for _, args := range [][]string{
		{"check", "rules", "idforge-rules.yml"},
		{"test", "rules", "idforge-rules.test.yml"},
	} {
		cmd := exec.CommandContext(t.Context(), bin, args...)
		cmd.Dir = "prometheus"
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	// Every alert has a unit test.
	rules, err := os.ReadFile("prometheus/idforge-rules.yml")
	if err != nil {
		t.Fatal(err)
	}
	tests, err := os.ReadFile("prometheus/idforge-rules.test.yml")
	if err != nil {
		t.Fatal(err)
	}
	alerts := regexp.MustCompile(`(?m)^\s*- alert: (\w+)`).FindAllStringSubmatch(string(rules), -1)
	if len(alerts) == 0 {
		t.Fatal("no alerts in idforge-rules.yml")
	}
	for _, a := range alerts {
		if !strings.Contains(string(tests), "alertname: "+a[1]+"\n") {
			t.Errorf("alert %s has no promtool test", a[1])
		}
	}
}

// dashboard is the part of a Grafana dashboard this test reads.
type dashboard struct {
	Panels []struct {
		Title   string `json:"title"`
		Targets []struct {
			Expr string `json:"expr"`
		} `json:"targets"`
	} `json:"panels"`
	Templating struct {
		List []struct {
			Definition string `json:"definition"`
		} `json:"list"`
	} `json:"templating"`
}

var (
	// What is not a metric name in a query: strings, label matchers,
	// ranges, grouping clauses and Grafana's variables; and numbers.
	promqlNoise  = regexp.MustCompile(`"[^"]*"|\{[^}]*\}|\[[^\]]*\]|\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)|\$\{?\w+\}?`)
	promqlNumber = regexp.MustCompile(`(^|[^a-zA-Z0-9_:])\d[\d.]*(?:[eE][+-]?\d+)?`)
	promqlIdent  = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*(\s*\()?`)
	promqlWords  = []string{"and", "or", "unless", "bool", "offset", "e", "inf", "nan"}
)

// metricNames returns the metric names a PromQL expression reads.
func metricNames(expr string) []string {
	var names []string
	for _, m := range promqlIdent.FindAllString(promqlNumber.ReplaceAllString(promqlNoise.ReplaceAllString(expr, " "), "${1} "), -1) {
		if strings.HasSuffix(m, "(") || slices.Contains(promqlWords, strings.ToLower(m)) {
			continue // a function or aggregation, or an operator
		}
		names = append(names, m)
	}
	return names
}

func TestMetricNames(t *testing.T) {
	got := metricNames(`histogram_quantile(0.99, sum by (key, le) (rate(idforge_segment_claim_duration_seconds_bucket{job=~"$job", key=~"a|b"}[$__rate_interval]))) / on (instance) group_left (worker) idforge_snowflake_info and go_goroutines > 1e3`)
	want := []string{"idforge_segment_claim_duration_seconds_bucket", "idforge_snowflake_info", "go_goroutines"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("metricNames = %q, want %q", got, want)
	}
}

// TestDashboardMetrics checks that every metric the Grafana dashboard
// queries is in the real binary's /metrics after some traffic: a node
// with a segment key under an outage budget, a snowflake key, a worker ID
// leased from an SQL table (so the lease is exported) and a balanced
// source over two SQLite rows.
func TestDashboardMetrics(t *testing.T) {
	data, err := os.ReadFile("grafana/idforge.json")
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatal(err)
	}
	queried := map[string][]string{} // metric -> panels
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			names := metricNames(tg.Expr)
			if len(names) == 0 && tg.Expr != "" {
				t.Errorf("panel %q: query %q reads no metric", p.Title, tg.Expr)
			}
			for _, n := range names {
				queried[n] = append(queried[n], p.Title)
			}
		}
	}
	for _, v := range d.Templating.List {
		for _, n := range metricNames(strings.TrimSuffix(strings.TrimPrefix(v.Definition, "label_values("), ")")) {
			if n != "job" && n != "instance" && n != "key" {
				queried[n] = append(queried[n], "variable")
			}
		}
	}
	if len(queried) < 15 {
		t.Fatalf("the dashboard queries only %d metrics: %v", len(queried), queried)
	}

	dir := t.TempDir()
	config := filepath.Join(dir, "idforge.toml")
	err = os.WriteFile(config, []byte(fmt.Sprintf(`
[segment]
survive_outage = "1m"

[[keys]]
name = "order"
step = 100

[[keys]]
name = "msg"
strategy = "snowflake"

[[sources]]
name = "tickets"
balance = ["sqlrow+sqlite://%[1]s/a.db?name=t", "sqlrow+sqlite://%[1]s/b.db?name=t"]
`, dir)), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	n := e2e.StartNode(t, "--config", config, "--worker", "sqlite://"+filepath.Join(dir, "workers.db"))
	ctx := t.Context()
	for range 20 {
		if _, err := e2e.FetchIDs(ctx, n.URL("/v1/ids/order?count=7")); err != nil {
			t.Fatal(err)
		}
		if _, err := e2e.FetchIDs(ctx, n.URL("/v1/ids/msg?count=3")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e2e.FetchID(ctx, n.URL("/api/segment/get/order")); err != nil {
		t.Fatal(err)
	}
	if status, _, err := e2e.Get(ctx, n.URL("/v1/ids/no-such-key")); err != nil || status != 404 {
		t.Fatalf("unknown key: %d %v, want 404", status, err)
	}
	status, body, err := e2e.Get(ctx, n.URL("/metrics"))
	if err != nil || status != 200 {
		t.Fatalf("/metrics: %d %v", status, err)
	}
	exported := map[string]bool{}
	for _, line := range strings.Split(body, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, _, _ := strings.Cut(line, " ")
		name, _, _ = strings.Cut(name, "{")
		exported[name] = true
	}
	for name, panels := range queried {
		if !exported[name] {
			t.Errorf("the dashboard's %q queries %s, which /metrics does not export", panels, name)
		}
	}
	if t.Failed() {
		t.Log(body)
	}
}
