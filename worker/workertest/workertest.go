// Package workertest is the conformance suite every coordinated worker-ID
// provider (etcd, ZooKeeper, Redis, SQL) runs, so that all of them keep
// the contract of worker.Provider and worker.Lease:
//
//	func TestConformance(t *testing.T) {
//		workertest.Run(t, workertest.Fixture{
//			Namespace: func(t *testing.T) workertest.Namespace {
//				u := freshURL(t)
//				return workertest.Namespace{Open: func(t *testing.T, opts worker.Options) worker.Provider {
//					return open(t, u, opts)
//				}}
//			},
//			TTL:       900 * time.Millisecond,
//			Exhausted: "0..2",
//		})
//	}
//
// The suite checks that concurrent owners get distinct IDs, the lowest
// free ones; that an owner gets its ID back after a release or a crash,
// and that another owner never gets a live one; exhaustion
// (idforge.ErrWorkersExhausted); that the newest time a holder reported
// reaches the next holder; that a node whose clock is beyond max_drift
// from its live peers' is refused at start (Leaf's check), one within it
// not; and, when the coordinator is unreachable, the
// fallback to the local cache (worker.Resume). For leases that expire
// (Fixture.TTL > 0) it checks that an ID moves to another owner only after
// the TTL and only after the old lease ended. Scenarios that need what a
// fixture does not offer (Kill, Holder, Down, …) are skipped.
//
// Each scenario runs as a parallel subtest, in namespaces of its own.
package workertest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/fakeclock"
	"github.com/idforge/idforge/worker"
	"github.com/idforge/idforge/worker/internal/coord"
)

// A Fixture says how the suite gets providers of one kind.
type Fixture struct {
	// Namespace returns a fresh, empty namespace at the coordinator (an
	// etcd prefix, a ZooKeeper name, a Redis prefix, a database), which
	// it removes when t ends. Required.
	Namespace func(t *testing.T) Namespace
	// TTL is how long the coordinator keeps an ID for its holder after the
	// holder's last renewal, as Namespace's providers are configured.
	// Zero means that leases never expire: an ID is bound to its owner for
	// good (Leaf-style), its lease's Done is nil and ValidUntil zero.
	TTL time.Duration
	// Exhausted is text the idforge.ErrWorkersExhausted error must hold
	// when three owners hold IDs 0..2 and a fourth asks.
	Exhausted string
	// Down, when set, returns a provider for opts whose coordinator does
	// not answer (and that gives up quickly), with the name its cache
	// entries are written under (worker.NewCache's provider).
	Down func(t *testing.T, opts worker.Options) (p worker.Provider, cacheName string)
	// Secret, when set, is a password in Down's URL, which no error or
	// log line may show.
	Secret string
	// Outage, when set, returns a fresh namespace whose providers reach
	// the coordinator through a link the suite cuts and restores, with a
	// TTL of a few seconds and a request timeout well under a second, so
	// that a lease outlives reconnecting. Its Kill is required.
	Outage func(t *testing.T) (Namespace, Link)
	// ClockSlack is how much older than the coordinator says a peer's
	// clock record may be (coord.CheckClock's slack): the TTL where the
	// coordinator keeps no clock of the writes (etcd), else 0. The
	// providers' max_drift is the default, coord.DefaultMaxDrift.
	ClockSlack time.Duration
}

// A Namespace is where the providers of one scenario hold their IDs.
type Namespace struct {
	// Open returns a provider of the namespace for opts, closing it when
	// t ends if it has a Close method. A nil opts.Logger may be replaced
	// by a quiet one. Required.
	Open func(t *testing.T, opts worker.Options) worker.Provider
	// Kill, when set, stops p as a crash would: its leases are neither
	// renewed nor released any more.
	Kill func(p worker.Provider)
	// Holder, when set, reads the owner the coordinator has for id, ""
	// when none.
	Holder func(t *testing.T, id int64) string
	// SetHolder, when set, gives id to owner at the coordinator behind
	// its holder's back.
	SetHolder func(t *testing.T, id int64, owner string)
	// Free, when set, frees id at the coordinator behind its holder's
	// back (a key that lapsed, a row released by hand) and, unless last
	// is zero, records last as its newest time.
	Free func(t *testing.T, id int64, last time.Time)
}

// A Link between providers and their coordinator can be cut (every
// connection closed, new ones refused) and restored; e2e.Proxy is one.
type Link interface {
	Cut()
	Restore()
}

// Run runs the conformance suite against f.
func Run(t *testing.T, f Fixture) {
	tests := []struct {
		name string
		fn   func(t *testing.T, f Fixture)
	}{
		{"ConcurrentAcquireDistinct", testConcurrentAcquireDistinct},
		{"SameOwnerGetsIDBack", testSameOwnerGetsIDBack},
		{"LiveIDNotTaken", testLiveIDNotTaken},
		{"Exhausted", testExhausted},
		{"LastTime", testLastTime},
		{"DeadHolderTakeover", testDeadHolderTakeover},
		{"LostLeaseEndsBeforeTakeover", testLostLeaseEndsBeforeTakeover},
		{"HeldByAnother", testHeldByAnother},
		{"RetakeFreedID", testRetakeFreedID},
		{"Unreachable", testUnreachable},
		{"ResumeThenRenew", testResumeThenRenew},
		{"ClockCheck", testClockCheck},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.fn(t, f)
		})
	}
}

// owner is the owner string of node n: a host:port, as every provider
// accepts (ZooKeeper requires one).
func owner(n int) string { return fmt.Sprintf("10.0.0.%d:8080", n) }

// Open opens the provider of a worker URL with worker.Open, with a quiet
// logger unless opts has one, and closes it when t ends if it has a Close
// method.
func Open(t testing.TB, rawURL string, opts worker.Options) worker.Provider {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	p, err := worker.Open(context.Background(), rawURL, opts)
	if err != nil {
		t.Fatalf("worker.Open: %v", err)
	}
	if c, ok := p.(io.Closer); ok {
		t.Cleanup(func() { c.Close() })
	}
	return p
}

// InvalidURLs checks that worker.Open refuses each spec with an error
// wrapping idforge.ErrInvalidArgument that does not show secret.
func InvalidURLs(t testing.TB, secret string, specs ...string) {
	t.Helper()
	for _, spec := range specs {
		p, err := worker.Open(context.Background(), spec, worker.Options{Logger: slog.New(slog.DiscardHandler)})
		if c, ok := p.(io.Closer); ok {
			c.Close()
		}
		if !errors.Is(err, idforge.ErrInvalidArgument) {
			t.Errorf("%s: %v, want ErrInvalidArgument", spec, err)
		}
		if err != nil && strings.Contains(err.Error(), secret) {
			t.Errorf("%s: error shows the password: %v", spec, err)
		}
	}
}

// Acquire acquires an ID in [0, max] from p, failing t on an error, and
// releases it when t ends.
func Acquire(t testing.TB, p worker.Provider, max int64) worker.Lease {
	t.Helper()
	l, err := p.Acquire(context.Background(), max)
	if err != nil {
		t.Fatalf("Acquire(%d): %v", max, err)
	}
	t.Cleanup(func() { release(t, l) })
	return l
}

// release releases l, logging a failure (a lease whose coordinator went
// away cannot record its time).
func release(t testing.TB, l worker.Lease) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := l.Release(ctx); err != nil {
		t.Logf("Release of worker ID %d: %v", l.ID(), err)
	}
}

// WaitFor polls cond until it holds, failing t when it did not within
// the given time.
func WaitFor(t testing.TB, what string, within time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// LogBuffer collects log lines from any goroutine.
type LogBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p; it is safe for concurrent use.
func (b *LogBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns what was written so far.
func (b *LogBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Logger returns a text logger into b, from level debug on.
func (b *LogBuffer) Logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// expiring skips a scenario for leases that never expire.
func expiring(t *testing.T, f Fixture) {
	t.Helper()
	if f.TTL == 0 {
		t.Skip("the provider's leases never expire")
	}
}

// checkLease checks the shape of a lease acquired after start.
func checkLease(t *testing.T, f Fixture, l worker.Lease, start time.Time) {
	t.Helper()
	if f.TTL == 0 {
		if l.Done() != nil || !l.ValidUntil().IsZero() {
			t.Errorf("a lease that never expires has Done %v and ValidUntil %v, want nil and zero", l.Done(), l.ValidUntil())
		}
		return
	}
	if until := l.ValidUntil(); l.Done() == nil || !until.After(start) || until.After(time.Now().Add(f.TTL)) {
		t.Errorf("lease of worker ID %d: Done %v, ValidUntil %v; want a channel, and a validity within the TTL %s",
			l.ID(), l.Done(), until, f.TTL)
	}
}

func testConcurrentAcquireDistinct(t *testing.T, f Fixture) {
	ns := f.Namespace(t)
	type result struct {
		l   worker.Lease
		err error
	}
	results := make(chan result, 5)
	start := time.Now()
	for i := range 5 {
		// Each its own provider: five nodes starting at once.
		p := ns.Open(t, worker.Options{Owner: owner(i)})
		go func() {
			l, err := p.Acquire(context.Background(), 31)
			results <- result{l, err}
		}()
	}
	seen := map[int64]bool{}
	for range 5 {
		r := <-results
		if r.err != nil {
			t.Errorf("Acquire: %v", r.err)
			continue
		}
		t.Cleanup(func() { release(t, r.l) })
		if seen[r.l.ID()] {
			t.Errorf("worker ID %d handed out twice", r.l.ID())
		}
		seen[r.l.ID()] = true
		checkLease(t, f, r.l, start)
	}
	for id := range seen {
		if id < 0 || id > 4 {
			t.Errorf("ID %d, want the lowest free ones 0..4", id)
		}
	}
}

// An owner gets its ID back after releasing it, from the same provider
// and after a restart; a third owner gets neither held ID.
func testSameOwnerGetsIDBack(t *testing.T, f Fixture) {
	ns := f.Namespace(t)
	a := ns.Open(t, worker.Options{Owner: owner(1)})
	la := Acquire(t, a, 31)
	lb := Acquire(t, ns.Open(t, worker.Options{Owner: owner(2)}), 31)
	if la.ID() == lb.ID() {
		t.Fatalf("both owners got %d", la.ID())
	}
	if err := la.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := la.Release(context.Background()); err != nil {
		t.Fatalf("second Release: %v", err)
	}
	if done := la.Done(); done != nil {
		select {
		case <-done:
		default:
			t.Fatal("Done not closed by Release")
		}
	}
	again := Acquire(t, a, 31)
	if again.ID() != la.ID() {
		t.Fatalf("owner a got %d after its release, had %d (b holds %d)", again.ID(), la.ID(), lb.ID())
	}
	if err := again.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	restarted := Acquire(t, ns.Open(t, worker.Options{Owner: owner(1)}), 31)
	if restarted.ID() != la.ID() {
		t.Fatalf("after a restart owner a got %d, want %d", restarted.ID(), la.ID())
	}
	c := Acquire(t, ns.Open(t, worker.Options{Owner: owner(3)}), 31)
	if c.ID() == la.ID() || c.ID() == lb.ID() {
		t.Fatalf("a third owner got %d (a %d, b %d)", c.ID(), la.ID(), lb.ID())
	}
}

// A live lease is never handed to another owner, however long it lives.
func testLiveIDNotTaken(t *testing.T, f Fixture) {
	ns := f.Namespace(t)
	held := Acquire(t, ns.Open(t, worker.Options{Owner: owner(1)}), 0)
	other := ns.Open(t, worker.Options{Owner: owner(2)})
	watch := 3 * f.TTL
	if watch == 0 {
		watch = time.Second
	}
	for end := time.Now().Add(watch); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if l, err := other.Acquire(context.Background(), 0); !errors.Is(err, idforge.ErrWorkersExhausted) {
			if l != nil {
				release(t, l)
			}
			t.Fatalf("another owner's Acquire while the lease lives: %v, %v", l, err)
		}
	}
	if done := held.Done(); done != nil {
		select {
		case <-done:
			t.Fatal("the renewed lease ended")
		default:
		}
	}
}

func testExhausted(t *testing.T, f Fixture) {
	ns := f.Namespace(t)
	seen := map[int64]bool{}
	for i := range 3 { // max 2: IDs 0, 1 and 2
		l := Acquire(t, ns.Open(t, worker.Options{Owner: owner(i)}), 2)
		if seen[l.ID()] {
			t.Fatalf("worker ID %d handed out twice", l.ID())
		}
		seen[l.ID()] = true
	}
	_, err := ns.Open(t, worker.Options{Owner: owner(3)}).Acquire(context.Background(), 2)
	if !errors.Is(err, idforge.ErrWorkersExhausted) || !strings.Contains(err.Error(), f.Exhausted) {
		t.Fatalf("fourth owner: %v, want ErrWorkersExhausted saying %q", err, f.Exhausted)
	}
}

// The newest time a holder reported reaches the next holder of its ID:
// recorded by Release, and, for leases that expire, by a renewal before
// the holder died.
func testLastTime(t *testing.T, f Fixture) {
	t.Run("Release", func(t *testing.T) {
		t.Parallel()
		ns := f.Namespace(t)
		// An ID that never expires goes to its owner only.
		next := func(n int) string {
			if f.TTL == 0 {
				return owner(1)
			}
			return owner(n)
		}
		a := Acquire(t, ns.Open(t, worker.Options{Owner: owner(1)}), 0)
		if !a.LastTime().IsZero() {
			t.Fatalf("fresh ID has LastTime %v", a.LastTime())
		}
		issued := time.UnixMilli(time.Now().Add(300 * time.Millisecond).UnixMilli())
		a.Report(issued.Add(-100 * time.Millisecond))
		a.Report(issued)
		if err := a.Release(context.Background()); err != nil {
			t.Fatal(err)
		}
		// Leaf refuses to start with a clock behind the time recorded.
		time.Sleep(time.Until(issued.Add(time.Millisecond)))
		b := Acquire(t, ns.Open(t, worker.Options{Owner: next(2)}), 0)
		if b.ID() != a.ID() || !b.LastTime().Equal(issued) {
			t.Fatalf("next holder got %d with LastTime %v, want %d and %v", b.ID(), b.LastTime(), a.ID(), issued)
		}
		// An older report never lowers it.
		b.Report(issued.Add(-time.Hour))
		if err := b.Release(context.Background()); err != nil {
			t.Fatal(err)
		}
		c := Acquire(t, ns.Open(t, worker.Options{Owner: next(3)}), 0)
		if c.LastTime().Before(issued) {
			t.Fatalf("LastTime %v after an older report, want %v or later", c.LastTime(), issued)
		}
	})
	t.Run("Renewal", func(t *testing.T) {
		t.Parallel()
		expiring(t, f)
		ns := f.Namespace(t)
		if ns.Kill == nil {
			t.Skip("the fixture cannot kill a holder")
		}
		pa := ns.Open(t, worker.Options{Owner: owner(1)})
		a := Acquire(t, pa, 0)
		issued := time.UnixMilli(time.Now().UnixMilli() + 4321)
		a.Report(issued)
		// ValidUntil moves with every renewal; the second move after the
		// report is a renewal sent after it.
		until, moves := a.ValidUntil(), 0
		WaitFor(t, "two renewals after the report", 3*f.TTL, func() bool {
			if v := a.ValidUntil(); v.After(until) {
				until, moves = v, moves+1
			}
			return moves == 2
		})
		ns.Kill(pa) // the holder dies
		pb := ns.Open(t, worker.Options{Owner: owner(2)})
		var b worker.Lease
		WaitFor(t, "the dead holder's ID is free", 5*f.TTL, func() bool {
			var err error
			b, err = pb.Acquire(context.Background(), 0)
			return err == nil
		})
		t.Cleanup(func() { release(t, b) })
		if !b.LastTime().Equal(issued) {
			t.Fatalf("next holder's LastTime %v, want %v", b.LastTime(), issued)
		}
	})
}

// A holder that died without releasing (its renewals stopped) gets its ID
// back at once when it restarts with the same owner; another owner gets
// it only after the TTL.
func testDeadHolderTakeover(t *testing.T, f Fixture) {
	expiring(t, f)
	ns := f.Namespace(t)
	if ns.Kill == nil {
		t.Skip("the fixture cannot kill a holder")
	}
	holder := worker.Options{Owner: owner(1)}
	dead := ns.Open(t, holder)
	if _, err := dead.Acquire(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
	ns.Kill(dead) // no release, no renewals

	other := ns.Open(t, worker.Options{Owner: owner(2)})
	if _, err := other.Acquire(context.Background(), 0); !errors.Is(err, idforge.ErrWorkersExhausted) {
		t.Fatalf("another owner right after the holder died: %v, want ErrWorkersExhausted", err)
	}

	restarted := ns.Open(t, holder)
	sent := time.Now()
	l, err := restarted.Acquire(context.Background(), 0)
	if err != nil || l.ID() != 0 {
		t.Fatalf("same owner after a restart: %v, %v; want worker 0 at once", l, err)
	}
	ns.Kill(restarted) // killed again

	for {
		l, err := other.Acquire(context.Background(), 0)
		if err == nil {
			t.Cleanup(func() { release(t, l) })
			if at := time.Since(sent); at < f.TTL {
				t.Fatalf("another owner took the ID %s after the holder's last claim, before the TTL %s", at, f.TTL)
			}
			return
		}
		if !errors.Is(err, idforge.ErrWorkersExhausted) {
			t.Fatal(err)
		}
		if time.Since(sent) > 5*f.TTL {
			t.Fatal("the dead holder's ID was not free 5 TTLs later")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A lease whose renewals stop ends (Done), and its ValidUntil has passed
// before the coordinator lets another owner take the ID: fencing.
func testLostLeaseEndsBeforeTakeover(t *testing.T, f Fixture) {
	expiring(t, f)
	ns := f.Namespace(t)
	if ns.Kill == nil {
		t.Skip("the fixture cannot kill a holder")
	}
	p := ns.Open(t, worker.Options{Owner: owner(1)})
	first := Acquire(t, p, 0)
	time.Sleep(f.TTL / 2) // a renewal or two
	ns.Kill(p)
	within := max(5*time.Second, 2*f.TTL)
	select {
	case <-first.Done():
	case <-time.After(within):
		t.Fatalf("lease not lost %s after its renewals stopped", within)
	}
	firstUntil := first.ValidUntil()
	second := ns.Open(t, worker.Options{Owner: owner(2)})
	var l worker.Lease
	var sent time.Time
	WaitFor(t, "second owner acquires the ID", 10*time.Second, func() bool {
		sent = time.Now()
		var err error
		l, err = second.Acquire(context.Background(), 0)
		if err != nil && !errors.Is(err, idforge.ErrWorkersExhausted) {
			t.Fatalf("Acquire: %v", err)
		}
		return err == nil
	})
	t.Cleanup(func() { release(t, l) })
	if l.ID() != first.ID() {
		t.Fatalf("second got %d, want %d", l.ID(), first.ID())
	}
	if !firstUntil.Before(sent) {
		t.Fatalf("first lease valid until %v, second acquired at %v", firstUntil, sent)
	}
}

// When another owner holds the ID at the coordinator, renewals fail and
// the lease ends at once, before the TTL of the last successful renewal
// runs out, with ValidUntil in the past; the other owner's claim is left
// alone.
func testHeldByAnother(t *testing.T, f Fixture) {
	expiring(t, f)
	ns := f.Namespace(t)
	if ns.SetHolder == nil || ns.Holder == nil {
		t.Skip("the fixture cannot set the holder of an ID")
	}
	const intruder = "10.0.0.99:8080"
	var logs LogBuffer
	l := Acquire(t, ns.Open(t, worker.Options{Owner: owner(1), Logger: logs.Logger()}), 0)
	overwritten := time.Now()
	ns.SetHolder(t, l.ID(), intruder)
	select {
	case <-l.Done():
	case <-time.After(f.TTL):
		t.Fatalf("lease still live a TTL after another owner took the ID; log:\n%s", logs.String())
	}
	// The moment the lease ends, issuing must stop: the time left on the
	// last renewal is no permission while another owner holds the ID.
	if until := l.ValidUntil(); until.IsZero() || until.After(time.Now()) {
		t.Fatalf("ValidUntil %v after the lease ended (overwritten at %v); want a time already past", until, overwritten)
	}
	if out := logs.String(); !strings.Contains(out, "held by") || !strings.Contains(out, intruder) {
		t.Errorf("log does not say who holds the ID:\n%s", out)
	}
	if h := ns.Holder(t, l.ID()); h != intruder {
		t.Fatalf("the other owner's claim now names %q", h)
	}
}

// An ID that is free again at the coordinator (a key that lapsed, a row
// released by hand) while its holder still renews is taken back by the
// next renewal, unless a newer time was recorded for it.
func testRetakeFreedID(t *testing.T, f Fixture) {
	expiring(t, f)
	ns := f.Namespace(t)
	if ns.Free == nil || ns.Holder == nil {
		t.Skip("the fixture cannot free an ID")
	}
	me := owner(1)
	l := Acquire(t, ns.Open(t, worker.Options{Owner: me}), 0)
	ns.Free(t, l.ID(), time.Time{})
	WaitFor(t, "the ID is taken back", 2*f.TTL, func() bool { return ns.Holder(t, l.ID()) == me })
	select {
	case <-l.Done():
		t.Fatal("lease ended")
	default:
	}
	ns.Free(t, l.ID(), time.Now().Add(time.Hour))
	select {
	case <-l.Done():
	case <-time.After(2 * f.TTL):
		t.Fatal("lease survived a freed ID with a newer recorded time")
	}
	if h := ns.Holder(t, l.ID()); h != "" {
		t.Fatalf("the ID was taken back over a newer recorded time: holder %q", h)
	}
}

// The coordinator is unreachable at Acquire: a cached ID within its
// validity is resumed with a warning; otherwise idforge.ErrUnavailable
// says why not.
func testUnreachable(t *testing.T, f Fixture) {
	if f.Down == nil {
		t.Skip("the fixture has no unreachable coordinator")
	}
	me := owner(1)
	last := time.UnixMilli(time.Now().Add(-time.Minute).UnixMilli())
	// until is the validity of a usable cache entry: none for IDs that
	// never expire.
	var until time.Time
	if f.TTL > 0 {
		until = time.UnixMilli(time.Now().Add(3 * time.Second).UnixMilli())
	}
	noSecret := func(t *testing.T, what, s string) {
		t.Helper()
		if f.Secret != "" && strings.Contains(s, f.Secret) {
			t.Fatalf("%s shows the password: %s", what, s)
		}
	}
	unavailable := func(t *testing.T, err error, want ...string) {
		t.Helper()
		if !errors.Is(err, idforge.ErrUnavailable) {
			t.Fatalf("Acquire = %v, want ErrUnavailable", err)
		}
		for _, w := range append(want, "unreachable", "no cached worker ID") {
			if !strings.Contains(err.Error(), w) {
				t.Fatalf("Acquire = %v, want it to say %q", err, w)
			}
		}
		noSecret(t, "error", err.Error())
	}

	t.Run("NoDataDirectory", func(t *testing.T) {
		p, _ := f.Down(t, worker.Options{Owner: me})
		_, err := p.Acquire(context.Background(), 31)
		unavailable(t, err, "data directory")
	})
	t.Run("NoCacheFile", func(t *testing.T) {
		p, _ := f.Down(t, worker.Options{Owner: me, DataDir: t.TempDir()})
		_, err := p.Acquire(context.Background(), 31)
		unavailable(t, err, "does not exist")
		if !errors.Is(err, worker.ErrNoCache) {
			t.Fatalf("Acquire = %v, want ErrNoCache", err)
		}
	})
	t.Run("ExpiredCache", func(t *testing.T) {
		dir := t.TempDir()
		p, name := f.Down(t, worker.Options{Owner: me, DataDir: dir})
		if err := worker.NewCache(dir, name, me).Save(5, time.Now().Add(-time.Second), last); err != nil {
			t.Fatal(err)
		}
		_, err := p.Acquire(context.Background(), 31)
		unavailable(t, err, "was valid until")
	})
	t.Run("CachedIDTooLarge", func(t *testing.T) {
		dir := t.TempDir()
		p, name := f.Down(t, worker.Options{Owner: me, DataDir: dir})
		if err := worker.NewCache(dir, name, me).Save(5, until, last); err != nil {
			t.Fatal(err)
		}
		_, err := p.Acquire(context.Background(), 3)
		unavailable(t, err, "does not fit")
	})
	t.Run("UsableCache", func(t *testing.T) {
		dir := t.TempDir()
		var logs LogBuffer
		p, name := f.Down(t, worker.Options{Owner: me, DataDir: dir, Logger: logs.Logger()})
		if err := worker.NewCache(dir, name, me).Save(5, until, last); err != nil {
			t.Fatal(err)
		}
		l, err := p.Acquire(context.Background(), 31)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { release(t, l) })
		if l.ID() != 5 || !l.ValidUntil().Equal(until) || !l.LastTime().Equal(last) {
			t.Fatalf("resumed lease: ID %d, valid until %v, last %v; want 5, %v, %v", l.ID(), l.ValidUntil(), l.LastTime(), until, last)
		}
		want := "resuming the cached worker ID 5"
		if f.TTL > 0 {
			want += ", valid until"
		}
		out := logs.String()
		if !strings.Contains(out, "level=WARN") || !strings.Contains(out, "unreachable") || !strings.Contains(out, want) {
			t.Fatalf("no WARN %q in:\n%s", want, out)
		}
		noSecret(t, "log", out)
	})
}

// A node restarts while its coordinator is unreachable: it resumes its
// cached ID, and once the coordinator answers again a renewal
// re-establishes the claim.
func testResumeThenRenew(t *testing.T, f Fixture) {
	expiring(t, f)
	if f.Outage == nil {
		t.Skip("the fixture cannot cut the coordinator off")
	}
	ns, link := f.Outage(t)
	me := owner(1)
	opts := worker.Options{Owner: me, DataDir: t.TempDir()}
	first := ns.Open(t, opts)
	l, err := first.Acquire(context.Background(), 31)
	if err != nil {
		t.Fatal(err)
	}
	id := l.ID()
	ns.Kill(first) // the node dies without releasing
	link.Cut()

	var logs LogBuffer
	opts.Logger = logs.Logger()
	resumed := Acquire(t, ns.Open(t, opts), 31)
	if resumed.ID() != id || !strings.Contains(logs.String(), "level=WARN") {
		t.Fatalf("resumed ID %d (want %d); log:\n%s", resumed.ID(), id, logs.String())
	}
	cachedUntil := resumed.ValidUntil()
	link.Restore()
	WaitFor(t, "a renewal after the coordinator came back", 10*time.Second, func() bool {
		select {
		case <-resumed.Done():
			t.Fatalf("the resumed lease ended; log:\n%s", logs.String())
		default:
		}
		return resumed.ValidUntil().After(cachedUntil)
	})
	if ns.Holder != nil {
		if h := ns.Holder(t, id); h != me {
			t.Fatalf("the coordinator names %q for worker %d after the renewal", h, id)
		}
	}
}

// Shifted is the system clock moved by an offset.
type Shifted time.Duration

// Now returns the system clock's time plus the offset.
func (s Shifted) Now() time.Time { return time.Now().Add(time.Duration(s)) }

// Sleep sleeps for d.
func (s Shifted) Sleep(d time.Duration) { time.Sleep(d) }

// testClockCheck: with a live peer, a node whose clock is beyond
// max_drift (plus the slack, ahead) from the peer's is refused, gives
// back what it claimed, and one within max_drift starts.
func testClockCheck(t *testing.T, f Fixture) {
	ns := f.Namespace(t)
	peer := Acquire(t, ns.Open(t, worker.Options{Owner: owner(1)}), 7)
	far := coord.DefaultMaxDrift + f.ClockSlack + time.Minute
	for _, off := range []time.Duration{-far, far} {
		p := ns.Open(t, worker.Options{Owner: owner(2), Clock: fakeclock.New(time.Now().Add(off))})
		l, err := p.Acquire(context.Background(), 7)
		if err == nil {
			release(t, l)
		}
		if !errors.Is(err, idforge.ErrClockMovedBackwards) || !strings.Contains(err.Error(), "max_drift") {
			t.Fatalf("clock %s off the peer's: Acquire = %v, want ErrClockMovedBackwards naming max_drift", off, err)
		}
	}
	l := Acquire(t, ns.Open(t, worker.Options{Owner: owner(3), Clock: Shifted(-coord.DefaultMaxDrift / 2)}), 7)
	if l.ID() == peer.ID() || l.ID() > 1 {
		t.Fatalf("node within max_drift got worker ID %d (the peer holds %d); the refused node must have given its ID back", l.ID(), peer.ID())
	}
}
