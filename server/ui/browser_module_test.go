package ui

import (
	"context"
	"os/exec"
	"runtime/debug"
	"testing"
	"time"
)

// TestBrowserModule runs the admin page's browser test, which lives in the
// module server/ui/uitest so that chromedp stays out of idforge's go.mod.
// A nested module is outside this module's ./..., so this test is what
// keeps "go vet ./... && go test -race ./..." covering it: it vets and
// tests that module with the same -race, -short and -v as this run, and
// the environment (CI=true makes a missing Chromium a failure there).
func TestBrowserModule(t *testing.T) {
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
		cmd.Dir = "uitest"
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("in server/ui/uitest, go %v: %v\n%s", args, err, out)
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
