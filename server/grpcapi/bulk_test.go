package grpcapi

import (
	"context"
	"net"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/idforge/idforge"
	idforgev1 "github.com/idforge/idforge/api/idforge/v1"
	"github.com/idforge/idforge/internal/testsvc"
	"github.com/idforge/idforge/issuer"
	"github.com/idforge/idforge/store/sqlite"
)

// Bulk over gRPC at the defaults a node runs with: SQLite (WAL, a claim
// is an fsync), a key created with the default step of 1000, the
// segment allocator's default settings (no MaxStep), 8 streams of
// batches of 10,000 IDs over one loopback TCP connection.
const (
	bulkStreams = 8
	bulkBatch   = 10_000
)

// bulkServer serves the segment key "bulk" from a fresh SQLite store.
func bulkServer(tb testing.TB) (idforgev1.IDForgeClient, *issuer.Issuer) {
	tb.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(tb.TempDir(), "ids.db"))
	if err != nil {
		tb.Fatal(err)
	}
	if err := st.CreateKey(ctx, issuer.WithDefaults(idforge.Key{Name: "bulk"})); err != nil {
		tb.Fatal(err)
	}
	iss := issuer.New(st, nil, issuer.Settings{Logger: quiet})
	tb.Cleanup(func() { st.Close() })
	return serveTCP(tb, iss), iss
}

// streamBulk reads messages from bulkStreams streams until msgs messages
// arrived in all, checking that each stream's IDs increase, and returns
// how many IDs came and how long it took.
func streamBulk(tb testing.TB, c idforgev1.IDForgeClient, msgs int64) (int64, time.Duration) {
	return streamMessages(tb, c, msgs, true)
}

// streamFloor is streamBulk without the check that IDs increase.
func streamFloor(tb testing.TB, c idforgev1.IDForgeClient, msgs int64) (int64, time.Duration) {
	return streamMessages(tb, c, msgs, false)
}

func streamMessages(tb testing.TB, c idforgev1.IDForgeClient, msgs int64, increasing bool) (int64, time.Duration) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var left, ids atomic.Int64
	left.Store(msgs)
	var wg sync.WaitGroup
	errs := make(chan error, bulkStreams)
	start := time.Now()
	for range bulkStreams {
		wg.Go(func() {
			s, err := c.Stream(ctx, &idforgev1.StreamRequest{Key: "bulk", Batch: bulkBatch})
			if err != nil {
				errs <- err
				return
			}
			last := int64(0)
			for left.Add(-1) >= 0 {
				m, err := s.Recv()
				if err != nil {
					errs <- err
					return
				}
				got := m.GetIds()
				if len(got) != bulkBatch || increasing && got[0] <= last {
					tb.Errorf("a message of %d IDs from %d after %d", len(got), got[0], last)
					return
				}
				last = got[len(got)-1]
				ids.Add(int64(len(got)))
			}
		})
	}
	wg.Wait()
	took := time.Since(start)
	close(errs)
	for err := range errs {
		tb.Fatal(err)
	}
	return ids.Load(), took
}

// reportWaits reports the key's segment figures: callers that waited on
// the store (idforge_segment_waits_total), claims, the last step.
func reportWaits(tb testing.TB, iss *issuer.Issuer) (waits, loads, step int64) {
	ks, err := iss.Key(context.Background(), "bulk")
	if err != nil || ks.Segment == nil {
		tb.Fatalf("key state: %+v, %v", ks, err)
	}
	return ks.Segment.Waits, ks.Segment.Loads, ks.Segment.Step
}

// BenchmarkStreamSQLite: one op is one message of 10,000 IDs, spread
// over 8 streams. It reports IDs/s, and the callers that waited on the
// store after the cold start (the first 200 messages): the aim is 0 at
// 100 M IDs/s.
//
//	go test -run '^$' -bench StreamSQLite -benchtime 20000x -count 5 ./server/grpcapi/
func BenchmarkStreamSQLite(b *testing.B) {
	c, iss := bulkServer(b)
	streamBulk(b, c, 200) // the cold start
	coldWaits, _, _ := reportWaits(b, iss)
	b.ResetTimer()
	n, took := streamBulk(b, c, int64(b.N))
	b.StopTimer()
	waits, loads, step := reportWaits(b, iss)
	b.ReportMetric(float64(n)/took.Seconds(), "ids/s")
	b.ReportMetric(float64(waits-coldWaits), "waits")
	b.ReportMetric(float64(coldWaits), "cold-waits")
	b.ReportMetric(float64(loads), "claims")
	b.ReportMetric(float64(step), "last-step")
}

// TestStreamBulkSQLite drives 8 streams of batches of 10,000 for 20,000
// messages (2·10⁸ IDs) and reports the rate and the waits on the store
// after the cold start. It asserts no timing: the figures are for
// BENCHMARKS.md (waits are deterministic only on a fake clock, see
// segment's TestNoWaitsAfterColdStart).
func TestStreamBulkSQLite(t *testing.T) {
	testsvc.Slow(t)
	c, iss := bulkServer(t)
	streamBulk(t, c, 200)
	coldWaits, coldLoads, coldStep := reportWaits(t, iss)
	n, took := streamBulk(t, c, 20_000)
	waits, loads, step := reportWaits(t, iss)
	t.Logf("cold start: %d waits, %d claims, step %d", coldWaits, coldLoads, coldStep)
	t.Logf("then %d IDs in %v: %.1f M IDs/s; %d waits, %d claims, last step %d",
		n, took.Round(time.Millisecond), float64(n)/took.Seconds()/1e6, waits-coldWaits, loads-coldLoads, step)
}

// floorServer answers Stream with one message of bulkBatch IDs, made
// once, over and over: the transport's cost alone, the floor a stream
// that issues can approach.
type floorServer struct {
	idforgev1.UnimplementedIDForgeServer
}

func (floorServer) Stream(req *idforgev1.StreamRequest, s grpc.ServerStreamingServer[idforgev1.StreamResponse]) error {
	msg := &idforgev1.StreamResponse{Ids: make([]int64, req.GetBatch())}
	for k := range msg.Ids {
		msg.Ids[k] = 1_000_000_000 + int64(k) // as long in varints as the IDs issued
	}
	for {
		if err := s.Send(msg); err != nil {
			return err
		}
	}
}

// BenchmarkStreamFloor is BenchmarkStreamSQLite against floorServer, for
// the ratio: the same streams, batches and connection, nothing issued.
func BenchmarkStreamFloor(b *testing.B) {
	g := grpc.NewServer()
	idforgev1.RegisterIDForgeServer(g, floorServer{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go g.Serve(ln)
	conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		b.Fatal(err)
	}
	defer g.Stop()
	defer conn.Close()
	c := idforgev1.NewIDForgeClient(conn)
	b.ResetTimer()
	n, took := streamFloor(b, c, int64(b.N))
	b.ReportMetric(float64(n)/took.Seconds(), "ids/s")
}
