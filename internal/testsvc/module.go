package testsvc

import (
	"context"
	"os/exec"
	"runtime/debug"
	"testing"
	"time"
)

// NestedModule vets and tests the nested module in dir (relative to the
// calling test's package), which keeps a heavy test-only dependency out
// of idforge's go.mod (server/ui/uitest's chromedp, api/openapitest's
// OpenAPI validator). A nested module is outside this module's ./..., so
// a test calling NestedModule is what keeps "go vet ./... && go test
// -race ./..." covering it: the module is tested with the same -race,
// -short and -v as the calling run, and the same environment (CI=true
// makes a missing service a failure there too).
func NestedModule(t *testing.T, dir string) {
	t.Helper()
	ctx := t.Context()
	if deadline, ok := t.Deadline(); ok {
		// Leave time to report the nested output before this binary's
		// own timeout panics.
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline.Add(-30*time.Second))
		defer cancel()
	}
	run := func(args ...string) {
		t.Helper()
		cmd := exec.CommandContext(ctx, "go", args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("in %s, go %v: %v\n%s", dir, args, err, out)
		}
		t.Logf("go %v:\n%s", args, out)
	}
	run("vet", "./...")
	args := []string{"test"}
	if raceEnabled() {
		args = append(args, "-race")
	}
	if testing.Short() {
		args = append(args, "-short")
	}
	if testing.Verbose() {
		args = append(args, "-v")
	}
	run(append(args, "./...")...)
}

// raceEnabled reports whether this test binary was built with -race.
func raceEnabled() bool {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range info.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}
