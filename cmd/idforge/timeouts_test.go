package main

import (
	"testing"

	"github.com/idforge/idforge/internal/httptimeouts"
)

// serve's HTTP server has the timeouts of httptimeouts, which net/http
// enforces (no test times them: a busy machine would move the figure).
func TestServeTimeouts(t *testing.T) {
	srv := httpServer(nil)
	for _, c := range []struct {
		name      string
		got, want any
	}{
		{"ReadHeaderTimeout", srv.ReadHeaderTimeout, httptimeouts.ReadHeader},
		{"ReadTimeout", srv.ReadTimeout, httptimeouts.Read},
		{"WriteTimeout", srv.WriteTimeout, httptimeouts.Write},
		{"IdleTimeout", srv.IdleTimeout, httptimeouts.Idle},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}
