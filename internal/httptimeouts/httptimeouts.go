// Package httptimeouts owns the timeouts of idforge serve's HTTP server
// and enforces them.
//
// net/http enforces http.Server's ReadHeaderTimeout, ReadTimeout,
// WriteTimeout and IdleTimeout by reading the clock and setting the
// connection's deadlines four times per request, each a runtime timer
// moved: about a tenth of what a small request costs the server
// (bench/peers/cost.sh). Enforce leaves those fields zero and keeps the
// same timeouts with one watchdog per server instead: the connections it
// accepts note, in a few atomic stores, when a request starts, when its
// headers are read and when its answer is done (the Server's ConnState
// hook), and a goroutine that wakes every tick closes a connection whose
// time is up. A request so costs no timer and no clock read, and a
// timeout fires never before its time and at most two ticks after it.
package httptimeouts

import (
	"net"
	"net/http"
	"time"
)

// The server's timeouts: a client has ReadHeader to send a request's
// headers and Read for the whole request; the answer must be written
// within Write of the headers' arrival; a keep-alive connection idle for
// Idle is closed.
const (
	ReadHeader = 5 * time.Second
	Read       = 30 * time.Second
	Write      = 30 * time.Second
	Idle       = 2 * time.Minute
)

// Timeouts is one set of the four timeouts. Each must be positive.
type Timeouts struct {
	ReadHeader, Read, Write, Idle time.Duration
}

// Server is idforge serve's set.
var Server = Timeouts{ReadHeader: ReadHeader, Read: Read, Write: Write, Idle: Idle}

// Enforce makes srv keep the timeouts on the connections of ln: it
// returns the listener to serve (wrap it in TLS, if any, after this) and
// a function that stops the watchdog once srv has stopped serving. srv's
// own timeout fields must be zero, and Enforce takes its ConnState hook,
// calling any hook srv already had after its own.
func Enforce(srv *http.Server, ln net.Listener, t Timeouts) (net.Listener, func()) {
	w := newWatchdog(t)
	if next := srv.ConnState; next != nil {
		srv.ConnState = func(c net.Conn, s http.ConnState) {
			w.connState(c, s)
			next(c, s)
		}
	} else {
		srv.ConnState = w.connState
	}
	return w.listener(ln), w.stop
}
