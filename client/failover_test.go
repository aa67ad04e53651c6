package client

import (
	"context"
	"errors"
	"io"
	"math/bits"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idforge/idforge"
)

// Two nodes share a store; one is killed under load. Callers see no
// error, and no ID twice.
func TestFailover(t *testing.T) {
	for _, v := range variants() {
		if !v.mode.remote {
			continue
		}
		t.Run(v.name, func(t *testing.T) {
			st := newStore(t)
			a, b := newNode(t, st, 1, 1000), newNode(t, st, 2, 1000)
			c := v.mode.new(t, []*node{a, b}, v.opts...)
			defer c.Close()
			ctx := testCtx(t)

			const goroutines = 4
			var (
				stop      atomic.Bool
				killed    atomic.Bool
				afterKill atomic.Int64
				mu        sync.Mutex
				all       []int64
				errs      = make(chan error, goroutines)
				wg        sync.WaitGroup
			)
			for g := range goroutines {
				wg.Go(func() {
					var mine []int64
					for i := 0; !stop.Load(); i++ {
						key := "order"
						if (g+i)%4 == 0 {
							key = "msg"
						}
						id, err := c.Next(ctx, key)
						if err != nil {
							errs <- err
							return
						}
						mine = append(mine, id)
						if killed.Load() {
							afterKill.Add(1)
						}
					}
					mu.Lock()
					all = append(all, mine...)
					mu.Unlock()
				})
			}
			// Kill the first node mid-load, then go on until the callers
			// got 100 more IDs (from the second node).
			time.Sleep(100 * time.Millisecond)
			a.stop()
			killed.Store(true)
			for deadline := time.Now().Add(10 * time.Second); afterKill.Load() < 100 && time.Now().Before(deadline); {
				time.Sleep(10 * time.Millisecond)
			}
			stop.Store(true)
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatalf("a caller saw an error: %v", err)
			}
			checkUnique(t, all)
			if afterKill.Load() < 100 {
				t.Fatalf("only %d IDs after the first node died", afterKill.Load())
			}
			if v.mode.idCalls(b) == 0 {
				t.Fatal("the second node was never asked")
			}
			t.Logf("%d IDs, %d after the kill; calls: first node %d, second %d",
				len(all), afterKill.Load(), v.mode.idCalls(a), v.mode.idCalls(b))
		})
	}
}

// An answer another node would give the same way is not retried there.
func TestNoFailoverOnClientErrors(t *testing.T) {
	for _, m := range remoteModes() {
		t.Run(m.name, func(t *testing.T) {
			st := newStore(t)
			a, b := newNode(t, st, 1, 1000), newNode(t, st, 2, 1000)
			c := m.new(t, []*node{a, b})
			defer c.Close()
			ctx := testCtx(t)
			if _, err := c.Next(ctx, "nope"); !errors.Is(err, idforge.ErrUnknownKey) {
				t.Fatalf("unknown key: %v", err)
			}
			if _, err := c.NextN(ctx, "order", idforge.MaxCount+1); !errors.Is(err, idforge.ErrInvalidCount) {
				t.Fatalf("count too large: %v", err)
			}
			if _, err := c.Next(ctx, "order"); err != nil {
				t.Fatal(err)
			}
			if calls := m.idCalls(a); calls != 3 {
				t.Fatalf("%d calls to the first node, want 3", calls)
			}
			if calls := m.idCalls(b); calls != 0 {
				t.Fatalf("%d calls to the second node, want 0", calls)
			}
		})
	}
}

// NextSerial and NextStrings fail over as Next does: an answer another
// node would give the same way stays with the first node; a node that is
// gone is passed over, and the next one's serials follow on without
// repeats.
func TestFailoverSerialsAndStrings(t *testing.T) {
	for _, v := range variants() {
		if !v.mode.remote {
			continue
		}
		t.Run(v.name, func(t *testing.T) {
			st := newStore(t)
			a, b := newNode(t, st, 1, 1000), newNode(t, st, 2, 1000)
			c := v.mode.new(t, []*node{a, b}, v.opts...)
			defer c.Close()
			ctx := testCtx(t)

			for _, tc := range []struct {
				name string
				err  error
				want error
			}{
				{"unknown serial", func() error { _, err := c.NextSerial(ctx, "nope", 1, nil); return err }(), idforge.ErrUnknownKey},
				{"missing parameter", func() error { _, err := c.NextSerial(ctx, "job", 1, nil); return err }(), idforge.ErrInvalidArgument},
				{"unknown key", func() error { _, err := c.NextStrings(ctx, "nope", 1); return err }(), idforge.ErrUnknownKey},
				{"count too large", func() error { _, err := c.NextStrings(ctx, "trace", idforge.MaxCount+1); return err }(), idforge.ErrInvalidCount},
			} {
				if !errors.Is(tc.err, tc.want) {
					t.Fatalf("%s: %v, want %v", tc.name, tc.err, tc.want)
				}
			}
			if calls := v.mode.idCalls(b); calls != 0 {
				t.Fatalf("%d refused calls retried on the second node, want 0", calls)
			}

			seen := map[string]bool{}
			issue := func(when string) {
				t.Helper()
				bills, err := c.NextSerial(ctx, "bill", 3, nil)
				if err != nil {
					t.Fatalf("NextSerial %s: %v", when, err)
				}
				traces, err := c.NextStrings(ctx, "trace", 2)
				if err != nil {
					t.Fatalf("NextStrings %s: %v", when, err)
				}
				for _, s := range append(bills, traces...) {
					if seen[s] {
						t.Fatalf("%q issued twice", s)
					}
					seen[s] = true
				}
			}
			issue("with both nodes up")
			if calls := v.mode.idCalls(a); calls != 6 {
				t.Fatalf("%d calls to the first node, want 6", calls)
			}
			a.stop()
			issue("after the first node died")
			if calls := v.mode.idCalls(b); calls != 2 {
				t.Fatalf("%d calls to the second node, want 2", calls)
			}
		})
	}
}

// With every node gone a call fails by itself, with ErrUnavailable (its
// context has no deadline to end it).
func TestAllNodesDown(t *testing.T) {
	for _, m := range remoteModes() {
		t.Run(m.name, func(t *testing.T) {
			st := newStore(t)
			a, b := newNode(t, st, 1, 1000), newNode(t, st, 2, 1000)
			c := m.new(t, []*node{a, b})
			defer c.Close()
			a.stop()
			b.stop()
			start := time.Now()
			_, err := c.Next(context.Background(), "order")
			if !errors.Is(err, idforge.ErrUnavailable) {
				t.Fatalf("%v, want ErrUnavailable", err)
			}
			t.Logf("%s: %v", time.Since(start), err)
		})
	}
}

// A node that accepts connections but never answers costs at most half
// of the call's time; the call then succeeds on the next node.
func TestHangingNode(t *testing.T) {
	hang, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		conns []net.Conn
	)
	defer func() {
		hang.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	}()
	go func() {
		for {
			conn, err := hang.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, conn)
			mu.Unlock()
			go io.Copy(io.Discard, conn) // read, never answer
		}
	}()
	b := newNode(t, newStore(t), 2, 1000)
	for name, c := range map[string]func() (Client, error){
		"http": func() (Client, error) {
			return NewHTTP([]string{hang.Addr().String(), b.http.URL}, WithTimeout(time.Second))
		},
		"grpc": func() (Client, error) {
			return NewGRPC([]string{hang.Addr().String(), b.grpcAddr}, WithTimeout(time.Second))
		},
	} {
		t.Run(name, func(t *testing.T) {
			c, err := c()
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			start := time.Now()
			if _, err := c.Next(context.Background(), "order"); err != nil {
				t.Fatalf("after %s: %v (the hanging node is %s)", time.Since(start), err, hang.Addr())
			}
			t.Logf("first call: %s", time.Since(start))
			// The hanging node is set aside (for coolDown): the next call
			// goes straight to the good one.
			r := c.(*remote)
			if ep := r.pick(0); ep != r.eps[1] {
				t.Fatalf("after the first call the client would try node %d first, want the answering one", bits.TrailingZeros64(ep.bit))
			}
			if _, err := c.Next(context.Background(), "order"); err != nil {
				t.Fatalf("second call: %v", err)
			}
		})
	}
}

// pick prefers the earliest node that has not failed recently, and when
// all have, the one that comes back first.
func TestPick(t *testing.T) {
	r := &remote{}
	for i := range 3 {
		r.eps = append(r.eps, &endpoint{bit: 1 << i})
	}
	idx := func(ep *endpoint) int {
		for i, e := range r.eps {
			if e == ep {
				return i
			}
		}
		return -1
	}
	now := time.Now()
	if got := idx(r.pick(0)); got != 0 {
		t.Fatalf("all healthy: %d, want 0", got)
	}
	if got := idx(r.pick(1)); got != 1 {
		t.Fatalf("0 tried: %d, want 1", got)
	}
	r.eps[0].downUntil.Store(now.Add(time.Minute).UnixNano())
	if got := idx(r.pick(0)); got != 1 {
		t.Fatalf("0 down: %d, want 1 (sticky to the next)", got)
	}
	r.eps[1].downUntil.Store(now.Add(30 * time.Second).UnixNano())
	r.eps[2].downUntil.Store(now.Add(2 * time.Minute).UnixNano())
	if got := idx(r.pick(0)); got != 1 {
		t.Fatalf("all down: %d, want 1 (back first)", got)
	}
	if got := r.pick(7); got != nil {
		t.Fatalf("all tried: %d, want nil", idx(got))
	}
	r.eps[0].downUntil.Store(now.Add(-time.Second).UnixNano())
	if got := idx(r.pick(0)); got != 0 {
		t.Fatalf("0's cool-down over: %d, want 0 (fail back)", got)
	}
}
