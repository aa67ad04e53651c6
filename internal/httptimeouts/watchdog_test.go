package httptimeouts

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idforge/idforge/internal/testca"
)

// short are timeouts a test can wait out; each differs from the others
// so that a test can tell which one closed a connection.
var short = Timeouts{ReadHeader: 300 * time.Millisecond, Read: 700 * time.Millisecond, Write: 500 * time.Millisecond, Idle: 900 * time.Millisecond}

// closedWithin is how long a test waits for a timeout to close a
// connection before it fails: far more than any timeout here, so that a
// busy machine cannot fail it.
const closedWithin = 20 * time.Second

// timerConn counts the deadlines set on the connection, and those of
// them in the future: those that move a runtime timer.
type timerConn struct {
	net.Conn
	timers, sets *atomic.Int64
}

func (c timerConn) count(t time.Time) {
	c.sets.Add(1)
	if t.After(time.Now()) {
		c.timers.Add(1)
	}
}

func (c timerConn) SetReadDeadline(t time.Time) error {
	c.count(t)
	return c.Conn.SetReadDeadline(t)
}

func (c timerConn) SetWriteDeadline(t time.Time) error {
	c.count(t)
	return c.Conn.SetWriteDeadline(t)
}

func (c timerConn) CloseWrite() error { return c.Conn.(*net.TCPConn).CloseWrite() }

type timerListener struct {
	net.Listener
	timers, sets *atomic.Int64
}

func (l timerListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return timerConn{c, l.timers, l.sets}, nil
}

type server struct {
	addr   string
	w      *watchdog
	timers atomic.Int64 // future deadlines set on the accepted connections
	sets   atomic.Int64 // deadlines of any kind set on them
	tls    *tls.Config  // the client's, when the server speaks TLS
}

// serve starts a server keeping t with Enforce, over TLS when withTLS.
func serve(t *testing.T, to Timeouts, withTLS bool, h http.Handler) *server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &server{addr: ln.Addr().String()}
	srv := &http.Server{Handler: h}
	wln, stop := Enforce(srv, timerListener{ln, &s.timers, &s.sets}, to)
	s.w = wln.(listener).w
	if withTLS {
		serverConf, clientConf := tlsConfigs(t)
		wln = tls.NewListener(wln, serverConf)
		s.tls = clientConf
	}
	go srv.Serve(wln)
	t.Cleanup(func() {
		srv.Close()
		stop()
	})
	return s
}

func (s *server) dial(t *testing.T) net.Conn {
	t.Helper()
	var c net.Conn
	var err error
	if s.tls != nil {
		c, err = tls.Dial("tcp", s.addr, s.tls)
	} else {
		c, err = net.Dial("tcp", s.addr)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// watched returns how many connections the watchdog holds.
func (s *server) watched() int {
	s.w.mu.Lock()
	defer s.w.mu.Unlock()
	return len(s.w.conns)
}

func get(t *testing.T, c net.Conn, r *bufio.Reader) string {
	t.Helper()
	if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("answer %d %q, %v", resp.StatusCode, body, err)
	}
	return string(body)
}

// awaitClose reads c until the server closes it and returns how long
// after since that was. Anything the server sent first is returned too.
func awaitClose(t *testing.T, c net.Conn, r io.Reader, since time.Time) (time.Duration, string) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(closedWithin))
	rest, err := io.ReadAll(r)
	if errors.Is(err, net.ErrClosed) || errors.Is(err, io.EOF) || err == nil || isReset(err) {
		return time.Since(since), string(rest)
	}
	t.Fatalf("the connection was not closed within %s: %v", closedWithin, err)
	return 0, ""
}

func isReset(err error) bool { return strings.Contains(err.Error(), "connection reset") }

var ok = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "1") })

// Requests on a keep-alive connection cost no timer: the connection's
// deadlines are never set in the future, however many requests go by,
// and of the seven times net/http sets one per request only two reach
// the connection: the deadline in the past that stops its background
// read, and the clearing after it.
func TestNoTimerPerRequest(t *testing.T) {
	const requests = 300
	s := serve(t, Server, false, ok)
	c := s.dial(t)
	r := bufio.NewReader(c)
	for range requests {
		if got := get(t, c, r); got != "1" {
			t.Fatalf("answer %q", got)
		}
	}
	if n := s.timers.Load(); n != 0 {
		t.Fatalf("%d deadlines in the future set for %d requests, want none", n, requests)
	}
	if n := s.sets.Load(); n > 2*requests+2 {
		t.Fatalf("%d deadlines set on the connection for %d requests, want at most two a request", n, requests)
	}
}

// A deadline set through the connection works as on the connection
// itself: it fires, one in the past stops a pending read, and clearing
// it, however often, lets reads go on.
func TestDeadlinesPassedOn(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	c := &conn{Conn: a}
	read := func() error {
		_, err := c.Read(make([]byte, 1))
		return err
	}
	c.SetReadDeadline(time.Time{}) // none to clear
	c.SetReadDeadline(time.Now().Add(30 * time.Millisecond))
	if err := read(); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Read past its deadline = %v, want os.ErrDeadlineExceeded", err)
	}
	c.SetReadDeadline(time.Time{})
	c.SetReadDeadline(time.Time{})
	done := make(chan error, 1)
	go func() { done <- read() }()
	time.Sleep(20 * time.Millisecond)
	c.SetReadDeadline(time.Unix(1, 0)) // as net/http stops its background read
	if err := <-done; !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("pending Read after a deadline in the past = %v, want os.ErrDeadlineExceeded", err)
	}
	c.SetReadDeadline(time.Time{})
	go b.Write([]byte("y"))
	if err := read(); err != nil {
		t.Fatalf("Read after the deadline was cleared = %v", err)
	}
	c.SetDeadline(time.Now().Add(30 * time.Millisecond))
	if _, err := c.Write([]byte("z")); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Write to a peer that does not read = %v, want os.ErrDeadlineExceeded", err)
	}
	c.SetDeadline(time.Time{})
	go io.ReadFull(b, make([]byte, 1))
	if _, err := c.Write([]byte("z")); err != nil {
		t.Fatalf("Write after the deadline was cleared = %v", err)
	}
}

// A connection that sends no request, or half of one after a whole one,
// is closed by the header timeout, never before it.
func TestHeaderTimeout(t *testing.T) {
	for _, withTLS := range []bool{false, true} {
		t.Run(fmt.Sprintf("tls=%v", withTLS), func(t *testing.T) {
			s := serve(t, short, withTLS, ok)

			silent := s.dial(t)
			start := time.Now()
			if took, _ := awaitClose(t, silent, silent, start); took < short.ReadHeader {
				t.Fatalf("a silent connection closed after %s, before the header timeout %s", took, short.ReadHeader)
			}

			c := s.dial(t)
			r := bufio.NewReader(c)
			get(t, c, r)
			start = time.Now()
			io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n") // never finished
			took, rest := awaitClose(t, c, r, start)
			if rest != "" {
				t.Fatalf("answer to half a request: %q", rest)
			}
			if took < short.ReadHeader {
				t.Fatalf("half a request cut after %s, before the header timeout %s", took, short.ReadHeader)
			}
			waitUnwatched(t, s)
		})
	}
}

// Headers that come slowly but within the header timeout are served.
func TestSlowHeadersServed(t *testing.T) {
	to := short
	to.ReadHeader = 2 * time.Second
	s := serve(t, to, false, ok)
	c := s.dial(t)
	r := bufio.NewReader(c)
	get(t, c, r) // the second request starts after an idle spell
	for _, part := range []string{"GET / HTTP/1.1\r\n", "Host: x\r\n", "\r\n"} {
		io.WriteString(c, part)
		time.Sleep(to.ReadHeader / 5)
	}
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatalf("headers sent within the header timeout were not answered: %v", err)
	}
	resp.Body.Close()
}

// A keep-alive connection lives through the idle timeout's span (longer
// than the header timeout) and is closed after it.
func TestIdleTimeout(t *testing.T) {
	s := serve(t, short, false, ok)
	c := s.dial(t)
	r := bufio.NewReader(c)
	get(t, c, r)
	start := time.Now()
	took, rest := awaitClose(t, c, r, start)
	if rest != "" {
		t.Fatalf("an idle connection was sent %q", rest)
	}
	if took < short.Idle {
		t.Fatalf("an idle connection closed after %s, before the idle timeout %s", took, short.Idle)
	}
}

// A request body that trickles in past the read timeout ends the
// request: the handler's read fails and the connection is closed. (The
// write timeout is made the later one here: a request is closed at
// whichever comes first, since past either it can no longer be
// answered.)
func TestReadTimeout(t *testing.T) {
	to := short
	to.Write = 3 * to.Read
	readErr := make(chan error, 1)
	s := serve(t, to, false, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := io.ReadAll(r.Body)
		readErr <- err
	}))
	c := s.dial(t)
	start := time.Now()
	io.WriteString(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n")
	go func() {
		for range 1000 {
			if _, err := c.Write([]byte("x")); err != nil {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	awaitTimedOut(t, readErr, start, to.Read, "reading a body that trickles in for 10 s")
}

// awaitTimedOut waits for what a handler reports on errs: an error, and
// no sooner than timeout after start.
func awaitTimedOut(t *testing.T, errs <-chan error, start time.Time, timeout time.Duration, what string) {
	t.Helper()
	select {
	case err := <-errs:
		if err == nil {
			t.Fatalf("%s succeeded past a %s timeout", what, timeout)
		}
		if took := time.Since(start); took < timeout {
			t.Fatalf("%s failed after %s, before its timeout %s: %v", what, took, timeout, err)
		}
	case <-time.After(closedWithin):
		t.Fatalf("%s did not end within %s", what, closedWithin)
	}
}

// An answer the client does not read ends at the write timeout: the
// handler's write fails.
func TestWriteTimeout(t *testing.T) {
	writeErr := make(chan error, 1)
	s := serve(t, short, false, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunk := make([]byte, 1<<20)
		for range 1 << 12 { // 4 GB: more than any socket buffer
			if _, err := w.Write(chunk); err != nil {
				writeErr <- err
				return
			}
		}
		writeErr <- nil
	}))
	c := s.dial(t)
	start := time.Now()
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n") // and never read
	awaitTimedOut(t, writeErr, start, short.Write, "writing 4 GB to a client that reads nothing")
}

// Connections closed by either side leave the watchdog, as do those a
// handler hijacks.
func TestConnectionsForgotten(t *testing.T) {
	s := serve(t, Server, false, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hijack" {
			c, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				c.Close()
			}
			return
		}
		io.WriteString(w, "1")
	}))
	for range 5 {
		c := s.dial(t)
		get(t, c, bufio.NewReader(c))
		c.Close()
	}
	c := s.dial(t)
	io.WriteString(c, "GET /hijack HTTP/1.1\r\nHost: x\r\n\r\n")
	waitUnwatched(t, s)
}

func waitUnwatched(t *testing.T, s *server) {
	t.Helper()
	for end := time.Now().Add(closedWithin); s.watched() > 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("%d connections still watched after they closed", s.watched())
		}
	}
}

// The tick: a twentieth of the shortest timeout, within its bounds.
func TestTick(t *testing.T) {
	for _, c := range []struct {
		to   Timeouts
		want time.Duration
	}{
		{Server, 250 * time.Millisecond},
		{short, 15 * time.Millisecond},
		{Timeouts{ReadHeader: time.Millisecond, Read: time.Second, Write: time.Second, Idle: time.Second}, minTick},
	} {
		w := newWatchdog(c.to)
		w.stop()
		if w.tick != c.want {
			t.Errorf("tick for %+v = %s, want %s", c.to, w.tick, c.want)
		}
	}
}

// tlsConfigs returns a server's configuration with a certificate for
// 127.0.0.1 and a client's that trusts it.
func tlsConfigs(t *testing.T) (server, client *tls.Config) {
	t.Helper()
	ca := testca.New(t, "httptimeouts")
	pair, err := tls.X509KeyPair(ca.Issue(t, 2, true))
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{Certificates: []tls.Certificate{pair}}, ca.ClientConfig(t, nil, nil)
}

// A ConnState hook the server already had still sees every change.
func TestHookChained(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var active, idle atomic.Int64
	srv := &http.Server{Handler: ok, ConnState: func(c net.Conn, s http.ConnState) {
		switch s {
		case http.StateActive:
			active.Add(1)
		case http.StateIdle:
			idle.Add(1)
		}
	}}
	wln, stop := Enforce(srv, ln, short)
	defer stop()
	go srv.Serve(wln)
	defer srv.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	for range 3 {
		get(t, c, r)
	}
	for end := time.Now().Add(closedWithin); idle.Load() < 3; time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			break
		}
	}
	if active.Load() != 3 || idle.Load() != 3 {
		t.Fatalf("the server's own hook saw %d active and %d idle for 3 requests", active.Load(), idle.Load())
	}
}

// A request that came in the same packet as the one before it is read
// from the buffer with no read of its own: its read and write timeouts
// run from when it is taken up, not from the start of the request
// before it, so both answers come, though together they take longer
// than either timeout.
func TestPipelinedRequestTimedFromItsStart(t *testing.T) {
	to := short
	to.Read, to.Write = time.Second, time.Second
	handle := to.Read * 6 / 10
	s := serve(t, to, false, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(handle)
		io.WriteString(w, "1")
	}))
	c := s.dial(t)
	r := bufio.NewReader(c)
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n")
	for i := range 2 {
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			t.Fatalf("answer %d of two pipelined requests taking %s each, with %s timeouts: %v", i+1, handle, to.Read, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}
