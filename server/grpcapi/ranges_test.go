package grpcapi

import (
	"cmp"
	"io"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"google.golang.org/grpc"

	"github.com/idforge/idforge"
	idforgev1 "github.com/idforge/idforge/api/idforge/v1"
	"github.com/idforge/idforge/issuer"
	"github.com/idforge/idforge/store/sqlite"
)

var rangesForm = idforgev1.StreamForm_STREAM_FORM_RANGES

// recvForm reads a stream of form to its end and returns its messages'
// IDs, ranges expanded, and how many ranges came; a message in the other
// form, or empty, or with an empty range, is an error of the test.
func recvForm(t testing.TB, s grpc.ServerStreamingClient[idforgev1.StreamResponse], form idforgev1.StreamForm) (msgs [][]int64, ranges int, err error) {
	t.Helper()
	segs, err := recvRanges(t, s, form)
	for _, m := range segs {
		var ids []int64
		for _, r := range m {
			for v := r.Start; v < r.End; v++ {
				ids = append(ids, v)
			}
		}
		msgs, ranges = append(msgs, ids), ranges+len(m)
	}
	return msgs, ranges, err
}

// recvRanges reads a stream of form to its end and returns its messages'
// IDs as ranges (a message of ids as ranges of one); a message in the
// other form, or empty, or with an empty range, is an error of the test.
func recvRanges(t testing.TB, s grpc.ServerStreamingClient[idforgev1.StreamResponse], form idforgev1.StreamForm) (msgs [][]idforge.Segment, err error) {
	t.Helper()
	for {
		m, err := s.Recv()
		if err == io.EOF {
			return msgs, nil
		}
		if err != nil {
			return msgs, err
		}
		ids, rs := m.GetIds(), m.GetRanges()
		if form == rangesForm && (len(ids) > 0 || len(rs) == 0) || form != rangesForm && (len(ids) == 0 || len(rs) > 0) {
			t.Fatalf("a %v message with %d IDs and ranges %v", form, len(ids), rs)
		}
		segs := issuer.AppendRuns(nil, ids)
		for _, r := range rs {
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

// A request that leaves form out (a client older than the field) gets
// ids, as before.
func TestStreamOldRequestGetsIDs(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	s, err := f.client.Stream(testCtx(t), &idforgev1.StreamRequest{Key: "order", Batch: 100, Count: 250})
	if err != nil {
		t.Fatal(err)
	}
	msgs, _, err := recvForm(t, s, idforgev1.StreamForm_STREAM_FORM_IDS) // fails on a message of ranges
	if err != nil || len(slices.Concat(msgs...)) != 250 {
		t.Fatalf("%d messages, %v; want 250 IDs", len(msgs), err)
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
	conn := serveBufconn(t, g)
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
					msgs, err := recvRanges(t, s, rangesForm)
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
