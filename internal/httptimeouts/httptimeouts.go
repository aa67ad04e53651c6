// Package httptimeouts holds the timeouts of idforge serve's HTTP server,
// which the benchmarks' trivial server (bench/peers) keeps too, so that
// the floor idforge is measured against pays for them as idforge does.
package httptimeouts

import (
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

// Set gives srv the timeouts; net/http enforces them.
func Set(srv *http.Server) {
	srv.ReadHeaderTimeout, srv.ReadTimeout, srv.WriteTimeout, srv.IdleTimeout = ReadHeader, Read, Write, Idle
}
