package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idforge/idforge/doctor"
	"github.com/idforge/idforge/internal/testsvc"
)

// doctorRun runs `idforge doctor --json args…` with no environment and
// returns its exit status and findings.
func doctorRun(t *testing.T, args ...string) (int, []doctor.Finding) {
	t.Helper()
	code, out, errOut := runCmd(t, env(nil), append([]string{"doctor", "--json"}, args...)...)
	var r struct{ Findings []doctor.Finding }
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("doctor %v: exit %d, no JSON: %v\n%s\n%s", args, code, err, out, errOut)
	}
	return code, r.Findings
}

// want finds the finding of check with status whose message holds every
// fragment, or fails the test listing what there was.
func want(t *testing.T, fs []doctor.Finding, check string, status doctor.Status, fragments ...string) doctor.Finding {
	t.Helper()
	for _, f := range fs {
		if f.Check != check || f.Status != status {
			continue
		}
		ok := true
		for _, frag := range fragments {
			ok = ok && strings.Contains(f.Message, frag)
		}
		if ok {
			if status != doctor.OK && status != doctor.Skip && f.Fix == "" {
				t.Errorf("%s %s: no fix given", status, check)
			}
			return f
		}
	}
	t.Fatalf("no %s %s finding with %q among:\n%s", status, check, fragments, findingsText(fs))
	return doctor.Finding{}
}

func findingsText(fs []doctor.Finding) string {
	var b strings.Builder
	for _, f := range fs {
		b.WriteString(string(f.Status) + " " + f.Check + " " + f.Message + "\n")
	}
	return b.String()
}

// newDataDir returns a data directory as a node creates it, with a
// migrated SQLite store in it.
func newDataDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "data")
	if code, out, errOut := runCmd(t, env(nil), "keys", "create", "order", "--step", "100", "--data", dir); code != 0 {
		t.Fatalf("keys create: %d %s %s", code, out, errOut)
	}
	return dir
}

// A listener beyond loopback without a token fails (serve would refuse
// to start); with a token but no TLS it warns; loopback is fine.
func TestDoctorExposure(t *testing.T) {
	dir := newDataDir(t)
	code, fs := doctorRun(t, "--data", dir, "--http", "0.0.0.0:8080")
	want(t, fs, "exposure", doctor.Fail, "0.0.0.0:8080", "no token")
	if code != 1 {
		t.Errorf("exit %d with a failed check, want 1", code)
	}
	cfg := filepath.Join(t.TempDir(), "idforge.toml")
	os.WriteFile(cfg, []byte("[auth]\ntokens = [{ token = \"s3cret-token-for-doctor\", role = \"admin\" }]\n"), 0o600)
	_, fs = doctorRun(t, "--data", dir, "--config", cfg, "--http", "0.0.0.0:8080", "--grpc", "127.0.0.1:9090")
	want(t, fs, "exposure", doctor.Warn, "without TLS")
	want(t, fs, "exposure", doctor.OK, "grpc", "loopback")
}

// The data directory: as the node creates it (0750) it is fine; open to
// everyone it fails; missing it warns.
func TestDoctorDataDir(t *testing.T) {
	dir := newDataDir(t)
	code, fs := doctorRun(t, "--data", dir)
	want(t, fs, "data-dir", doctor.OK, dir)
	if code != 0 {
		t.Errorf("exit %d with nothing failed:\n%s", code, findingsText(fs))
	}
	os.Chmod(dir, 0o777)
	code, fs = doctorRun(t, "--data", dir)
	want(t, fs, "data-dir", doctor.Fail, "writable by every user")
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	os.Chmod(dir, 0o755)
	_, fs = doctorRun(t, "--data", dir)
	want(t, fs, "data-dir", doctor.Warn, "open to more users")
	os.Chmod(dir, 0o750)

	missing := filepath.Join(t.TempDir(), "new")
	_, fs = doctorRun(t, "--data", missing)
	want(t, fs, "data-dir", doctor.Warn, "does not exist yet")
	want(t, fs, "store", doctor.Warn, "does not exist yet")
}

// The layout's expiry: decades left is fine, months a warning, past a
// failure.
func TestDoctorLayout(t *testing.T) {
	dir := newDataDir(t)
	_, fs := doctorRun(t, "--data", dir)
	want(t, fs, "layout", doctor.OK, "twitter", "2080-07-10")

	// 35 bits of milliseconds last about 398 days.
	spec := func(epoch time.Time) string {
		return "time:35,worker:10,sequence:18,unit=1ms,epoch=" + epoch.UTC().Format(time.RFC3339)
	}
	_, fs = doctorRun(t, "--data", dir, "--layout", spec(time.Now().Add(-200*24*time.Hour)))
	want(t, fs, "layout", doctor.Warn, "in 19")
	code, fs := doctorRun(t, "--data", dir, "--layout", spec(time.Now().Add(-500*24*time.Hour)))
	want(t, fs, "layout", doctor.Fail, "ran out")
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
}

// Worker IDs left for the cluster size, and a worker ID the layout cannot
// hold.
func TestDoctorWorkers(t *testing.T) {
	dir := newDataDir(t)
	small := "time:41,worker:2,sequence:20,unit=1ms,epoch=2020-01-01T00:00:00Z" // 4 worker IDs
	for _, c := range []struct {
		size     string
		status   doctor.Status
		fragment string
	}{
		{"1", doctor.OK, "3 of 4 worker IDs left"},
		{"3", doctor.Warn, "1 left"},
		{"5", doctor.Fail, "only 4 worker IDs"},
	} {
		_, fs := doctorRun(t, "--data", dir, "--layout", small, "--cluster-size", c.size)
		want(t, fs, "workers", c.status, c.fragment)
	}
	_, fs := doctorRun(t, "--data", dir)
	want(t, fs, "workers", doctor.Warn, "cluster size unknown")
	code, fs := doctorRun(t, "--data", dir, "--layout", small, "--worker", "9")
	want(t, fs, "workers", doctor.Fail, "worker ID 9 does not fit")
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
}

// The store's schema: a migrated SQLite store is fine; a MariaDB database
// nobody migrated fails with the fix. Each segment key's step is listed;
// without a node to ask, its rate is unknown. No node has started on the
// store yet, so no fingerprint is recorded.
func TestDoctorStore(t *testing.T) {
	dir := newDataDir(t)
	code, fs := doctorRun(t, "--data", dir)
	want(t, fs, "schema", doctor.OK, "every table idforge uses is there", "no version number")
	want(t, fs, "step order", doctor.Warn, "rate unknown")
	want(t, fs, "fingerprints", doctor.OK, "none recorded yet")
	want(t, fs, "clock", doctor.Skip, "no --node")
	if code != 0 {
		t.Errorf("exit %d:\n%s", code, findingsText(fs))
	}

	storeURL := testsvc.MySQL(t)
	code, fs = doctorRun(t, "--data", dir, "--store", storeURL)
	f := want(t, fs, "store", doctor.Fail, "migrate")
	if !strings.Contains(f.Fix, "idforge migrate") {
		t.Errorf("fix %q does not say to migrate", f.Fix)
	}
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	if code, out, errOut := runCmd(t, env(nil), "migrate", "--store", storeURL, "--data", dir); code != 0 {
		t.Fatalf("migrate: %d %s %s", code, out, errOut)
	}
	_, fs = doctorRun(t, "--data", dir, "--store", storeURL)
	want(t, fs, "schema", doctor.OK, "every table idforge uses is there")
}

// The fingerprints recorded at first use: doctor reads each one and says
// whether the configuration still matches, by the rule serve starts by
// (it fails exactly where serve refuses with unsafe_change).
func TestDoctorFingerprints(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	cfg := filepath.Join(t.TempDir(), "idforge.toml")
	write := func(format string) {
		os.WriteFile(cfg, []byte(`data = "`+dir+`"
[[keys]]
name = "order"
format = "`+format+`"
`), 0o600)
	}
	write("base62:min=8")
	_, fs := doctorRun(t, "--config", cfg)
	want(t, fs, "fingerprints", doctor.Skip, "no store yet")
	if code, out, errOut := runCmd(t, env(nil), "next", "--config", cfg, "order"); code != 0 {
		t.Fatalf("next: %d %s %s", code, out, errOut)
	}
	code, fs := doctorRun(t, "--config", cfg)
	want(t, fs, "fingerprint format/order", doctor.OK, "matches", "base62:min=8")
	want(t, fs, "fingerprint snowflake/layout", doctor.OK, "matches")
	if code != 0 {
		t.Errorf("exit %d with nothing failed:\n%s", code, findingsText(fs))
	}

	write("base62:min=9")
	code, fs = doctorRun(t, "--config", cfg)
	want(t, fs, "fingerprint format/order", doctor.Fail, "unsafe change", "base62:min=8", "base62:min=9")
	if code != 1 {
		t.Errorf("exit %d with a changed format, want 1", code)
	}
	if code, _, errOut := runCmd(t, env(nil), "next", "--config", cfg, "order"); code == 0 || !strings.Contains(errOut, "unsafe change") {
		t.Fatalf("next with the changed format: exit %d %q; want the unsafe change doctor reported", code, errOut)
	}
	// The key left out of the configuration: its format was removed while
	// it still issues, which serve refuses too.
	os.WriteFile(cfg, []byte(`data = "`+dir+`"`+"\n"), 0o600)
	_, fs = doctorRun(t, "--config", cfg)
	want(t, fs, "fingerprint format/order", doctor.Fail, "no format")
}
