package client

import (
	"errors"
	"math"
	"net"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/idforge/idforge"
	idforgev1 "github.com/idforge/idforge/api/idforge/v1"
)

// Stream hands out batches of increasing, unique IDs in every mode, ends
// when the loop breaks, and refuses a bad batch or key before asking.
func TestStream(t *testing.T) {
	for _, v := range variants() {
		t.Run(v.name, func(t *testing.T) {
			n := newNode(t, newStore(t), 5, 100)
			c := v.mode.new(t, []*node{n}, v.opts...)
			defer c.Close()
			var all []int64
			for ids, err := range c.Stream(testCtx(t), "order", 70) {
				if err != nil {
					t.Fatal(err)
				}
				if len(ids) < 1 || len(ids) > 70 {
					t.Fatalf("a batch of %d IDs, want 1..70", len(ids))
				}
				all = append(all, ids...)
				if len(all) >= 500 {
					break
				}
			}
			for k := 1; k < len(all); k++ {
				if all[k] <= all[k-1] {
					t.Fatalf("ID %d after %d", all[k], all[k-1])
				}
			}
			for _, bad := range []struct {
				key   string
				batch int
				want  error
			}{{"order", 0, idforge.ErrInvalidCount}, {"bad key", 10, idforge.ErrInvalidKey}, {"nokey", 10, idforge.ErrUnknownKey}} {
				for _, err := range c.Stream(testCtx(t), bad.key, bad.batch) {
					if !errors.Is(err, bad.want) {
						t.Fatalf("Stream(%q, %d): %v, want %v", bad.key, bad.batch, err, bad.want)
					}
				}
			}
		})
	}
}

// A node that stops mid-stream is set aside and the stream goes on from
// the next one, with no ID twice.
func TestStreamFailsOver(t *testing.T) {
	for _, m := range remoteModes() {
		t.Run(m.name, func(t *testing.T) {
			st := newStore(t)
			a, b := newNode(t, st, 5, 100), newNode(t, st, 6, 100)
			c := m.new(t, []*node{a, b})
			defer c.Close()
			all := readBatches(t, c, 10, func(batches int) {
				if batches == 3 {
					a.stop()
				}
			})
			checkUnique(t, all)
		})
	}
}

// readBatches reads n batches of 50 IDs of "order" from c's Stream,
// calling after (when not nil) with the count read after each, and
// returns their IDs.
func readBatches(t *testing.T, c Client, n int, after func(batches int)) []int64 {
	t.Helper()
	var all []int64
	batches := 0
	for ids, err := range c.Stream(testCtx(t), "order", 50) {
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, ids...)
		if batches++; after != nil {
			after(batches)
		}
		if batches == n {
			break
		}
	}
	return all
}

// scriptedNode is a gRPC node whose Stream records the request and sends
// msgs, then ends the stream.
type scriptedNode struct {
	idforgev1.UnimplementedIDForgeServer
	msgs []*idforgev1.StreamResponse
	form chan idforgev1.StreamForm
}

func (s *scriptedNode) Stream(req *idforgev1.StreamRequest, st grpc.ServerStreamingServer[idforgev1.StreamResponse]) error {
	s.form <- req.GetForm()
	for _, m := range s.msgs {
		if err := st.Send(m); err != nil {
			return err
		}
	}
	return status.Error(codes.InvalidArgument, scriptEnd)
}

const scriptEnd = "the script ends"

// streamScript runs Stream(batch 5) over gRPC against a node sending
// msgs and returns the batches received before the stream ended, the
// form the client asked for, and the stream's error.
func streamScript(t *testing.T, msgs ...*idforgev1.StreamResponse) ([][]int64, idforgev1.StreamForm, error) {
	t.Helper()
	node := &scriptedNode{msgs: msgs, form: make(chan idforgev1.StreamForm, 1)}
	g := grpc.NewServer()
	idforgev1.RegisterIDForgeServer(g, node)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go g.Serve(ln)
	defer g.Stop()
	c, err := NewGRPC([]string{ln.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var got [][]int64
	var last error
	for ids, err := range c.Stream(testCtx(t), "order", 5) {
		if err != nil {
			last = err
			break
		}
		got = append(got, ids)
	}
	return got, <-node.form, last
}

func ranges(rs ...int64) []*idforgev1.Range {
	var out []*idforgev1.Range
	for k := 0; k+1 < len(rs); k += 2 {
		out = append(out, &idforgev1.Range{Start: rs[k], End: rs[k+1]})
	}
	return out
}

// Over gRPC, Stream asks for ranges and expands them; a node that
// answers ids (one older than the form) is read as well; a message no
// server sends ends the stream with an error, not wrong IDs.
func TestStreamGRPCRanges(t *testing.T) {
	got, form, err := streamScript(t,
		&idforgev1.StreamResponse{Ranges: ranges(100, 103, 200, 202)},
		&idforgev1.StreamResponse{Ranges: ranges(math.MaxInt64-2, math.MaxInt64)},
		&idforgev1.StreamResponse{Ids: []int64{7, 8, 9}}, // a server that ignores form
	)
	if form != idforgev1.StreamForm_STREAM_FORM_RANGES {
		t.Errorf("the client asked for form %v", form)
	}
	want := [][]int64{{100, 101, 102, 200, 201}, {math.MaxInt64 - 2, math.MaxInt64 - 1}, {7, 8, 9}}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("batches %v, want %v", got, want)
	}
	if err == nil || !strings.Contains(err.Error(), scriptEnd) {
		t.Errorf("the stream ended with %v, want the script's end", err)
	}
	for name, bad := range map[string]*idforgev1.StreamResponse{
		"empty":             {},
		"reversed":          {Ranges: ranges(10, 9)},
		"empty range":       {Ranges: ranges(10, 10)},
		"more than a batch": {Ranges: ranges(10, 13, 20, 23)},
		"overflowing":       {Ranges: ranges(math.MinInt64, math.MaxInt64)},
		"ranges and ids":    {Ranges: ranges(10, 12), Ids: []int64{20}},
		"ids past a batch":  {Ids: []int64{1, 2, 3, 4, 5, 6}},
	} {
		got, _, err := streamScript(t, bad)
		if len(got) != 0 || err == nil || strings.Contains(err.Error(), scriptEnd) {
			t.Errorf("%s: batches %v, error %v; want no batch and the message refused", name, got, err)
		}
	}
}

// Over gRPC, Stream goes on from one Stream call of streamCall batches
// to the next, so that a caller who stops loses at most the rest of one
// call: the node issues no more than that past what was read.
func TestStreamGRPCCalls(t *testing.T) {
	defer func(n int) { streamCall = n }(streamCall)
	streamCall = 3
	n := newNode(t, newStore(t), 5, 100)
	c := modes[2].new(t, []*node{n})
	defer c.Close()
	issued := func() int64 {
		for _, k := range n.iss.Active() {
			if k.Name == "order" && k.Segment != nil {
				return k.Segment.Issued
			}
		}
		return 0
	}
	all := readBatches(t, c, 10, nil) // four calls, the last one read for one batch
	for k := 1; k < len(all); k++ {
		if all[k] <= all[k-1] {
			t.Fatalf("ID %d after %d", all[k], all[k-1])
		}
	}
	c.Close() // the last call ends; what its server issued is counted
	n.grpc.GracefulStop()
	if got, most := issued(), int64(len(all)+streamCall*50); got > most {
		t.Fatalf("read %d IDs, the node issued %d: more than one call (%d batches) ahead", len(all), got, streamCall)
	}
}
