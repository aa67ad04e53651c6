package main

import (
	"strings"
	"testing"
)

// idforge version prints what a release build stamped (scripts/release.sh,
// the Dockerfile), and "dev" with whatever the build info has otherwise.
func TestVersionLine(t *testing.T) {
	defer func(v, c, d string) { version, commit, date = v, c, d }(version, commit, date)
	noEnv := func(string) string { return "" }

	version, commit, date = "0.1.0", "0123456789abcdef0123456789abcdef01234567", "2026-11-28T07:41:12Z"
	if code, out, _ := runCmd(t, noEnv, "version"); code != 0 || out != "idforge 0.1.0 (commit 0123456789abcdef0123456789abcdef01234567, built 2026-11-28T07:41:12Z)\n" {
		t.Errorf("a release build's version: %d %q", code, out)
	}
	if got := versionString(); got != "0.1.0" {
		t.Errorf("versionString() = %q, want 0.1.0 (GET /v1/node shows it)", got)
	}

	version, commit, date = "", "", ""
	if code, out, _ := runCmd(t, noEnv, "version"); code != 0 || !strings.HasPrefix(out, "idforge dev (commit ") || !strings.Contains(out, ", built ") {
		t.Errorf("a plain build's version: %d %q", code, out)
	}
}
