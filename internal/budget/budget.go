// Package budget bounds how long a request may wait on the store without
// paying for a timer on the requests that never wait.
//
// context.WithTimeout allocates a context and starts a timer for every
// request, although a request answered from buffered IDs never looks at
// its context. A Ctx carries the same deadline but makes the real timer
// only when something asks for its Done channel (a call that is about to
// wait), so the fast path costs one small allocation and a clock read.
package budget

import (
	"context"
	"sync"
	"time"
)

// Ctx is a context.Context that is done when its parent is or when its
// deadline passes, like one of context.WithDeadline. Release it when the
// request ends, as one would call a CancelFunc.
type Ctx struct {
	parent   context.Context
	deadline time.Time

	mu     sync.Mutex
	inner  context.Context // made on first need: a context.WithDeadline of parent
	cancel context.CancelFunc
}

// released stands in for the real context of a Ctx released before
// anything needed it: done, as after a CancelFunc.
var released = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

// New returns a context done when parent is done or timeout has passed.
func New(parent context.Context, timeout time.Duration) *Ctx {
	return &Ctx{parent: parent, deadline: time.Now().Add(timeout)}
}

// real returns the context.WithDeadline this Ctx stands for, making it on
// the first call.
func (c *Ctx) real() context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.inner == nil {
		c.inner, c.cancel = context.WithDeadline(c.parent, c.deadline)
	}
	return c.inner
}

// made returns the real context if it was made, else nil.
func (c *Ctx) made() context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.inner
}

// Deadline returns the earlier of the budget's and the parent's deadline.
func (c *Ctx) Deadline() (time.Time, bool) {
	if d, ok := c.parent.Deadline(); ok && d.Before(c.deadline) {
		return d, true
	}
	return c.deadline, true
}

// Done returns a channel closed when the parent is done or the deadline
// passes. The first call starts the timer.
func (c *Ctx) Done() <-chan struct{} { return c.real().Done() }

// Err returns nil while the budget lasts and the parent is not done,
// else the reason, as context.WithDeadline's Err does.
func (c *Ctx) Err() error {
	if in := c.made(); in != nil {
		return in.Err()
	}
	if err := c.parent.Err(); err != nil || !time.Now().Before(c.deadline) {
		// From here on the real context answers, so that Done, Err and
		// context.Cause agree.
		return c.real().Err()
	}
	return nil
}

// Value returns the parent's value for key (the real context's once it
// exists, so that context.Cause sees its cause).
func (c *Ctx) Value(key any) any {
	if in := c.made(); in != nil {
		return in.Value(key)
	}
	return c.parent.Value(key)
}

// Release stops the timer, if one was started, and ends the context; call
// it when the request is answered.
func (c *Ctx) Release() {
	c.mu.Lock()
	cancel := c.cancel
	if c.inner == nil {
		// Anything asking later gets a context that is already done, as
		// after a CancelFunc, without a timer ever having started.
		c.inner = released
	}
	c.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}
