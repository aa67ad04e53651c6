package grpcapi

import (
	"context"
	"io"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/idforge/idforge"
	idforgev1 "github.com/idforge/idforge/api/idforge/v1"
	"github.com/idforge/idforge/issuer"
	"github.com/idforge/idforge/segment"
	"github.com/idforge/idforge/store/memstore"
)

// benchServer serves a segment key "order" over gRPC on a loopback TCP
// port (not bufconn: the kernel's loopback is part of what is measured).
// Segments are large, so store claims do not show.
func benchServer(b *testing.B) idforgev1.IDForgeClient {
	b.Helper()
	st := memstore.New()
	st.CreateKey(context.Background(), idforge.Key{Name: "order", Strategy: idforge.StrategySegment, Step: idforge.MaxStep, MaxID: 1})
	iss := issuer.New(st, nil, issuer.Settings{Logger: quiet, Segment: segment.Settings{MaxStep: 100_000_000}})
	c := serveTCP(b, iss)
	if _, err := c.Next(context.Background(), &idforgev1.NextRequest{Key: "order"}); err != nil {
		b.Fatal(err)
	}
	return c
}

// idsPerSecond reports the rate of IDs over the benchmark's time.
func idsPerSecond(b *testing.B, ids int64, start time.Time) {
	b.ReportMetric(float64(ids)/time.Since(start).Seconds(), "ids/s")
}

// concurrency is the number of calls in flight per GOMAXPROCS in the
// parallel benchmarks: enough to keep the server busy over loopback.
const concurrency = 16

// BenchmarkGRPC measures the gRPC transport over loopback TCP: one
// connection, many concurrent calls (RunParallel with 16 goroutines per
// CPU), as a busy client process uses it.
func BenchmarkGRPC(b *testing.B) {
	c := benchServer(b)
	ctx := context.Background()
	b.Run("Next", func(b *testing.B) {
		b.ReportAllocs()
		b.SetParallelism(concurrency)
		start := time.Now()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := c.Next(ctx, &idforgev1.NextRequest{Key: "order"}); err != nil {
					panic(err)
				}
			}
		})
		idsPerSecond(b, int64(b.N), start)
	})
	b.Run("NextBatch100", func(b *testing.B) {
		b.ReportAllocs()
		b.SetParallelism(concurrency)
		start := time.Now()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := c.NextBatch(ctx, &idforgev1.NextBatchRequest{Key: "order", Count: 100}); err != nil {
					panic(err)
				}
			}
		})
		idsPerSecond(b, int64(b.N)*100, start)
	})
	// One op is one message of 1000 IDs on a single endless stream.
	b.Run("Stream1000", func(b *testing.B) {
		b.ReportAllocs()
		sctx, cancel := context.WithCancel(ctx)
		defer cancel()
		s, err := c.Stream(sctx, &idforgev1.StreamRequest{Key: "order", Batch: 1000})
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		for b.Loop() {
			m, err := s.Recv()
			if err == io.EOF || len(m.GetIds()) != 1000 {
				b.Fatalf("stream ended: %v", err)
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		idsPerSecond(b, int64(b.N)*1000, start)
	})
}

// serveTCP serves iss over gRPC on a loopback TCP port (not bufconn: the
// kernel's loopback is part of what is measured) and returns a client of
// it; the server, the connection and iss close when tb ends.
func serveTCP(tb testing.TB, iss *issuer.Issuer) idforgev1.IDForgeClient {
	tb.Helper()
	tb.Cleanup(func() { iss.Close() })
	return serveTCPWith(tb, func(g *grpc.Server) { New(iss, Options{Logger: quiet}).Register(g) })
}

// serveTCPWith is serveTCP for whatever register puts on the server; the
// server and the connection close when tb ends.
func serveTCPWith(tb testing.TB, register func(*grpc.Server)) idforgev1.IDForgeClient {
	tb.Helper()
	g := grpc.NewServer()
	register(g)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	go g.Serve(ln)
	conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		conn.Close()
		g.Stop()
	})
	return idforgev1.NewIDForgeClient(conn)
}
