package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 27, item 2: --worker ip://… and the configuration's worker take
// the ID from an address; bits that do not fit the layout are refused.
func TestWorkerIP(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "idforge.toml")
	if err := os.WriteFile(file, []byte("[snowflake]\nworker = \"ip://?addr=10.1.2.9&bits=4\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e := env(map[string]string{"IDFORGE_DATA": filepath.Join(dir, "data")})
	if code, _, stderr := runCmd(t, e, "keys", "create", "msg", "--strategy", "snowflake"); code != 0 {
		t.Fatalf("keys create: %s", stderr)
	}
	for _, tc := range []struct {
		args   []string
		worker string
	}{
		{[]string{"--worker", "ip://?addr=10.1.2.3&bits=5"}, "worker      3\n"},
		{[]string{"--config", file}, "worker      9\n"},
	} {
		code, out, stderr := runCmd(t, e, append([]string{"next", "msg"}, tc.args...)...)
		if code != 0 {
			t.Fatalf("next %v: %s", tc.args, stderr)
		}
		if code, out, _ = runCmd(t, e, "explain", strings.TrimSpace(out)); code != 0 || !strings.Contains(out, tc.worker) {
			t.Errorf("next %v, explained: %q; want %q", tc.args, out, tc.worker)
		}
	}
	code, _, stderr := runCmd(t, e, "next", "msg", "--worker", "ip://?addr=10.1.2.3&bits=12")
	if code == 0 || !strings.Contains(stderr, "bits=12 does not fit the layout's 5 worker bits") {
		t.Fatalf("bits beyond the layout: exit %d, %q", code, stderr)
	}
}
