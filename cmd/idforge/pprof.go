//go:build pprof

package main

// Built only with -tags pprof, by scripts/pgo.sh, which profiles a node
// under load to refresh default.pgo. The release binary has no profiling
// endpoint: this file is how one is added for that run, never by a
// setting an operator could leave on.

import (
	"fmt"
	"net"
	"net/http"
	_ "net/http/pprof" // registers /debug/pprof/ on http.DefaultServeMux
	"os"
)

// pprofAddrEnv names the loopback address to serve /debug/pprof/ on; the
// address taken is printed to stderr as "pprof=HOST:PORT".
const pprofAddrEnv = "IDFORGE_PPROF_ADDR"

func init() {
	addr := os.Getenv(pprofAddrEnv)
	if addr == "" {
		return
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", pprofAddrEnv, err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "pprof=%s\n", ln.Addr())
	go http.Serve(ln, nil)
}
