package grpcapi

import (
	"cmp"
	"context"
	"io"
	"net"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"

	"github.com/idforge/idforge"
	idforgev1 "github.com/idforge/idforge/api/idforge/v1"
	"github.com/idforge/idforge/issuer"
	"github.com/idforge/idforge/store/sqlite"
)

var rangesForm = idforgev1.StreamForm_STREAM_FORM_RANGES

// recvRanges reads a ranges stream to its end and returns its messages'
// ranges; a message carrying ids, or no range, or an empty range, is an
// error of the test.
func recvRanges(t testing.TB, s grpc.ServerStreamingClient[idforgev1.StreamResponse]) (msgs [][]idforge.Segment, err error) {
	t.Helper()
	for {
		m, err := s.Recv()
		if err == io.EOF {
			return msgs, nil
		}
		if err != nil {
			return msgs, err
		}
		if len(m.GetIds()) > 0 || len(m.GetRanges()) == 0 {
			t.Fatalf("a ranges message with %d IDs and ranges %v", len(m.GetIds()), m.GetRanges())
		}
		var segs []idforge.Segment
		for _, r := range m.GetRanges() {
			if r.GetEnd() <= r.GetStart() {
				t.Fatalf("empty or reversed range %v", r)
			}
			segs = append(segs, idforge.Segment{Start: r.GetStart(), End: r.GetEnd()})
		}
		msgs = append(msgs, segs)
	}
}

// increasing fails unless segs, in order, are strictly increasing: each
// starts at or after the end of the one before.
func increasing(t testing.TB, what string, segs []idforge.Segment) {
	t.Helper()
	for k := 1; k < len(segs); k++ {
		if segs[k].Start < segs[k-1].End {
			t.Fatalf("%s: range %v follows %v: not strictly increasing", what, segs[k], segs[k-1])
		}
	}
}

// A ranges stream carries the same IDs as an ids stream would, as
// ranges: the same message sizes, strictly increasing for a segment key,
// folded runs for a snowflake key.
func TestStreamRanges(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	ctx := testCtx(t)
	for _, tc := range []struct {
		key          string
		batch, count int64
		sizes        []int64
	}{
		{"order", 1000, 2500, []int64{1000, 1000, 500}},
		{"order", 0, 1000, []int64{1000}},
		{"order", 7, 20, []int64{7, 7, 6}},
		{"order", idforge.MaxCount, 25_000, []int64{10_000, 10_000, 5000}},
		{"msg", 3000, 5000, []int64{3000, 2000}},
	} {
		s, err := f.client.Stream(ctx, &idforgev1.StreamRequest{Key: tc.key, Batch: int32(tc.batch), Count: tc.count, Form: rangesForm})
		if err != nil {
			t.Fatal(err)
		}
		msgs, err := recvRanges(t, s)
		if err != nil {
			t.Fatalf("%s batch %d count %d: %v", tc.key, tc.batch, tc.count, err)
		}
		var sizes []int64
		var all []idforge.Segment
		for _, m := range msgs {
			n := int64(0)
			for _, r := range m {
				n += r.Len()
			}
			sizes = append(sizes, n)
			all = append(all, m...)
		}
		if !slices.Equal(sizes, tc.sizes) {
			t.Errorf("%s batch %d count %d: message sizes %v, want %v", tc.key, tc.batch, tc.count, sizes, tc.sizes)
		}
		increasing(t, tc.key, all)
		// The segment key's segments are of 100 IDs (MaxStep): a message
		// of 1000 spans about ten, each one range.
		if tc.key == "order" && len(all) > 2*len(msgs)+int(tc.count)/100 {
			t.Errorf("%s: %d ranges for %d IDs: ranges are not folded", tc.key, len(all), tc.count)
		}
	}
}

// A request that leaves form out (a client older than the field) gets
// ids, as before.
func TestStreamOldRequestGetsIDs(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	s, err := f.client.Stream(testCtx(t), &idforgev1.StreamRequest{Key: "order", Batch: 100, Count: 250})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for {
		m, err := s.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(m.GetRanges()) > 0 {
			t.Fatalf("an old-style request got ranges %v", m.GetRanges())
		}
		n += len(m.GetIds())
	}
	if n != 250 {
		t.Fatalf("%d IDs, want 250", n)
	}
}

// rangesNode is a node over a SQLite store: an issuer served over
// bufconn, closed by stop.
type rangesNode struct {
	client idforgev1.IDForgeClient
	stop   func()
}

func startRangesNode(t testing.TB, st idforge.Store) rangesNode {
	t.Helper()
	iss := issuer.New(st, nil, issuer.Settings{Logger: quiet})
	g := grpc.NewServer()
	New(iss, Options{Logger: quiet}).Register(g)
	ln := bufconn.Listen(1 << 20)
	go g.Serve(ln)
	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return ln.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop := func() { once.Do(func() { conn.Close(); g.Stop(); iss.Close() }) }
	t.Cleanup(stop)
	return rangesNode{client: idforgev1.NewIDForgeClient(conn), stop: stop}
}

// Ranges streams never hand out a value twice: concurrent streams on two
// nodes claiming from one SQLite store (the default step, so segments
// are claimed and the step grows as they go), then again on a node
// restarted over the reopened store. Each stream's ranges increase; all
// of them together are disjoint.
func TestStreamRangesDisjoint(t *testing.T) {
	ctx := testCtx(t)
	path := filepath.Join(t.TempDir(), "ids.db")
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CreateKey(ctx, issuer.WithDefaults(idforge.Key{Name: "bulk"})); err != nil {
		t.Fatal(err)
	}
	const streams, count = 4, 60_000 // per node; 6 messages of 10,000 each
	var (
		mu  sync.Mutex
		all []idforge.Segment
	)
	run := func(nodes ...rangesNode) {
		var wg sync.WaitGroup
		for _, n := range nodes {
			for range streams {
				wg.Go(func() {
					s, err := n.client.Stream(ctx, &idforgev1.StreamRequest{Key: "bulk", Batch: idforge.MaxCount, Count: count, Form: rangesForm})
					if err != nil {
						t.Error(err)
						return
					}
					msgs, err := recvRanges(t, s)
					if err != nil {
						t.Error(err)
						return
					}
					got := slices.Concat(msgs...)
					increasing(t, "one stream", got)
					total := int64(0)
					for _, r := range got {
						total += r.Len()
					}
					if total != count {
						t.Errorf("a stream of %d IDs gave %d", count, total)
					}
					mu.Lock()
					all = append(all, got...)
					mu.Unlock()
				})
			}
		}
		wg.Wait()
	}
	a, b := startRangesNode(t, st), startRangesNode(t, st)
	run(a, b)
	a.stop()
	b.stop()
	st.Close()
	if st, err = sqlite.Open(ctx, path); err != nil { // the restart
		t.Fatal(err)
	}
	defer st.Close()
	run(startRangesNode(t, st))
	if t.Failed() {
		return
	}
	slices.SortFunc(all, func(x, y idforge.Segment) int { return cmp.Compare(x.Start, y.Start) })
	increasing(t, "every stream of every node", all)
}
