//go:build idforge_testclock

package idforge

import (
	"os"
	"strings"
	"sync/atomic"
	"time"
)

// In test builds the system clock reads the real clock plus an offset that
// an end-to-end test controls, so that it can move a running binary's clock
// (libfaketime cannot: Go reads the time through the vDSO, not libc). The
// offset is a Go duration ("-1h", "3ms") in the file named by
// $IDFORGE_TEST_CLOCK_FILE, polled every millisecond; each new offset
// applied is acknowledged in the file's name + ".applied", so that a test
// knows when the running binary has it.
var clockOffset atomic.Int64

func init() {
	path := os.Getenv("IDFORGE_TEST_CLOCK_FILE")
	if path == "" {
		return
	}
	acked := false
	read := func() {
		b, err := os.ReadFile(path)
		if err != nil {
			return
		}
		if d, err := time.ParseDuration(strings.TrimSpace(string(b))); err == nil {
			if clockOffset.Swap(int64(d)) != int64(d) || !acked {
				acked = os.WriteFile(path+".applied", []byte(d.String()), 0o644) == nil
			}
		}
	}
	read()
	go func() {
		for range time.Tick(time.Millisecond) {
			read()
		}
	}()
}

func wallNow() time.Time { return time.Now().Add(time.Duration(clockOffset.Load())) }
