package client

import (
	"context"
	"fmt"
	"io"
	"iter"
	"math"
	"net/url"
	"strconv"
	"time"

	"github.com/idforge/idforge"
	idforgev1 "github.com/idforge/idforge/api/idforge/v1"
	"github.com/idforge/idforge/internal/httpwire"
)

// checkStream refuses a bad key name or batch < 1 without asking a server.
func checkStream(key string, batch int) error {
	if err := idforge.ValidateKeyName(key); err != nil {
		return err
	}
	if batch < 1 {
		return fmt.Errorf("%w: batch %d (want at least 1)", idforge.ErrInvalidCount, batch)
	}
	return nil
}

// Stream implements Client.Stream for a remote client: one conn's stream
// at a time, failing over as do does for a call, except that a node that
// gave IDs before failing is not counted against the retries.
func (r *remote) Stream(ctx context.Context, key string, batch int) iter.Seq2[[]int64, error] {
	return func(yield func([]int64, error) bool) {
		if err := checkStream(key, batch); err != nil {
			yield(nil, err)
			return
		}
		var (
			tried    uint64
			failures int
			lastErr  error
		)
		for {
			if r.closed.Load() {
				yield(nil, errClosed)
				return
			}
			ep := r.pick(tried)
			if ep == nil {
				yield(nil, fmt.Errorf("%w: no node answered: %w", idforge.ErrUnavailable, lastErr))
				return
			}
			tried |= ep.bit
			stopped, got := false, false
			err := ep.conn.stream(ctx, key, batch, r.timeout, func(ids []int64) bool {
				got = true
				stopped = !yield(ids, nil)
				return !stopped
			})
			if stopped {
				return
			}
			if got {
				ep.downUntil.Store(0)
				tried, failures = ep.bit, 0 // it worked: others may be tried again
			}
			switch {
			case ctx.Err() != nil:
				yield(nil, ctx.Err())
				return
			case !retriable(err) || failures >= r.retries:
				yield(nil, err)
				return
			}
			failures++
			lastErr = err
			ep.downUntil.Store(time.Now().Add(coolDown).UnixNano())
		}
	}
}

// streamCall is how many batches one gRPC Stream call of the client asks
// for (its count) before the next call: a ranges message is a few bytes,
// so an endless stream would let the server run a flow-control window of
// them ahead of the reader, 10⁴ batches and more, all lost (a gap) when
// the caller stops. Calls of this many bound that to streamCall batches
// for a round trip every streamCall batches. A variable for tests.
var streamCall = 256

// stream hands key's IDs to yield, batch at a time, from consecutive
// Stream calls of streamCall batches in the ranges form, until yield
// returns false (nil) or a call fails (its error). Each message's ranges
// are expanded; a server that does not know the form answers ids, which
// are taken as they are. A call is cancelled when stream returns.
func (g *grpcConn) stream(ctx context.Context, key string, batch int, _ time.Duration, yield func([]int64) bool) error {
	for {
		more, err := g.streamCall(ctx, key, batch, yield)
		if !more || err != nil {
			return err
		}
	}
}

// streamCall makes one Stream call of streamCall batches and hands its
// IDs to yield; more reports that the call ended with all of them sent
// and yield wants more.
func (g *grpcConn) streamCall(ctx context.Context, key string, batch int, yield func([]int64) bool) (more bool, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	batch = min(batch, math.MaxInt32)
	st, err := g.api.Stream(ctx, &idforgev1.StreamRequest{Key: key, Batch: int32(batch),
		Count: int64(streamCall) * int64(batch), Form: idforgev1.StreamForm_STREAM_FORM_RANGES})
	if err != nil {
		return false, g.errorOf(err)
	}
	for got := 0; ; got++ {
		msg, err := st.Recv() // a new message each time: its IDs are the caller's
		if err == io.EOF && got > 0 {
			return true, nil
		}
		if err != nil {
			return false, g.errorOf(err)
		}
		var ids []int64
		if rs := msg.GetRanges(); len(rs) > 0 || len(msg.GetIds()) == 0 {
			ids, err = g.expand(batch, rs, len(msg.GetIds()))
		} else {
			ids, err = counted(g.addr, "IDs", batch, msg.GetIds())
		}
		if err != nil {
			return false, err
		}
		if !yield(ids) {
			return false, nil
		}
	}
}

// expand returns the IDs of the ranges rs of a Stream message that
// should hold 1 to n IDs, or an error for a message no server sends:
// an empty or reversed range, more than n IDs or none, ranges and
// extra IDs (the ids field) together.
func (g *grpcConn) expand(n int, rs []*idforgev1.Range, extra int) ([]int64, error) {
	total := int64(0)
	for _, r := range rs {
		c := r.GetEnd() - r.GetStart()
		if r.GetEnd() <= r.GetStart() || c < 1 || c > int64(n)-total { // c < 1: End-Start overflowed
			return nil, fmt.Errorf("idforge client: %s: asked for %d IDs, got ranges %v", g.addr, n, rs)
		}
		total += c
	}
	if total == 0 || extra > 0 {
		return nil, fmt.Errorf("idforge client: %s: asked for %d IDs, got %d in ranges and %d more", g.addr, n, total, extra)
	}
	ids := make([]int64, 0, total)
	for _, r := range rs {
		ids = appendRun(ids, r.GetStart(), r.GetEnd()-r.GetStart())
	}
	return ids, nil
}

// appendRun appends the count consecutive IDs from start to ids, which
// has room for them: the expansion of a range, at memory speed.
func appendRun(ids []int64, start, count int64) []int64 {
	k := len(ids)
	ids = ids[:k+int(count)]
	tail := ids[k:]
	for j := range tail {
		tail[j] = start + int64(j)
	}
	return ids
}

// stream asks for batch IDs at a time with GET /v1/ids/{key}?form=ranges
// (the compact answer: a segment key's batch is one range), each request
// bounded by timeout, and hands them to yield until it returns false.
func (h *httpConn) stream(ctx context.Context, key string, batch int, timeout time.Duration, yield func([]int64) bool) error {
	q := url.Values{"form": {httpwire.FormRanges}}
	path := withCount("/v1/ids/"+url.PathEscape(key), q, batch)
	for {
		ids, err := h.ranges(ctx, path, batch, timeout)
		if err != nil {
			return err
		}
		if !yield(ids) {
			return nil
		}
	}
}

// ranges fetches path, a form=ranges request for up to n IDs, and
// returns the IDs.
// A timeout of 0 leaves ctx as it is.
func (h *httpConn) ranges(ctx context.Context, path string, n int, timeout time.Duration) ([]int64, error) {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	var a httpwire.Ranges
	if err := h.get(ctx, path, &a); err != nil {
		return nil, err
	}
	total := 0
	for _, r := range a.Ranges {
		if r.Count < 1 || r.Count > int64(n-total) {
			return nil, fmt.Errorf("idforge client: %s: asked for %d IDs, got ranges %v", h.addr, n, a.Ranges)
		}
		total += int(r.Count)
	}
	if total == 0 {
		return nil, fmt.Errorf("idforge client: %s: asked for %d IDs, got none", h.addr, n)
	}
	ids := make([]int64, 0, total)
	for _, r := range a.Ranges {
		start, err := strconv.ParseInt(r.Start, 10, 64)
		if err != nil || start > math.MaxInt64-r.Count {
			return nil, fmt.Errorf("idforge client: %s: range start %q is not a decimal int64 with room for %d IDs", h.addr, r.Start, r.Count)
		}
		ids = appendRun(ids, start, r.Count)
	}
	return ids, nil
}

// Stream implements Client.Stream for an embedded client: NextN of batch
// IDs, one batch per iteration.
func (e *embedded) Stream(ctx context.Context, key string, batch int) iter.Seq2[[]int64, error] {
	return func(yield func([]int64, error) bool) {
		if err := checkStream(key, batch); err != nil {
			yield(nil, err)
			return
		}
		for {
			if e.closed.Load() {
				yield(nil, errClosed)
				return
			}
			ids, err := e.iss.NextN(ctx, key, batch)
			if !yield(ids, err) || err != nil {
				return
			}
		}
	}
}

// block fetches up to n IDs of a segment key for the range cache, failing
// over as a call does: NextBatch over gRPC; over HTTP the compact
// form=ranges answer (a block of 10,000 IDs is one range, not 10,000
// strings). Not Stream: a stream runs a flow-control window ahead of its
// reader, which for a cache of small blocks would issue many times what
// the cache holds.
func (r *remote) block(ctx context.Context, key string, n int) ([]int64, error) {
	return call(ctx, r, func(ctx context.Context, c conn) ([]int64, error) { return c.block(ctx, key, n) })
}

func (g *grpcConn) block(ctx context.Context, key string, n int) ([]int64, error) {
	return g.nextN(ctx, key, n)
}

func (h *httpConn) block(ctx context.Context, key string, n int) ([]int64, error) {
	q := url.Values{"form": {httpwire.FormRanges}}
	return h.ranges(ctx, withCount("/v1/ids/"+url.PathEscape(key), q, n), n, 0)
}
