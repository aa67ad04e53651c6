package httptimeouts

import (
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// A watchdog keeps one server's timeouts (see the package comment).
//
// Times are nanoseconds since start on a coarse clock, now, which the
// watchdog's goroutine advances every tick: reading it is one atomic
// load. A deadline is the coarse time of its event plus one tick plus
// the timeout, so that it never falls before the timeout has passed in
// real time (the coarse clock is up to one tick behind), and the sweep
// that sees it passed comes at most one more tick later.
type watchdog struct {
	t     Timeouts
	tick  time.Duration
	start time.Time
	now   atomic.Int64

	mu    sync.Mutex
	conns map[*conn]struct{}

	done     chan struct{}
	stopOnce sync.Once
}

// Ticks are a twentieth of the shortest timeout, within these bounds: a
// 5 s header timeout is kept within half a second, by a goroutine that
// wakes four times a second.
const (
	minTick = 5 * time.Millisecond
	maxTick = 250 * time.Millisecond
)

func newWatchdog(t Timeouts) *watchdog {
	w := &watchdog{
		t:     t,
		tick:  min(max(min(t.ReadHeader, t.Read, t.Write, t.Idle)/20, minTick), maxTick),
		start: time.Now(),
		conns: make(map[*conn]struct{}),
		done:  make(chan struct{}),
	}
	go w.run()
	return w
}

// after returns the deadline of a timeout d starting now.
func (w *watchdog) after(d time.Duration) int64 { return w.now.Load() + int64(w.tick+d) }

func (w *watchdog) run() {
	ticker := time.NewTicker(w.tick)
	defer ticker.Stop()
	var due []*conn
	for {
		select {
		case <-w.done:
			return
		case <-ticker.C:
		}
		now := int64(time.Since(w.start))
		w.now.Store(now)
		w.mu.Lock()
		for c := range w.conns {
			if now >= c.deadline.Load() {
				due = append(due, c)
				delete(w.conns, c)
			}
		}
		w.mu.Unlock()
		// Closing the connection ends a read or write blocked on it, as
		// net/http's own deadline would, and net/http then closes the
		// connection as after its own timeouts: a request cut short
		// gets no answer.
		for _, c := range due {
			c.Conn.Close()
		}
		clear(due)
		due = due[:0]
	}
}

func (w *watchdog) stop() { w.stopOnce.Do(func() { close(w.done) }) }

func (w *watchdog) forget(c *conn) {
	w.mu.Lock()
	delete(w.conns, c)
	w.mu.Unlock()
}

// connState is the server's ConnState hook: it moves a connection's
// deadline as its requests go by.
func (w *watchdog) connState(nc net.Conn, s http.ConnState) {
	c := w.own(nc)
	if c == nil {
		return
	}
	switch s {
	case http.StateActive:
		// The request's headers are read. The rest of it must come
		// within Read of its start and the answer must be written
		// within Write from now: the connection is closed at whichever
		// comes first, since past either the request can no longer be
		// answered. A request read whole from what came with the one
		// before never saw a read: it starts now.
		start := c.start.Load()
		if c.phase.Swap(phaseBusy) == phaseIdle {
			start = w.now.Load()
		}
		c.deadline.Store(min(start+int64(w.tick+w.t.Read), w.after(w.t.Write)))
	case http.StateIdle:
		c.deadline.Store(w.after(w.t.Idle))
		c.phase.Store(phaseIdle)
	case http.StateHijacked, http.StateClosed:
		w.forget(c)
	}
}

// own returns the connection of this watchdog that nc is, or that a TLS
// connection nc runs on; nil if none.
func (w *watchdog) own(nc net.Conn) *conn {
	c, ok := nc.(*conn) // first: a concrete type's assertion costs a comparison
	if !ok {
		if tc, isTLS := nc.(*tls.Conn); isTLS {
			c, ok = tc.NetConn().(*conn)
		}
	}
	if ok && c.w == w {
		return c
	}
	return nil
}

type listener struct {
	net.Listener
	w *watchdog
}

func (w *watchdog) listener(ln net.Listener) net.Listener { return listener{ln, w} }

func (l listener) Accept() (net.Conn, error) {
	nc, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	w := l.w
	c := &conn{Conn: nc, w: w}
	// The first request's headers are due ReadHeader after the accept,
	// a TLS handshake included.
	c.start.Store(w.now.Load())
	c.deadline.Store(w.after(w.t.ReadHeader))
	w.mu.Lock()
	w.conns[c] = struct{}{}
	w.mu.Unlock()
	return c, nil
}

// The phases of a connection.
const (
	phaseHeaders int32 = iota // a request's headers are being read (a new connection's first too)
	phaseIdle                 // between requests: the next bytes read start one
	phaseBusy                 // the headers are read: the rest of the request is read, or answered
)

// conn is an accepted connection, watched.
type conn struct {
	net.Conn
	w        *watchdog
	deadline atomic.Int64 // the coarse time from which the watchdog closes it
	start    atomic.Int64 // the coarse time the current request began
	phase    atomic.Int32

	read, write side
}

// side is one direction's deadline, as set on the connection. With no
// timeouts of its own, net/http still clears each deadline several
// times a request (five times in all), and each clearing locks the
// runtime's poll descriptor: side passes a clearing on only when the
// connection has a deadline to clear. net/http's one real use of a
// deadline per request, a read deadline in the past that stops its
// background read, and the clearing after it, pass on.
type side struct {
	mu  sync.Mutex  // held while a deadline is passed on
	set atomic.Bool // the connection may have a deadline: the last one passed on was not zero
}

func (s *side) apply(t time.Time, set func(time.Time) error) error {
	if t.IsZero() && !s.set.Load() {
		// Nothing to clear. A deadline being passed on at the same time
		// counts as set after this clearing, as it may on the connection.
		return nil
	}
	s.mu.Lock()
	s.set.Store(!t.IsZero())
	err := set(t)
	s.mu.Unlock()
	return err
}

// SetReadDeadline sets the read deadline, as net.Conn's does.
func (c *conn) SetReadDeadline(t time.Time) error { return c.read.apply(t, c.Conn.SetReadDeadline) }

// SetWriteDeadline sets the write deadline, as net.Conn's does.
func (c *conn) SetWriteDeadline(t time.Time) error {
	return c.write.apply(t, c.Conn.SetWriteDeadline)
}

// SetDeadline sets both deadlines, as net.Conn's does.
func (c *conn) SetDeadline(t time.Time) error {
	return errors.Join(c.SetReadDeadline(t), c.SetWriteDeadline(t))
}

// Read reads as net.Conn's does. The first bytes after an idle spell
// start a request: its headers are due ReadHeader from now.
func (c *conn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 && c.phase.Load() == phaseIdle {
		c.startRequest()
	}
	return n, err
}

func (c *conn) startRequest() {
	now := c.w.now.Load()
	c.start.Store(now)
	c.deadline.Store(now + int64(c.w.tick+c.w.t.ReadHeader))
	c.phase.Store(phaseHeaders)
}

// Close closes the connection and stops watching it.
func (c *conn) Close() error {
	c.w.forget(c)
	return c.Conn.Close()
}

// CloseWrite shuts down the writing side when the connection can (a
// TCP connection), so that net/http's graceful close still works.
func (c *conn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
