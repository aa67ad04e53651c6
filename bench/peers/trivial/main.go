// Command trivial is the floor of bench/peers/http.sh and cost.sh: a
// net/http server whose one handler answers a counter in decimal text, as
// Leaf's segment endpoint answers an ID, with nothing else on the path.
//
//	go run ./trivial 127.0.0.1:18081
//
// With TRIVIAL_TIMEOUTS=1 in its environment the server keeps the read,
// write and idle timeouts of idforge serve the way idforge serve does
// (httptimeouts.Enforce), and with TRIVIAL_TIMEOUTS=native the way
// net/http does, setting the connection's deadlines at every request:
// cost.sh shows what each costs beside the bare floor.
package main

import (
	"log"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync/atomic"

	"github.com/idforge/idforge/internal/httptimeouts"
)

func main() {
	addr := "127.0.0.1:18081"
	if len(os.Args) > 1 {
		addr = os.Args[1]
	}
	var n atomic.Int64
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Write(strconv.AppendInt(nil, n.Add(1), 10))
	})
	srv := &http.Server{Handler: h}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		log.Fatal(err)
	}
	switch os.Getenv("TRIVIAL_TIMEOUTS") {
	case "":
	case "native":
		to := httptimeouts.Server
		srv.ReadHeaderTimeout, srv.ReadTimeout, srv.WriteTimeout, srv.IdleTimeout = to.ReadHeader, to.Read, to.Write, to.Idle
	default:
		ln, _ = httptimeouts.Enforce(srv, ln, httptimeouts.Server)
	}
	log.Fatal(srv.Serve(ln))
}
