package client

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/idforge/idforge"
	idforgev1 "github.com/idforge/idforge/api/idforge/v1"
	"github.com/idforge/idforge/auth"
	"github.com/idforge/idforge/issuer"
	"github.com/idforge/idforge/obfuscate"
	"github.com/idforge/idforge/segment"
	"github.com/idforge/idforge/server/grpcapi"
	"github.com/idforge/idforge/server/httpapi"
	"github.com/idforge/idforge/snowflake"
	"github.com/idforge/idforge/store/memstore"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// The issuer is what NewEmbedded runs over.
var _ Issuer = (*issuer.Issuer)(nil)

// newStore returns a store with the keys every test uses: "order"
// (segment, step 100), "msg" (snowflake), "cold" (segment, never used
// before the store fails), "invoice" (segment, what testSerials draw on),
// "ref" (segment from 255, shown in hex, see testFormats), "trace"
// (uuidv7) and "top" (segment, room for its last 100 IDs).
func newStore(tb testing.TB) *memstore.Store {
	tb.Helper()
	st := memstore.New()
	for _, k := range []idforge.Key{
		{Name: "order", Strategy: idforge.StrategySegment, Step: 100, MaxID: 1},
		{Name: "msg", Strategy: idforge.StrategySnowflake},
		{Name: "cold", Strategy: idforge.StrategySegment, Step: 100, MaxID: 1},
		{Name: "invoice", Strategy: idforge.StrategySegment, Step: 100, MaxID: 1},
		{Name: "ref", Strategy: idforge.StrategySegment, Step: 100, MaxID: 255},
		{Name: "trace", Strategy: idforge.StrategyUUIDv7},
		{Name: "top", Strategy: idforge.StrategySegment, Step: 100, MaxID: idforge.MaxSegmentID - 99},
	} {
		if err := st.CreateKey(context.Background(), k); err != nil {
			tb.Fatal(err)
		}
	}
	return st
}

// testSerials are every node's serial definitions. They draw on their
// own key, "invoice", so that their numbers do not depend on what the
// tests (or a range cache) took from "order".
var testSerials = []idforge.Serial{
	{Name: "bill", Template: "B@{seq:invoice,width=4}"},
	{Name: "job", Template: "@{param:area,chars=digits,max=4}-@{seq:invoice,width=4}"},
}

// testFormats shows the key "ref" in hex, so that NextStrings shows
// whether a client asks for the key's own text form.
func testFormats(tb testing.TB) map[string]obfuscate.Format {
	tb.Helper()
	hex, err := obfuscate.ParseFormat("hex")
	if err != nil {
		tb.Fatal(err)
	}
	return map[string]obfuscate.Format{"ref": hex}
}

// node is one idforge node: an issuer over a (possibly shared) store,
// serving HTTP and gRPC on loopback TCP.
type node struct {
	iss      *issuer.Issuer
	gen      *snowflake.Generator
	http     *httptest.Server
	grpc     *grpc.Server
	grpcAddr string

	// Calls that issue IDs (serials and strings included), counted per
	// transport.
	httpIDCalls atomic.Int64
	grpcIDCalls atomic.Int64
	// delay is added to every call that issues IDs (ns).
	delay atomic.Int64
}

// newNode starts a node with snowflake worker `worker` over st. maxStep
// bounds its segments.
func newNode(tb testing.TB, st idforge.Store, worker int64, maxStep int64) *node {
	tb.Helper()
	return newGuardedNode(tb, st, worker, maxStep, nil)
}

// newGuardedNode is newNode with both transports guarded by a, when a is
// not nil.
func newGuardedNode(tb testing.TB, st idforge.Store, worker int64, maxStep int64, a *auth.Authenticator) *node {
	tb.Helper()
	gen, err := snowflake.New(snowflake.Settings{Worker: worker, Logger: quiet})
	if err != nil {
		tb.Fatal(err)
	}
	iss := issuer.New(st, gen, issuer.Settings{Logger: quiet, Segment: segment.Settings{
		MaxStep: maxStep, RetryMin: time.Millisecond, RetryMax: 2 * time.Millisecond},
		Serials: testSerials, Formats: testFormats(tb)})
	n := &node{iss: iss, gen: gen}

	h := httpapi.New(iss, httpapi.Options{Logger: quiet})
	var grpcOpts []grpc.ServerOption
	if a != nil {
		h = a.Middleware(h, nil)
		grpcOpts = append(grpcOpts, grpc.ChainStreamInterceptor(a.StreamInterceptor()))
	}
	n.http = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/v1/ids/") || strings.HasPrefix(r.URL.Path, "/v1/serials/") {
			n.httpIDCalls.Add(1)
			n.sleep()
		}
		h.ServeHTTP(w, r)
	}))

	count := func(ctx context.Context, req any, info *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
		switch info.FullMethod {
		case idforgev1.IDForge_Next_FullMethodName, idforgev1.IDForge_NextBatch_FullMethodName,
			idforgev1.IDForge_NextStrings_FullMethodName, idforgev1.IDForge_NextSerial_FullMethodName:
			n.grpcIDCalls.Add(1)
			n.sleep()
		}
		return next(ctx, req)
	}
	grpcOpts = append(grpcOpts, grpc.ChainUnaryInterceptor(count))
	if a != nil {
		grpcOpts = append(grpcOpts, grpc.ChainUnaryInterceptor(a.UnaryInterceptor()))
	}
	n.grpc = grpc.NewServer(grpcOpts...)
	grpcapi.New(iss, grpcapi.Options{Logger: quiet}).Register(n.grpc)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	n.grpcAddr = ln.Addr().String()
	go n.grpc.Serve(ln)
	tb.Cleanup(n.stop)
	return n
}

// sleep waits for delay, or until delay is set to 0.
func (n *node) sleep() {
	for end := time.Now().Add(time.Duration(n.delay.Load())); n.delay.Load() > 0 && time.Now().Before(end); {
		time.Sleep(time.Millisecond)
	}
}

// stop kills the node's servers (idempotent).
func (n *node) stop() {
	n.http.CloseClientConnections()
	n.http.Close()
	n.grpc.Stop()
	n.iss.Close()
	n.gen.Close()
}

func testCtx(tb testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	tb.Cleanup(cancel)
	return ctx
}

// mode builds a client of one deployment mode over nodes.
type mode struct {
	name   string
	remote bool
	new    func(tb testing.TB, nodes []*node, opts ...Option) Client
}

var modes = []mode{
	{"embedded", false, func(tb testing.TB, nodes []*node, _ ...Option) Client {
		return NewEmbedded(nodes[0].iss)
	}},
	{"http", true, func(tb testing.TB, nodes []*node, opts ...Option) Client {
		var addrs []string
		for _, n := range nodes {
			addrs = append(addrs, n.http.URL)
		}
		c, err := NewHTTP(addrs, opts...)
		if err != nil {
			tb.Fatal(err)
		}
		return c
	}},
	{"grpc", true, func(tb testing.TB, nodes []*node, opts ...Option) Client {
		var addrs []string
		for _, n := range nodes {
			addrs = append(addrs, n.grpcAddr)
		}
		c, err := NewGRPC(addrs, opts...)
		if err != nil {
			tb.Fatal(err)
		}
		return c
	}},
}

// remoteModes are the modes with a network in between.
func remoteModes() []mode {
	var out []mode
	for _, m := range modes {
		if m.remote {
			out = append(out, m)
		}
	}
	return out
}

// idCalls counts the calls that issued IDs on n over m's transport.
func (m mode) idCalls(n *node) int64 {
	if m.name == "grpc" {
		return n.grpcIDCalls.Load()
	}
	return n.httpIDCalls.Load()
}

// checkUnique fails when an ID appears twice.
func checkUnique(tb testing.TB, ids []int64) {
	tb.Helper()
	seen := make(map[int64]bool, len(ids))
	for _, id := range ids {
		if seen[id] {
			tb.Fatalf("ID %d issued twice", id)
		}
		seen[id] = true
	}
}
