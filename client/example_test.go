package client_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http/httptest"

	"google.golang.org/grpc"
	"google.golang.org/grpc/test/bufconn"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/client"
	"github.com/idforge/idforge/issuer"
	"github.com/idforge/idforge/plugin"
	"github.com/idforge/idforge/quota"
	"github.com/idforge/idforge/server/grpcapi"
	"github.com/idforge/idforge/server/httpapi"
	"github.com/idforge/idforge/store/memstore"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// newIssuer returns an issuer over an in-memory store with the segment
// key "order" (first ID 1). A real deployment uses store/sqlite or a SQL
// server, and a snowflake generator for snowflake keys.
func newIssuer() *issuer.Issuer {
	st := memstore.New()
	st.CreateKey(context.Background(), idforge.Key{Name: "order", Strategy: idforge.StrategySegment, Step: 1000, MaxID: 1})
	return issuer.New(st, nil, issuer.Settings{Logger: quiet})
}

// The issuer runs in the calling process: no server, no network.
func ExampleNewEmbedded() {
	iss := newIssuer()
	defer iss.Close()
	c := client.NewEmbedded(iss)
	defer c.Close()
	ctx := context.Background()

	ids, _ := c.NextN(ctx, "order", 3)
	fmt.Println(ids)

	// One key as an idforge.Generator, for code that takes one.
	var orders idforge.Generator = c.Key("order")
	id, _ := orders.Next(ctx)
	fmt.Println(id)

	_, err := c.Next(ctx, "invoice")
	fmt.Println(errors.Is(err, idforge.ErrUnknownKey))
	// Output:
	// [1 2 3]
	// 4
	// true
}

// Two idforge nodes behind the REST API; the client prefers the first and
// fails over to the second.
func ExampleNewHTTP() {
	iss := newIssuer()
	defer iss.Close()
	srv := httptest.NewServer(httpapi.New(iss, httpapi.Options{Logger: quiet}))
	defer srv.Close()
	backup := httptest.NewServer(httpapi.New(iss, httpapi.Options{Logger: quiet}))
	defer backup.Close()

	c, err := client.NewHTTP([]string{srv.URL, backup.URL}, client.WithToken("secret"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	ctx := context.Background()

	id, _ := c.Next(ctx, "order")
	fmt.Println(id)
	srv.Close() // the first node goes away
	id, err = c.Next(ctx, "order")
	fmt.Println(id, err)

	_, err = c.NextN(ctx, "order", 0)
	fmt.Println(errors.Is(err, idforge.ErrInvalidCount))
	// Output:
	// 1
	// 2 <nil>
	// true
}

// A central server over gRPC, here in process over bufconn; a real client
// gives host:port addresses.
func ExampleNewGRPC() {
	iss := newIssuer()
	defer iss.Close()
	g := grpc.NewServer()
	grpcapi.New(iss, grpcapi.Options{Logger: quiet}).Register(g)
	ln := bufconn.Listen(1 << 20)
	go g.Serve(ln)
	defer g.Stop()

	c, err := client.NewGRPC([]string{"passthrough:///idforge"},
		client.WithDialOptions(grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
			return ln.DialContext(ctx)
		})))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	ctx := context.Background()

	ids, _ := c.NextN(ctx, "order", 5)
	fmt.Println(ids)

	_, err = c.Next(ctx, "nope")
	var srvErr *client.Error
	fmt.Println(errors.Is(err, idforge.ErrUnknownKey), errors.As(err, &srvErr) && srvErr.Code == "unknown_key")
	// Output:
	// [1 2 3 4 5]
	// true true
}

// Serial numbers: the server's configuration defines the templates
// (issuer.Settings.Serials, or POST /v1/serials); a client names one and
// passes the template's parameters. The same call works embedded and over
// gRPC.
func ExampleClient_NextSerial() {
	st := memstore.New()
	st.CreateKey(context.Background(), idforge.Key{Name: "order", Strategy: idforge.StrategySegment, Step: 1000, MaxID: 1})
	iss := issuer.New(st, nil, issuer.Settings{Logger: quiet, Serials: []idforge.Serial{
		{Name: "bill", Template: "B@{seq:order,width=4}"},
		{Name: "job", Template: "@{param:area}-@{seq:order,width=4}"},
	}})
	defer iss.Close()
	srv := httptest.NewServer(httpapi.New(iss, httpapi.Options{Logger: quiet}))
	defer srv.Close()

	c, err := client.NewHTTP([]string{srv.URL})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	ctx := context.Background()

	bills, _ := c.NextSerial(ctx, "bill", 3, nil)
	fmt.Println(bills)
	jobs, _ := c.NextSerial(ctx, "job", 2, map[string]string{"area": "010"})
	fmt.Println(jobs)

	_, err = c.NextSerial(ctx, "receipt", 1, nil)
	fmt.Println(errors.Is(err, idforge.ErrUnknownKey))
	_, err = c.NextSerial(ctx, "job", 1, nil) // no area
	fmt.Println(errors.Is(err, idforge.ErrInvalidArgument))
	// Output:
	// [B0001 B0002 B0003]
	// [010-0004 010-0005]
	// true
	// true
}

// A range cache: the client fetches 100 IDs per request and hands them
// out locally, fetching the next block when 20 are left.
func ExampleWithRangeCache() {
	iss := newIssuer()
	defer iss.Close()
	srv := httptest.NewServer(httpapi.New(iss, httpapi.Options{Logger: quiet}))
	defer srv.Close()

	c, err := client.NewHTTP([]string{srv.URL}, client.WithRangeCache(100, 0.2))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	ctx := context.Background()

	var last int64
	for range 250 {
		last, _ = c.Next(ctx, "order")
	}
	fmt.Println(last)
	// Output:
	// 250
}

// Bulk: a consumer that wants millions of IDs ranges over Stream. Over
// gRPC it is one call whose messages carry batch IDs each; over HTTP one
// compact ranges answer per batch.
func ExampleClient_Stream() {
	iss := newIssuer()
	defer iss.Close()
	g := grpc.NewServer()
	grpcapi.New(iss, grpcapi.Options{Logger: quiet}).Register(g)
	ln := bufconn.Listen(1 << 20)
	go g.Serve(ln)
	defer g.Stop()

	c, err := client.NewGRPC([]string{"passthrough:///idforge"},
		client.WithDialOptions(grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
			return ln.DialContext(ctx)
		})))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	total := 0
	for ids, err := range c.Stream(context.Background(), "order", 10_000) {
		if err != nil {
			fmt.Println(err)
			return
		}
		if total == 0 {
			fmt.Println("first batch:", ids[0], "to", ids[len(ids)-1])
		}
		if total += len(ids); total >= 100_000 {
			break // ends the stream
		}
	}
	fmt.Println(total, "IDs")
	// Output:
	// first batch: 1 to 10000
	// 100000 IDs
}

// Quotas over gRPC: define one on the server's quota.Manager (whose
// Limiter is in the issuer's plugin chain), take IDs until it refuses,
// and retire it. NewQuotas does the same over HTTP.
func ExampleNewGRPCQuotas() {
	ctx := context.Background()
	st := memstore.New()
	st.CreateKey(ctx, idforge.Key{Name: "order", Strategy: idforge.StrategySegment, Step: 1000, MaxID: 1})
	lim := quota.NewLimiter(nil)
	defer lim.Close()
	m, err := quota.NewManager(ctx, lim, st, nil, nil, quiet)
	if err != nil {
		fmt.Println(err)
		return
	}
	iss := issuer.New(st, nil, issuer.Settings{Logger: quiet, Plugins: plugin.NewChain(nil, lim)})
	defer iss.Close()
	g := grpc.NewServer()
	grpcapi.New(iss, grpcapi.Options{Logger: quiet, Quotas: m}).Register(g)
	ln := bufconn.Listen(1 << 20)
	go g.Serve(ln)
	defer g.Stop()
	dial := client.WithDialOptions(grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
		return ln.DialContext(ctx)
	}))

	q, err := client.NewGRPCQuotas("passthrough:///idforge", dial)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer q.Close()
	def, err := q.Define(ctx, client.Quota{Name: "orders", Keys: []string{"order"}, Limit: 3, Per: "day"})
	fmt.Println(def.Name, def.Limit, def.Per, def.Origin, err)

	c, err := client.NewGRPC([]string{"passthrough:///idforge"}, dial)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	ids, _ := c.NextN(ctx, "order", 3)
	_, err = c.Next(ctx, "order")
	fmt.Println(ids, errors.Is(err, idforge.ErrRejected))

	def, err = q.Retire(ctx, "orders")
	fmt.Println(def.Retired, err)
	// Output:
	// orders 3 day api <nil>
	// [1 2 3] true
	// true <nil>
}
