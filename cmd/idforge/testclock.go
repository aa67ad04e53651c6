//go:build idforge_testclock

package main

import (
	"os"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/testclock"
)

// In test builds (internal/e2e builds the binary with the tag) every part
// that reads idforge.SystemClock reads a clock the end-to-end test moves
// through the file named by $IDFORGE_TEST_CLOCK_FILE. It is installed
// before main runs, so before anything reads the clock. Release builds do
// not compile this file.
func init() {
	if path := os.Getenv(testclock.EnvFile); path != "" {
		idforge.SystemClock = testclock.Watch(path)
	}
}
