package lazydeadline

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idforge/idforge/internal/httptimeouts"
)

// A deadline moved later is kept: the connection's earlier one fires, and
// the read goes on until data comes.
func TestLaterDeadlineKept(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	c := New(a)
	if err := c.SetReadDeadline(time.Now().Add(20 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if err := c.SetReadDeadline(time.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(100 * time.Millisecond) // past the first deadline
		b.Write([]byte("x"))
	}()
	buf := make([]byte, 1)
	if n, err := c.Read(buf); n != 1 || err != nil {
		t.Fatalf("Read = %d, %v; want the byte written after the first deadline", n, err)
	}
}

// A deadline that passes ends the read with os.ErrDeadlineExceeded, as a
// net.Conn's does, and so does one moved earlier, and one in the past
// stops a pending read at once.
func TestDeadlinesFire(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	c := New(a)
	c.SetReadDeadline(time.Now().Add(time.Hour))
	c.SetReadDeadline(time.Now().Add(30 * time.Millisecond))
	if _, err := c.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Read after an earlier deadline = %v, want os.ErrDeadlineExceeded", err)
	}
	c.SetReadDeadline(time.Time{})
	done := make(chan error, 1)
	go func() { _, err := c.Read(make([]byte, 1)); done <- err }()
	time.Sleep(20 * time.Millisecond)
	c.SetReadDeadline(time.Unix(1, 0)) // as net/http aborts a background read
	if err := <-done; !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("pending Read after a deadline in the past = %v, want os.ErrDeadlineExceeded", err)
	}
	// Cleared again, the connection reads.
	c.SetReadDeadline(time.Time{})
	go b.Write([]byte("y"))
	if n, err := c.Read(make([]byte, 1)); n != 1 || err != nil {
		t.Fatalf("Read after clearing the deadline = %d, %v", n, err)
	}
	// Writes: a peer that never reads makes the write time out.
	c.SetWriteDeadline(time.Now().Add(time.Hour))
	c.SetWriteDeadline(time.Now().Add(30 * time.Millisecond))
	if _, err := c.Write([]byte("z")); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Write to a peer that does not read = %v, want os.ErrDeadlineExceeded", err)
	}
}

// countingConn counts the deadlines passed on to the connection that are
// in the future: those that move a runtime timer.
type countingConn struct {
	net.Conn
	timers *atomic.Int64
}

func (c countingConn) count(t time.Time) {
	if t.After(time.Now()) {
		c.timers.Add(1)
	}
}
func (c countingConn) SetReadDeadline(t time.Time) error {
	c.count(t)
	return c.Conn.SetReadDeadline(t)
}
func (c countingConn) SetWriteDeadline(t time.Time) error {
	c.count(t)
	return c.Conn.SetWriteDeadline(t)
}

type countingListener struct {
	net.Listener
	timers *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return countingConn{c, l.timers}, nil
}

// serve starts an http.Server with idforge serve's timeouts, but the
// header timeout given, over ln and returns its address.
func serve(t *testing.T, ln net.Listener, header time.Duration, h http.Handler) string {
	t.Helper()
	srv := &http.Server{Handler: h}
	httptimeouts.Set(srv)
	srv.ReadHeaderTimeout = header
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

func get(t *testing.T, addr string, requests int) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	for range requests {
		if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d", resp.StatusCode)
		}
	}
}

// Behind a Conn, a server with timeouts arms the connection's timer far
// less often than once per request; straight on the connection it arms
// it several times per request.
func TestFewerTimers(t *testing.T) {
	const requests = 200
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "1") })
	for _, c := range []struct {
		name string
		lazy bool
		max  int64
	}{{"direct", false, 1 << 30}, {"lazy", true, requests + 10}} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		var timers atomic.Int64
		var l net.Listener = countingListener{ln, &timers}
		if c.lazy {
			l = Listener(l)
		}
		get(t, serve(t, l, httptimeouts.ReadHeader, ok), requests)
		n := timers.Load()
		t.Logf("%s: %d timers armed for %d requests", c.name, n, requests)
		if !c.lazy && n < 3*requests {
			t.Fatalf("direct: %d timers armed for %d requests; the comparison is void", n, requests)
		}
		if n > c.max {
			t.Fatalf("%s: %d timers armed for %d requests, want at most %d", c.name, n, requests, c.max)
		}
	}
}

// The header timeout still closes a connection that sends half a request
// after a whole one (so that its deadlines are the lazy ones).
func TestHeaderTimeoutKept(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := serve(t, Listener(ln), 300*time.Millisecond, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n") // never finished
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	rest, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("the half request's connection was not closed by the header timeout: %v", err)
	}
	if len(rest) > 0 && !strings.Contains(string(rest), "408") {
		t.Fatalf("answer to a half request: %q", rest)
	}
}

// BenchmarkRequestDeadlines sets the deadlines net/http sets around one
// request of a keep-alive connection, on a Conn and on the connection
// itself.
func BenchmarkRequestDeadlines(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err == nil {
			io.Copy(io.Discard, c)
		}
	}()
	raw, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer raw.Close()
	for _, c := range []struct {
		name string
		conn net.Conn
	}{{"direct", raw}, {"lazy", New(raw)}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				now := time.Now()
				c.conn.SetReadDeadline(now.Add(5 * time.Second))
				c.conn.SetReadDeadline(now.Add(30 * time.Second))
				c.conn.SetWriteDeadline(now.Add(30 * time.Second))
				c.conn.SetReadDeadline(time.Time{})
				c.conn.SetReadDeadline(time.Unix(1, 0))
				c.conn.SetReadDeadline(time.Time{})
				c.conn.SetWriteDeadline(time.Time{})
				c.conn.SetReadDeadline(now.Add(2 * time.Minute))
			}
		})
	}
}
