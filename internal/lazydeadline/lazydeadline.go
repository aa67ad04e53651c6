// Package lazydeadline keeps a connection's read and write deadlines
// without re-arming the runtime's timer at every request.
//
// An http.Server with ReadHeaderTimeout, ReadTimeout, WriteTimeout and
// IdleTimeout sets its connection's deadlines four times per request,
// each a timer moved in the runtime's heap: on a small request that is
// about a tenth of what the server spends (bench/peers/cost.sh). Yet
// nearly every one of those deadlines moves later than the one before.
// A Conn passes a deadline on to the connection only when it is earlier
// than the one the connection has (so it can only fire too early, never
// too late) and, when the connection's deadline fires before the wanted
// one, sets the wanted one and reads or writes again. A connection busy
// with requests so re-arms its timer about once per timeout, not four
// times per request, and every deadline is kept as set.
package lazydeadline

import (
	"errors"
	"net"
	"os"
	"sync"
	"time"
)

// Listener wraps ln so that every connection it accepts is a Conn.
func Listener(ln net.Listener) net.Listener { return listener{ln} }

type listener struct{ net.Listener }

func (l listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return New(c), nil
}

// Conn is a net.Conn whose deadlines are passed on lazily (see the
// package comment). Its methods are safe for concurrent use, as a
// net.Conn's are.
type Conn struct {
	net.Conn
	read, write side
}

// side is the deadline state of one direction.
type side struct {
	mu   sync.Mutex
	want time.Time // the deadline set through the Conn (zero: none)
	have time.Time // the deadline the underlying connection has (zero: none)
	// passed: have had passed when it was set (net/http sets a deadline
	// in the past to stop a pending read), so whatever is set next is
	// passed on, lest the connection's next call fail at once.
	passed bool
}

// New wraps c. c must have no deadline set.
func New(c net.Conn) *Conn { return &Conn{Conn: c} }

// earlier reports whether deadline a comes before b, zero meaning never.
func earlier(a, b time.Time) bool { return !a.IsZero() && (b.IsZero() || a.Before(b)) }

// set records t as the wanted deadline and passes it on when it is
// earlier than the connection's.
func (s *side) set(t time.Time, apply func(time.Time) error) error {
	s.mu.Lock()
	s.want = t
	if !s.passed && !earlier(t, s.have) {
		s.mu.Unlock()
		return nil
	}
	defer s.mu.Unlock()
	now := time.Now()
	next := t
	if s.passed && !earlier(t, now.Add(rearm)) {
		next = now.Add(rearm)
	}
	if err := apply(next); err != nil {
		return err
	}
	s.have = next
	s.passed = !next.IsZero() && !next.After(now)
	return nil
}

// rearm bounds the deadline passed on after one in the past. net/http
// stops a pending read with a deadline in the past after every request,
// then clears it and sets the idle, header, body and write deadlines of
// the next request: each later than the one before, so that only the
// first, capped to rearm, reaches the connection. A connection idle for
// longer than rearm wakes once to take the deadline it was given.
const rearm = time.Second

// expired is called after the connection's deadline fired: it reports
// whether the wanted deadline has passed too, and if not, gives the
// connection the wanted deadline so that the call can be made again.
func (s *side) expired(apply func(time.Time) error) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.want.IsZero() && !time.Now().Before(s.want) {
		return true
	}
	if apply(s.want) != nil {
		return true
	}
	s.have, s.passed = s.want, false
	return false
}

// SetReadDeadline sets the deadline of reads, as net.Conn's does.
func (c *Conn) SetReadDeadline(t time.Time) error { return c.read.set(t, c.Conn.SetReadDeadline) }

// SetWriteDeadline sets the deadline of writes, as net.Conn's does.
func (c *Conn) SetWriteDeadline(t time.Time) error { return c.write.set(t, c.Conn.SetWriteDeadline) }

// SetDeadline sets both deadlines, as net.Conn's does.
func (c *Conn) SetDeadline(t time.Time) error {
	return errors.Join(c.SetReadDeadline(t), c.SetWriteDeadline(t))
}

// Read reads as net.Conn's Read does, failing with a timeout only once
// the deadline set through the Conn has passed.
func (c *Conn) Read(p []byte) (int, error) {
	for {
		n, err := c.Conn.Read(p)
		if n > 0 || !errors.Is(err, os.ErrDeadlineExceeded) || c.read.expired(c.Conn.SetReadDeadline) {
			return n, err
		}
	}
}

// Write writes as net.Conn's Write does, failing with a timeout only
// once the deadline set through the Conn has passed.
func (c *Conn) Write(p []byte) (int, error) {
	done := 0
	for {
		n, err := c.Conn.Write(p[done:])
		done += n
		if err == nil || !errors.Is(err, os.ErrDeadlineExceeded) || c.write.expired(c.Conn.SetWriteDeadline) {
			return done, err
		}
	}
}

// CloseWrite shuts down the writing side when the connection can (a
// TCP connection), so that net/http's graceful close still works.
func (c *Conn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
