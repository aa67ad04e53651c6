// Package testclock is the clock of the idforge binary's test builds
// (build tag BuildTag): the real clock plus an offset that an end-to-end
// test controls through a file, so that it can move a running binary's
// clock (libfaketime cannot: Go reads the time through the vDSO, not
// libc). internal/e2e writes the file (Node.SetClock); cmd/idforge
// installs the clock in a file built only with the tag, so release
// builds neither link this package nor have the seam, and the domain
// packages hold no test hook.
package testclock

import (
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/idforge/idforge"
)

const (
	// BuildTag is the build tag of the binary's test builds.
	BuildTag = "idforge_testclock"
	// EnvFile names the environment variable that holds the path of the
	// offset file.
	EnvFile = "IDFORGE_TEST_CLOCK_FILE"
)

// pollEvery is how often the offset file is read.
const pollEvery = time.Millisecond

// AppliedFile is where a clock watching path acknowledges each offset it
// applied (the offset, written as a Go duration), so that a test knows
// when the running binary has it.
func AppliedFile(path string) string { return path + ".applied" }

// Clock reads the real time plus the offset last read from its file.
type Clock struct {
	path   string
	offset atomic.Int64
	acked  bool // only the polling goroutine (and Watch, before it) touch it
}

var _ idforge.Clock = (*Clock)(nil)

// Watch returns a Clock whose offset is the Go duration ("-1h", "3ms") in
// the file at path, read now and then every millisecond for the life of
// the process; each new offset applied is acknowledged in
// AppliedFile(path). A missing or unreadable file keeps the offset as it
// was (0 at first).
func Watch(path string) *Clock {
	c := &Clock{path: path}
	c.read()
	go func() {
		for range time.Tick(pollEvery) {
			c.read()
		}
	}()
	return c
}

func (c *Clock) read() {
	b, err := os.ReadFile(c.path)
	if err != nil {
		return
	}
	d, err := time.ParseDuration(strings.TrimSpace(string(b)))
	if err != nil {
		return
	}
	if c.offset.Swap(int64(d)) != int64(d) || !c.acked {
		c.acked = os.WriteFile(AppliedFile(c.path), []byte(d.String()), 0o644) == nil
	}
}

// Now returns the real time plus the offset.
func (c *Clock) Now() time.Time { return time.Now().Add(time.Duration(c.offset.Load())) }

// Sleep pauses the caller for d of real time: an offset moves the clock,
// it does not speed it up.
func (c *Clock) Sleep(d time.Duration) { time.Sleep(d) }
