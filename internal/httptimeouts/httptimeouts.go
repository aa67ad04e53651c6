// Package httptimeouts owns the timeouts of idforge serve's HTTP server,
// so that the trivial floor of bench/peers can be run with the same ones
// (TRIVIAL_TIMEOUTS=1) to show what they cost.
package httptimeouts

import (
	"net/http"
	"time"
)

// The server's timeouts: a client has ReadHeader to send a request's
// headers and Read for the whole request; the answer must be written
// within Write; a keep-alive connection idle for Idle is closed.
const (
	ReadHeader = 5 * time.Second
	Read       = 30 * time.Second
	Write      = 30 * time.Second
	Idle       = 2 * time.Minute
)

// Set gives srv the timeouts.
func Set(srv *http.Server) {
	srv.ReadHeaderTimeout = ReadHeader
	srv.ReadTimeout = Read
	srv.WriteTimeout = Write
	srv.IdleTimeout = Idle
}
