package testsvc

import (
	"os"
	"testing"
)

// SlowEnv names the environment variable that runs the slow suites
// (real engine failovers, chart rendering, long soaks) outside CI.
const SlowEnv = "IDFORGE_SLOW"

// Slow marks a suite that takes long enough to spoil the README's plain
// test command on a laptop. It runs under CI (CI=true, as .ci/run sets)
// or with IDFORGE_SLOW=1, and otherwise skips saying how to run it. Call
// it first, before starting any server.
func Slow(tb testing.TB) {
	tb.Helper()
	if os.Getenv("CI") == "true" || os.Getenv(SlowEnv) == "1" {
		return
	}
	tb.Skip("slow suite: run it with " + SlowEnv + "=1 (CI runs it)")
}
