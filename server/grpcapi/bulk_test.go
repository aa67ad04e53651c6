package grpcapi

import (
	"context"
	"math"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"

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

// bulkColdStart is how long the streams run before a benchmark counts:
// the first claim is the stored step (1000) and claims grow at most 4×
// each, so the step reaches what the rate needs (a segment that outlasts
// two of the slowest claims) after a dozen claims at 10⁹ IDs/s, each an
// fsync. Counted in time, not in IDs: the IDs the cold start takes grow
// with the rate.
const bulkColdStart = 500 * time.Millisecond

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

// streamBulk reads messages from bulkStreams streams of form until msgs
// messages arrived in all, checking that each stream's IDs increase, and
// returns how many IDs came and how long it took.
func streamBulk(tb testing.TB, c idforgev1.IDForgeClient, form idforgev1.StreamForm, msgs int64) (int64, time.Duration) {
	return streamMessages(tb, c, form, msgs, time.Time{}, true)
}

// coldStart runs streamBulk's streams for bulkColdStart.
func coldStart(tb testing.TB, c idforgev1.IDForgeClient, form idforgev1.StreamForm) {
	streamMessages(tb, c, form, math.MaxInt64, time.Now().Add(bulkColdStart), true)
}

// streamFloor is streamBulk without the check that IDs increase.
func streamFloor(tb testing.TB, c idforgev1.IDForgeClient, form idforgev1.StreamForm, msgs int64) (int64, time.Duration) {
	return streamMessages(tb, c, form, msgs, time.Time{}, false)
}

// streamMessages reads msgs messages in all, or until the time until when
// it is not zero.
func streamMessages(tb testing.TB, c idforgev1.IDForgeClient, form idforgev1.StreamForm, msgs int64, until time.Time, increasing bool) (int64, time.Duration) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var left, ids atomic.Int64
	left.Store(msgs)
	var wg sync.WaitGroup
	errs := make(chan error, bulkStreams)
	start := time.Now()
	for range bulkStreams {
		wg.Go(func() {
			s, err := c.Stream(ctx, &idforgev1.StreamRequest{Key: "bulk", Batch: bulkBatch, Form: form})
			if err != nil {
				errs <- err
				return
			}
			last := int64(0)
			for left.Add(-1) >= 0 && (until.IsZero() || time.Now().Before(until)) {
				m, err := s.Recv()
				if err != nil {
					errs <- err
					return
				}
				first, end, n := messageSpan(m)
				if n != bulkBatch || increasing && first <= last {
					tb.Errorf("a message of %d IDs from %d after %d", n, first, last)
					return
				}
				last = end - 1
				ids.Add(n)
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

// messageSpan returns a stream message's first ID, its last ID + 1 and
// how many IDs it carries, in either form; a ranges message's ranges
// must increase (checked here, at the cost of a loop over a range or
// two).
func messageSpan(m *idforgev1.StreamResponse) (first, end, n int64) {
	if ids := m.GetIds(); len(ids) > 0 {
		return ids[0], ids[len(ids)-1] + 1, int64(len(ids))
	}
	rs := m.GetRanges()
	if len(rs) == 0 {
		return 0, 0, 0
	}
	for k, r := range rs {
		if r.GetEnd() <= r.GetStart() || k > 0 && r.GetStart() < rs[k-1].GetEnd() {
			return 0, 0, -1
		}
		n += r.GetEnd() - r.GetStart()
	}
	return rs[0].GetStart(), rs[len(rs)-1].GetEnd(), n
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
// over 8 streams, in form ids (IDs) and ranges (Ranges). It reports
// IDs/s, the process's CPU time per ID (server and client: both are in
// this process), and the callers that waited on the store after the
// cold start (bulkColdStart): the aim is 0 at 100 M IDs/s.
//
//	go test -run '^$' -bench StreamSQLite/Ranges -benchtime 50000x -count 5 ./server/grpcapi/
func BenchmarkStreamSQLite(b *testing.B) {
	for _, form := range bulkForms {
		b.Run(formName(form), func(b *testing.B) {
			c, iss := bulkServer(b)
			coldStart(b, c, form)
			coldWaits, _, _ := reportWaits(b, iss)
			b.ResetTimer()
			cpu0 := testsvc.CPUTime()
			n, took := streamBulk(b, c, form, int64(b.N))
			cpu := testsvc.CPUTime() - cpu0
			b.StopTimer()
			waits, loads, step := reportWaits(b, iss)
			reportRate(b, n, took, cpu)
			b.ReportMetric(float64(waits-coldWaits), "waits")
			b.ReportMetric(float64(coldWaits), "cold-waits")
			b.ReportMetric(float64(loads), "claims")
			b.ReportMetric(float64(step), "last-step")
		})
	}
}

// bulkForms are the Stream forms the bulk benchmarks measure.
var bulkForms = []idforgev1.StreamForm{idforgev1.StreamForm_STREAM_FORM_IDS, idforgev1.StreamForm_STREAM_FORM_RANGES}

// formName names a form's sub-benchmark: IDs, Ranges.
func formName(f idforgev1.StreamForm) string {
	if f == idforgev1.StreamForm_STREAM_FORM_RANGES {
		return "Ranges"
	}
	return "IDs"
}

// reportRate reports n IDs in took as ids/s, and the process's CPU time
// per ID (cpu-ns/id), which a loaded machine moves far less than wall
// time.
func reportRate(b *testing.B, n int64, took, cpu time.Duration) {
	b.ReportMetric(float64(n)/took.Seconds(), "ids/s")
	if cpu >= 0 && n > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(n), "cpu-ns/id")
	}
}

// TestStreamBulkSQLite drives 8 streams of batches of 10,000, after the
// cold start, for 20,000 messages (2·10⁸ IDs) in form ids and 200,000
// (2·10⁹ IDs) in form ranges, and reports the rate and the waits on the
// store. It asserts no timing: the figures are for BENCHMARKS.md (waits
// are deterministic only on a fake clock, see segment's
// TestNoWaitsAfterColdStart).
func TestStreamBulkSQLite(t *testing.T) {
	testsvc.Slow(t)
	for _, form := range bulkForms {
		t.Run(formName(form), func(t *testing.T) {
			msgs := int64(20_000)
			if form == idforgev1.StreamForm_STREAM_FORM_RANGES {
				msgs *= 10
			}
			c, iss := bulkServer(t)
			coldStart(t, c, form)
			coldWaits, coldLoads, coldStep := reportWaits(t, iss)
			n, took := streamBulk(t, c, form, msgs)
			waits, loads, step := reportWaits(t, iss)
			t.Logf("cold start: %d waits, %d claims, step %d", coldWaits, coldLoads, coldStep)
			t.Logf("then %d IDs in %v: %.1f M IDs/s; %d waits, %d claims, last step %d",
				n, took.Round(time.Millisecond), float64(n)/took.Seconds()/1e6, waits-coldWaits, loads-coldLoads, step)
		})
	}
}

// floorServer answers Stream with one message of bulkBatch IDs, made
// once, over and over, in the form asked: the transport's cost alone,
// the floor a stream that issues can approach.
type floorServer struct {
	idforgev1.UnimplementedIDForgeServer
}

func (floorServer) Stream(req *idforgev1.StreamRequest, s grpc.ServerStreamingServer[idforgev1.StreamResponse]) error {
	const first = 1_000_000_000 // as long in varints as the IDs issued
	msg := &idforgev1.StreamResponse{}
	if req.GetForm() == idforgev1.StreamForm_STREAM_FORM_RANGES {
		msg.Ranges = []*idforgev1.Range{{Start: first, End: first + int64(req.GetBatch())}}
	} else {
		msg.Ids = make([]int64, req.GetBatch())
		for k := range msg.Ids {
			msg.Ids[k] = first + int64(k)
		}
	}
	for {
		if err := s.Send(msg); err != nil {
			return err
		}
	}
}

// BenchmarkStreamFloor is BenchmarkStreamSQLite against floorServer, for
// the ratio: the same streams, batches, forms and connection, nothing
// issued.
func BenchmarkStreamFloor(b *testing.B) {
	c := serveTCPWith(b, func(g *grpc.Server) { idforgev1.RegisterIDForgeServer(g, floorServer{}) })
	for _, form := range bulkForms {
		b.Run(formName(form), func(b *testing.B) {
			cpu0 := testsvc.CPUTime()
			n, took := streamFloor(b, c, form, int64(b.N))
			reportRate(b, n, took, testsvc.CPUTime()-cpu0)
		})
	}
}
