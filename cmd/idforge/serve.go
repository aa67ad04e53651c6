package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/idforge/idforge/auth"
	"github.com/idforge/idforge/internal/dsn"
	"github.com/idforge/idforge/internal/heapfloor"
	"github.com/idforge/idforge/internal/httptimeouts"
	"github.com/idforge/idforge/node"
	"github.com/idforge/idforge/server/compat"
	"github.com/idforge/idforge/server/grpcapi"
	"github.com/idforge/idforge/server/httpapi"
	"github.com/idforge/idforge/server/ui"
)

// httpHandler assembles everything served over HTTP: idforge's own API,
// the Tinyid and Vesta compatibility endpoints and the admin page, behind
// authentication when tokens are configured, every request counted and
// timed in the node's metrics.
func httpHandler(n *node.Node, log *slog.Logger, authn *auth.Authenticator) http.Handler {
	root := &router{
		api: httpapi.New(n.Issuer(), httpapi.Options{Logger: log, Metrics: n.Metrics().Handler(),
			Node: httpapi.NodeInfo{Version: versionString(), Store: dsn.RedactedString(n.StoreURL()), Worker: n.WorkerSource()}, Quotas: n.Quotas()}),
		compat: compat.New(n.Issuer(), compat.Options{Logger: log}),
	}
	for _, p := range compat.Paths() {
		if prefix, ok := strings.CutSuffix(p, "/"); ok {
			root.compatPrefixes = append(root.compatPrefixes, prefix+"/")
		} else {
			root.compatPaths = append(root.compatPaths, p)
		}
	}
	// The page embeds the API's answers, asked through the same
	// authentication as the browser's own calls.
	var api http.Handler = root
	root.ui = ui.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { api.ServeHTTP(w, r) }))
	if authn != nil {
		// Tinyid's clients expect Tinyid's own answer to a bad token.
		api = authn.MiddlewareRefusing(root, nil, compat.TinyidRefusal)
	}
	return n.Metrics().InstrumentHTTP(api)
}

// router sends a request to the admin page (/ui, /ui/…), the Tinyid and
// Vesta handler (compat.Paths) or idforge's own API (everything else) by
// comparing strings, so that an ID request passes one http.ServeMux, not
// two. Each handler cleans its paths itself: an unclean path ("/a/../b")
// is redirected by whichever mux it reaches, and the redirect comes back
// here clean.
type router struct {
	api, compat, ui http.Handler
	compatPaths     []string // exact paths
	compatPrefixes  []string // subtrees, ending in '/'
}

func (rt *router) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	switch {
	case strings.HasPrefix(p, "/v1/"), strings.HasPrefix(p, "/api/"):
		rt.api.ServeHTTP(w, r)
	case p == "/ui", strings.HasPrefix(p, "/ui/"):
		rt.ui.ServeHTTP(w, r)
	case slices.Contains(rt.compatPaths, p), slices.ContainsFunc(rt.compatPrefixes, func(prefix string) bool { return strings.HasPrefix(p, prefix) }):
		rt.compat.ServeHTTP(w, r)
	default:
		rt.api.ServeHTTP(w, r)
	}
}

// grpcServer assembles the gRPC server: the IDForge service, health and
// reflection, with the same TLS and tokens as HTTP.
func grpcServer(n *node.Node, log *slog.Logger, authn *auth.Authenticator, tlsConfig *tls.Config) (*grpc.Server, *grpcapi.Server) {
	var opts []grpc.ServerOption
	if tlsConfig != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(tlsConfig)))
	}
	if authn != nil {
		opts = append(opts,
			grpc.ChainUnaryInterceptor(authn.UnaryInterceptor()),
			grpc.ChainStreamInterceptor(authn.StreamInterceptor()))
	}
	g := grpc.NewServer(opts...)
	api := grpcapi.New(n.Issuer(), grpcapi.Options{Logger: log, Quotas: n.Quotas()})
	api.Register(g)
	return g, api
}

// checkListenAddr checks a listen address as far as it can be checked
// without listening: host:port, with a port in 0..65535 or a service
// name. The error is a usage error naming the setting (http, grpc).
func checkListenAddr(setting, addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return usageErr("%s address %q: want host:port, e.g. 127.0.0.1:8080", setting, addr)
	}
	if _, err := net.LookupPort("tcp", port); err != nil {
		return usageErr("%s address %q: port %q is not a number in 0..65535 or a service name", setting, addr, port)
	}
	return nil
}

// heapFloor is the heap the collector lets grow to before it runs while
// the live heap is small (internal/heapfloor): nearly 32 MB rather than
// 4, for more memory under load; a node whose live heap reaches 8 MB
// (thousands of keys) is collected as GOGC=100 would.
const heapFloor = 32 << 20

// shutdownGrace bounds how long in-flight requests may run after SIGTERM.
const shutdownGrace = 10 * time.Second

func cmdServe(ctx context.Context, args []string, _, stderr io.Writer, getenv func(string) string) error {
	fs := newFlagSet("serve", stderr)
	nf := newNodeFlags(fs, true)
	if _, err := parseArgs(fs, args, 0, "no arguments"); err != nil {
		return err
	}
	cfg, err := nf.load(getenv)
	if err != nil {
		return err
	}
	// Everything the configuration alone decides is checked before
	// anything opens, as idforge config check does (exit 2); an address
	// that is taken is found by listening (exit 1).
	authn, tlsConfig, err := cfg.prepareServe()
	if err != nil {
		return cfg.inFile(err)
	}
	log := newLogger(stderr, cfg.LogLevel)
	defer heapfloor.Floor(heapFloor, getenv)()

	// Listen first: the listener's port is part of this node's identity
	// at a worker-ID coordinator.
	ln, err := net.Listen("tcp", cfg.HTTP)
	if err != nil {
		return fmt.Errorf("http address: %w", err)
	}
	defer ln.Close()
	var gln net.Listener
	if cfg.GRPC != "" {
		if gln, err = net.Listen("tcp", cfg.GRPC); err != nil {
			return fmt.Errorf("grpc address: %w", err)
		}
		defer gln.Close()
	}
	n, err := openNode(ctx, cfg, log, cfg.owner(ln.Addr().String()), getenv)
	if err != nil {
		return exitErr(err)
	}
	defer n.Close()
	srv := httpServer(httpHandler(n, log, authn))
	hln := ln
	if tlsConfig != nil {
		hln = tls.NewListener(ln, tlsConfig)
	}
	layout := n.Snowflake().Layout()
	grpcAddr := ""
	if gln != nil {
		grpcAddr = gln.Addr().String()
	}
	log.Info("idforge serving", "http", ln.Addr().String(), "grpc", grpcAddr, "data", n.Dir(),
		"store", dsn.RedactedString(n.StoreURL()), "layout", layout.String(),
		"worker", n.Snowflake().Worker(), "datacenter", n.Snowflake().Datacenter(),
		"layout_expires", layout.Expires().Format(time.RFC3339), "version", versionString())

	refreshCtx, stopRefresh := context.WithCancel(context.Background())
	defer stopRefresh()
	go n.Issuer().RefreshEvery(refreshCtx, time.Duration(cfg.RefreshKeys))
	go n.Quotas().RefreshEvery(refreshCtx, time.Duration(cfg.RefreshKeys))

	served := make(chan error, 1)
	go func() { served <- srv.Serve(hln) }()
	grpcServed := make(chan error, 1)
	var gsrv *grpc.Server
	var gapi *grpcapi.Server
	if gln != nil {
		gsrv, gapi = grpcServer(n, log, authn, tlsConfig)
		go func() { grpcServed <- gsrv.Serve(gln) }()
	}
	select {
	case err := <-served:
		return err
	case err := <-grpcServed:
		return fmt.Errorf("gRPC: %w", err)
	case <-ctx.Done():
	}
	log.Info("shutting down: draining requests", "grace", shutdownGrace)
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	grpcStopped := make(chan struct{})
	if gsrv != nil {
		// Health NOT_SERVING and open streams ended, then a graceful
		// stop (beside HTTP's), cut short when the grace period ends.
		gapi.Drain()
		go func() { gsrv.GracefulStop(); close(grpcStopped) }()
	}
	if err := srv.Shutdown(sctx); err != nil {
		log.Warn("requests still running at the end of the grace period", "err", err)
	}
	if gsrv != nil {
		select {
		case <-grpcStopped:
		case <-sctx.Done():
			log.Warn("gRPC calls still running at the end of the grace period")
			gsrv.Stop()
			<-grpcStopped
		}
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	stopRefresh()
	if err := n.Close(); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	log.Info("stopped")
	return nil
}

// httpServer is serve's HTTP server for h, with its timeouts.
func httpServer(h http.Handler) *http.Server {
	srv := &http.Server{Handler: h, MaxHeaderBytes: 64 << 10}
	httptimeouts.Set(srv)
	return srv
}
