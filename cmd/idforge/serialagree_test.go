package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idforge/idforge/internal/e2e"
)

// `idforge serial check --config` and POST /v1/serials run the same
// checks on the same definitions: what one accepts the other accepts,
// what one refuses the other refuses, for the same reason.
func TestSerialCheckAgreesWithServer(t *testing.T) {
	endToEnd(t, parallel)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "idforge.toml")
	os.WriteFile(cfg, []byte(fmt.Sprintf(`store = "sqlite://%s"
[[counters]]
name = "daily"
url = "sqlite://%s?period=day"
`, filepath.Join(dir, "shared.db"), filepath.Join(dir, "counters.db"))), 0o600)
	n := e2e.StartNode(t, "--config", cfg)
	for i, tc := range []struct {
		template string
		accept   bool
		says     string // in both refusals
	}{
		// README's per-unit serial: one counter per unit, created on
		// first use.
		{"@{param:unit,width=4,chars=digits,in=6541|6542}-@{seq:jobs,by=unit,width=5}", true, ""},
		{"QJ@{seq:daily}", false, "counts per day"},
		{"QJ@{date:yyyyMMdd}@{seq:daily,width=5}", true, ""},
		{"QJ@{seq:nosuchkey}", false, "nosuchkey"},
	} {
		body, _ := json.Marshal(map[string]string{"name": fmt.Sprintf("s%d", i), "template": tc.template})
		status, answer, err := e2e.Do(context.Background(), http.MethodPost, n.URL("/v1/serials"), string(body))
		if err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(e2e.Binary(t), "serial", "check", "--config", cfg, "--data", filepath.Join(dir, "check"), tc.template).CombinedOutput()
		code := 0
		if err != nil {
			code = err.(*exec.ExitError).ExitCode()
		}
		switch {
		case tc.accept && (status != http.StatusCreated || code != 0):
			t.Errorf("%s: server %d %s, serial check exit %d %s; want both to accept", tc.template, status, answer, code, out)
		case !tc.accept && (status != http.StatusBadRequest && status != http.StatusNotFound || code != 1):
			t.Errorf("%s: server %d %s, serial check exit %d %s; want both to refuse", tc.template, status, answer, code, out)
		case !tc.accept && (!strings.Contains(answer, tc.says) || !strings.Contains(string(out), tc.says)):
			t.Errorf("%s: server %s, serial check %s; want both to say %q", tc.template, answer, out, tc.says)
		}
	}
}

// @{seq:daily,by=unit} on a per-day counter counts per unit per day:
// JD's 010-6541-00001 restarting daily, never repeating. A unit whose
// counter name is a key already (made by an earlier idforge, which
// counted it forever) is refused rather than counted afresh, and the
// same template without a date is refused when defined.
func TestSerialPerUnitPerDay(t *testing.T) {
	endToEnd(t, parallel)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "idforge.toml")
	os.WriteFile(cfg, []byte(fmt.Sprintf(`[[counters]]
name = "daily"
url = "sqlite://%s?period=day"
[[serials]]
name = "jobs"
template = "@{date:yyyyMMdd}-@{param:unit,width=4,chars=digits}-@{seq:daily,by=unit,width=5}"
`, filepath.Join(dir, "counters.db"))), 0o600)
	n := e2e.StartNode(t, "--config", cfg)
	ctx := context.Background()
	seen := map[string]bool{}
	take := func(unit string, count int, want ...string) {
		t.Helper()
		status, body, err := e2e.Get(ctx, n.URL(fmt.Sprintf("/v1/serials/jobs?count=%d&param.unit=%s", count, unit)))
		if err != nil || status != http.StatusOK {
			t.Fatalf("unit %s: %d %s %v", unit, status, body, err)
		}
		var got struct{ Values []string }
		json.Unmarshal([]byte(body), &got)
		for i, v := range got.Values {
			if seen[v] {
				t.Fatalf("serial %s issued twice", v)
			}
			seen[v] = true
			if !strings.HasSuffix(v, "-"+unit+"-"+want[i]) {
				t.Fatalf("unit %s: serials %v; want them to end in %v", unit, got.Values, want)
			}
		}
	}
	take("6541", 3, "00001", "00002", "00003")
	take("6542", 2, "00001", "00002")
	n.SetClock(24 * time.Hour)
	take("6541", 2, "00001", "00002")
	take("6542", 1, "00001")

	status, body, _ := e2e.Do(ctx, http.MethodPost, n.URL("/v1/keys"), `{"key":"daily-6543"}`)
	if status != http.StatusCreated {
		t.Fatalf("creating the key daily-6543: %d %s", status, body)
	}
	status, body, _ = e2e.Get(ctx, n.URL("/v1/serials/jobs?param.unit=6543"))
	if status != http.StatusBadRequest || !strings.Contains(body, "unsafe_change") || !strings.Contains(body, "daily-6543") {
		t.Fatalf("unit 6543 whose counter name is a key: %d %s; want 400 unsafe_change naming it", status, body)
	}
	status, body, _ = e2e.Do(ctx, http.MethodPost, n.URL("/v1/serials"),
		`{"name":"nodate","template":"@{param:unit,width=4,chars=digits}-@{seq:daily,by=unit,width=5}"}`)
	if status != http.StatusBadRequest || !strings.Contains(body, "counts per day") {
		t.Fatalf("per-unit per-day counter without a date: %d %s; want 400 saying the day is not shown", status, body)
	}
}
