// Package fakeclock provides a settable idforge.Clock for tests.
package fakeclock

import (
	"sync"
	"time"

	"github.com/idforge/idforge"
)

// Clock is a manually driven clock. Sleep advances the clock by the
// requested duration instead of blocking, so code that waits for time to
// pass makes progress deterministically. It is safe for concurrent use.
type Clock struct {
	mu     sync.Mutex
	now    time.Time
	slept  time.Duration
	sleeps int
}

var _ idforge.Clock = (*Clock)(nil)

// New returns a clock reading t.
func New(t time.Time) *Clock { return &Clock{now: t} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Sleep advances the clock by d (when positive) and records the sleep.
func (c *Clock) Sleep(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d > 0 {
		c.now = c.now.Add(d)
		c.slept += d
	}
	c.sleeps++
}

// Set moves the clock to t, forwards or backwards.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

// Add moves the clock by d, which may be negative.
func (c *Clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// Slept returns the total duration passed to Sleep and the number of calls.
func (c *Clock) Slept() (time.Duration, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.slept, c.sleeps
}
