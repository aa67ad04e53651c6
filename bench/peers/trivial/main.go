// Command trivial is the floor of bench/peers/http.sh and cost.sh: a
// net/http server whose one handler answers a counter in decimal text, as
// Leaf's segment endpoint answers an ID, with nothing else on the path.
//
//	go run ./trivial 127.0.0.1:18081
//
// It keeps idforge serve's read, write and idle timeouts as idforge serve
// does (httptimeouts.Set), so that the floor pays for them too.
package main

import (
	"log"
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
	srv := &http.Server{Addr: addr, Handler: h}
	httptimeouts.Set(srv)
	log.Fatal(srv.ListenAndServe())
}
