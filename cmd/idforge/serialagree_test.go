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
