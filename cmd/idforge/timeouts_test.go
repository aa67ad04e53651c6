package main_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/idforge/idforge/internal/e2e"
	"github.com/idforge/idforge/internal/httptimeouts"
)

// idforge serve keeps its HTTP header timeout: a keep-alive connection
// that sends half a request after a whole one is closed by it, never
// before it, and gets no answer.
func TestServeHeaderTimeout(t *testing.T) {
	endToEnd(t, parallel)
	n := e2e.StartNode(t)
	c, err := net.Dial("tcp", n.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /healthz: %d", resp.StatusCode)
	}

	start := time.Now()
	io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n") // never finished
	c.SetReadDeadline(time.Now().Add(10 * httptimeouts.ReadHeader))
	rest, err := io.ReadAll(r)
	took := time.Since(start)
	if err != nil {
		t.Fatalf("half a request's connection not closed after %s: %v", took, err)
	}
	if took < httptimeouts.ReadHeader {
		t.Fatalf("half a request cut after %s, before the header timeout %s", took, httptimeouts.ReadHeader)
	}
	if len(rest) > 0 {
		t.Fatalf("answer to half a request: %q", rest)
	}
	t.Logf("closed after %s", took)
}
