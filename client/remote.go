package client

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/httpwire"
	"github.com/idforge/idforge/internal/wait"
)

// coolDown is how long a node that failed is passed over, unless every
// node has failed.
const coolDown = 30 * time.Second

// Backoff between rounds once every node failed within one call.
const (
	roundBackoffMin = 20 * time.Millisecond
	roundBackoffMax = 500 * time.Millisecond
)

// conn is one node behind one address, spoken to over one transport.
// Errors that the node answered are *Error.
type conn interface {
	next(ctx context.Context, key string) (int64, error)
	nextN(ctx context.Context, key string, n int) ([]int64, error)
	nextStrings(ctx context.Context, key string, n int) ([]string, error)
	nextSerial(ctx context.Context, name string, n int, params map[string]string) ([]string, error)
	// reserve, end (step commit or void) and audit are a gapless
	// serial's calls (gapless.go).
	reserve(ctx context.Context, name string, params map[string]string) (idforge.Reservation, error)
	end(ctx context.Context, name, step, id, reason string) (idforge.Reservation, error)
	audit(ctx context.Context, name string, from, to int64) (httpwire.Audit, error)
	explain(ctx context.Context, id int64) (Explanation, error)
	explainPacked(ctx context.Context, source string, id int64) (idforge.Unpacked, error)
	key(ctx context.Context, key string) (idforge.Key, error)
	updateKey(ctx context.Context, key string, c idforge.KeyChange) error
	retireKey(ctx context.Context, key string) error
	// stream hands key's IDs, batch at a time, to yield until it returns
	// false (then nil) or the node fails (its error); timeout bounds
	// each request where the transport makes one per batch.
	stream(ctx context.Context, key string, batch int, timeout time.Duration, yield func([]int64) bool) error
	// block fetches up to n IDs of a segment key for the range cache.
	block(ctx context.Context, key string, n int) ([]int64, error)
	close() error
}

// counted returns vals, the answer of the node at addr to a call for n
// values (what: "IDs", "serials"), or an error when it holds a number a
// server may not give: 1 to n is right, fewer than n when a key or a
// serial's width runs out of space within the batch (the server answers
// space_exhausted once none is left).
func counted[T any](addr, what string, n int, vals []T) ([]T, error) {
	if len(vals) < 1 || len(vals) > n {
		return nil, fmt.Errorf("idforge client: %s: asked for %d %s, got %d", addr, n, what, len(vals))
	}
	return vals, nil
}

// endpoint is a node with its health as this client sees it.
type endpoint struct {
	bit       uint64 // 1 << its index
	conn      conn
	downUntil atomic.Int64 // Unix ns; passed over until then; 0 when healthy
}

// remote is a Client over one or more nodes, with fail-over (see the
// package doc).
type remote struct {
	eps     []*endpoint
	timeout time.Duration
	retries int
	closed  atomic.Bool
}

var _ Client = (*remote)(nil)

// newRemote builds a remote client, or a cached one, under opts over one
// conn per address, made as conns (httpConns, grpcConns) makes them; on
// failure the conns built so far are closed.
func newRemote(addrs []string, opts []Option, conns func(options) func(addr string) (conn, error)) (Client, error) {
	o, err := buildOptions(addrs, opts)
	if err != nil {
		return nil, err
	}
	dial := conns(o)
	r := &remote{timeout: o.timeout, retries: o.retries}
	for i, a := range addrs {
		c, err := dial(a)
		if err != nil {
			r.Close()
			return nil, err
		}
		r.eps = append(r.eps, &endpoint{bit: 1 << i, conn: c})
	}
	if o.cacheBatch > 0 {
		return newCached(r, o.cacheBatch, o.refillAt), nil
	}
	return r, nil
}

// pick returns the node to try next: the first node, in order of
// preference, not tried in this call and not failed recently; when all
// untried nodes failed recently, the one that failed longest ago; nil
// when every node was tried.
func (r *remote) pick(tried uint64) *endpoint {
	now := time.Now().UnixNano()
	var best *endpoint
	var bestUntil int64
	for _, ep := range r.eps {
		if tried&ep.bit != 0 {
			continue
		}
		until := ep.downUntil.Load()
		if until <= now {
			return ep
		}
		if best == nil || until < bestUntil {
			best, bestUntil = ep, until
		}
	}
	return best
}

// do runs op against the nodes until one succeeds, an error says retrying
// is pointless, the retries are spent or ctx ends.
func (r *remote) do(ctx context.Context, op func(context.Context, conn) error) error {
	if r.closed.Load() {
		return errClosed
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, r.timeout)
		defer cancel()
	}
	var (
		tried   uint64
		lastErr error
		backoff = roundBackoffMin
	)
	for attempt := 0; ; attempt++ {
		ep := r.pick(tried)
		if ep == nil { // every node failed in this round
			if wait.For(ctx, backoff) != nil {
				break
			}
			backoff = min(2*backoff, roundBackoffMax)
			tried = 0
			ep = r.pick(tried)
		}
		tried |= ep.bit
		err := r.attempt(ctx, ep, op, attempt < r.retries && r.pick(tried) != nil)
		if err == nil {
			if ep.downUntil.Load() != 0 {
				ep.downUntil.Store(0)
			}
			return nil
		}
		lastErr = err
		if ctx.Err() != nil || !retriable(err) {
			break
		}
		ep.downUntil.Store(time.Now().Add(coolDown).UnixNano())
		if attempt >= r.retries || r.closed.Load() {
			break
		}
	}
	switch {
	case lastErr == nil:
		return ctx.Err()
	case ctx.Err() != nil:
		return fmt.Errorf("%w (last error: %w)", ctx.Err(), lastErr)
	case retriable(lastErr) && !errors.Is(lastErr, idforge.ErrUnavailable):
		return fmt.Errorf("%w: no node answered: %w", idforge.ErrUnavailable, lastErr)
	}
	return lastErr
}

// attempt runs op once against ep. While another node is left to try, it
// gets at most half of the time left, so that a node that hangs leaves
// time for the next.
func (r *remote) attempt(ctx context.Context, ep *endpoint, op func(context.Context, conn) error, more bool) error {
	if more {
		if dl, ok := ctx.Deadline(); ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, time.Until(dl)/2)
			defer cancel()
		}
	}
	return op(ctx, ep.conn)
}

// call runs op against the nodes (see do) and returns the value of the
// call that succeeded.
func call[T any](ctx context.Context, r *remote, op func(context.Context, conn) (T, error)) (T, error) {
	var v T
	err := r.do(ctx, func(ctx context.Context, c conn) (err error) {
		v, err = op(ctx, c)
		return err
	})
	return v, err
}

// checkCall refuses a bad key (or serial) name, then n < 1, without
// asking a server.
func checkCall(name string, n int) error {
	if err := idforge.ValidateKeyName(name); err != nil {
		return err
	}
	return checkCount(n)
}

// checkCount refuses n < 1 without asking a server.
func checkCount(n int) error {
	if n < 1 {
		return fmt.Errorf("%w: %d (want at least 1)", idforge.ErrInvalidCount, n)
	}
	return nil
}

func (r *remote) Next(ctx context.Context, key string) (int64, error) {
	if err := idforge.ValidateKeyName(key); err != nil {
		return 0, err
	}
	return call(ctx, r, func(ctx context.Context, c conn) (int64, error) { return c.next(ctx, key) })
}

func (r *remote) NextN(ctx context.Context, key string, n int) ([]int64, error) {
	if err := checkCall(key, n); err != nil {
		return nil, err
	}
	return call(ctx, r, func(ctx context.Context, c conn) ([]int64, error) { return c.nextN(ctx, key, n) })
}

func (r *remote) NextStrings(ctx context.Context, key string, n int) ([]string, error) {
	if err := checkCall(key, n); err != nil {
		return nil, err
	}
	return call(ctx, r, func(ctx context.Context, c conn) ([]string, error) { return c.nextStrings(ctx, key, n) })
}

// NextSerial checks serial names as key names: they follow the same rules.
func (r *remote) NextSerial(ctx context.Context, name string, n int, params map[string]string) ([]string, error) {
	if err := checkCall(name, n); err != nil {
		return nil, err
	}
	return call(ctx, r, func(ctx context.Context, c conn) ([]string, error) { return c.nextSerial(ctx, name, n, params) })
}

func (r *remote) Explain(ctx context.Context, id int64) (Explanation, error) {
	return call(ctx, r, func(ctx context.Context, c conn) (Explanation, error) { return c.explain(ctx, id) })
}

func (r *remote) ExplainPacked(ctx context.Context, source string, id int64) (idforge.Unpacked, error) {
	return call(ctx, r, func(ctx context.Context, c conn) (idforge.Unpacked, error) { return c.explainPacked(ctx, source, id) })
}

// key asks a node for key's strategy and order.
func (r *remote) key(ctx context.Context, key string) (idforge.Key, error) {
	return call(ctx, r, func(ctx context.Context, c conn) (idforge.Key, error) { return c.key(ctx, key) })
}

func (r *remote) Key(key string) idforge.BatchGenerator { return keyGen{r, key} }

func (r *remote) Close() error {
	if r.closed.Swap(true) {
		return nil
	}
	var errs []error
	for _, ep := range r.eps {
		errs = append(errs, ep.conn.close())
	}
	return errors.Join(errs...)
}
