package redisconn_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/e2e"
	"github.com/idforge/idforge/internal/testsvc"
	"github.com/idforge/idforge/sequence"
	_ "github.com/idforge/idforge/sequence/redis"
	"github.com/idforge/idforge/store"
	_ "github.com/idforge/idforge/store/redis"
	_ "github.com/idforge/idforge/store/sqlite"
	"github.com/idforge/idforge/worker"
	_ "github.com/idforge/idforge/worker/redis"
)

// Bounds the fail-over tests hold every part to. They are generous (the
// machine is shared and noisy); the measured figures are logged and
// written in BENCHMARKS.md.
const (
	// callBound: no call may take longer, error or not.
	callBound = 5 * time.Second
	// resumeBound: every part issues again this soon after promotion.
	resumeBound = 20 * time.Second
)

// clients is how many nodes (each with its own client) run each part.
const clients = 3

// event is one call of a load goroutine.
type event struct {
	at   time.Time // when it returned
	took time.Duration
	err  error
}

// partLoad is the record of one part across the run.
type partLoad struct {
	name string

	mu     sync.Mutex
	events []event
	values []int64    // single values: INCR, counts
	segs   [][2]int64 // segments [start, end)
}

func (p *partLoad) record(start time.Time, err error, vals ...int64) {
	now := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.events = append(p.events, event{at: now, took: now.Sub(start), err: err})
	if err == nil {
		p.values = append(p.values, vals...)
	}
}

// check asserts the run's invariants and returns the longest time without
// a success that spans t0 (the primary's death), and the first success
// after promoted.
func (p *partLoad) check(t *testing.T, f failover, stop, killed, promoted time.Time) (gap, resumed time.Duration, repeats, lost int) {
	t.Helper()
	// The control run expects what WAIT prevents: it counts instead.
	fail := t.Errorf
	if f.noWait {
		fail = func(string, ...any) { repeats++ }
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	// No value twice.
	vals := slices.Clone(p.values)
	slices.Sort(vals)
	for i := 1; i < len(vals); i++ {
		if vals[i] == vals[i-1] {
			fail("%s: value %d issued twice", p.name, vals[i])
		}
	}
	segs := slices.Clone(p.segs)
	sort.Slice(segs, func(i, j int) bool { return segs[i][0] < segs[j][0] })
	for i := 1; i < len(segs); i++ {
		if segs[i][0] < segs[i-1][1] {
			fail("%s: segments [%d, %d) and [%d, %d) overlap", p.name, segs[i-1][0], segs[i-1][1], segs[i][0], segs[i][1])
		}
	}
	// Every error a fast, documented 503; count them.
	var ok, failed int
	codes := map[idforge.Code]int{}
	// The outage runs from the last success before the first failure
	// after the kill to the first success after that failure; a part
	// that never failed has its longest pause between successes instead.
	var firstFail time.Time
	for _, e := range p.events {
		if e.err != nil && e.at.After(killed) && !e.at.After(stop) {
			firstFail = e.at
			break
		}
	}
	var lastOK, resumedAt, prevOK time.Time
	var longest time.Duration
	for _, e := range p.events {
		if e.took > callBound {
			t.Errorf("%s: a call took %s (err %v), more than %s", p.name, e.took, e.err, callBound)
		}
		if e.err == nil {
			ok++
			if !prevOK.IsZero() && e.at.After(killed) && e.at.Sub(prevOK) > longest {
				longest = e.at.Sub(prevOK)
			}
			prevOK = e.at
			switch {
			case !firstFail.IsZero() && e.at.Before(firstFail):
				lastOK = e.at
			case !firstFail.IsZero() && resumedAt.IsZero():
				resumedAt = e.at
			case firstFail.IsZero() && resumedAt.IsZero() && e.at.After(killed):
				resumedAt = e.at
			}
			continue
		}
		if e.at.After(stop) && errors.Is(e.err, context.Canceled) {
			continue
		}
		failed++
		if errors.Is(e.err, sequence.ErrCounterLost) {
			lost++
		}
		c := idforge.ErrorCode(e.err)
		codes[c]++
		if c.HTTPStatus() != 503 {
			t.Errorf("%s: error with code %s (HTTP %d), want a 503: %v", p.name, c, c.HTTPStatus(), e.err)
		}
	}
	if firstFail.IsZero() {
		lastOK = resumedAt.Add(-longest)
	}
	if resumedAt.IsZero() && !f.noWait {
		var last error
		for _, e := range p.events {
			if e.err != nil && !errors.Is(e.err, context.Canceled) {
				last = e.err
			}
		}
		t.Errorf("%s: never issued again after the fail-over; last error: %v", p.name, last)
		return 0, 0, repeats, lost
	}
	if d := resumedAt.Sub(promoted); d > resumeBound && !f.noWait {
		t.Errorf("%s: issued again %s after promotion, more than %s", p.name, d, resumeBound)
	}
	t.Logf("%s: %d calls ok, %d failed %v, %d values, %d segments; no success for %s around the kill, first success %s after promotion",
		p.name, ok, failed, codes, len(p.values), len(p.segs), resumedAt.Sub(lastOK).Round(time.Millisecond),
		resumedAt.Sub(promoted).Round(time.Millisecond))
	return resumedAt.Sub(lastOK), resumedAt.Sub(promoted), repeats, lost
}

// leaseLog records which node held which worker ID when.
type leaseLog struct {
	mu   sync.Mutex
	held []leaseSpan
}

type leaseSpan struct {
	node     int
	id       int64
	from, to time.Time // acquire sent, last validity
}

// failover is a topology under test: its URLs and how it fails over.
type failover struct {
	// url returns a URL of the topology for scheme base ("redis" or
	// "redisseg") and query.
	url func(base, query string) string
	// lag makes replication lag (nil: none).
	lag func()
	// kill kills the primary that owns the keys.
	kill func()
	// promoted waits until a replica has been promoted.
	promoted func() bool
	// after runs once a replica has been promoted (nil: nothing).
	after func()
	// noWait is the control run: min_replicas=0, so the fail-over must
	// lose values handed out (seen as repeats or as refusals of a
	// counter that went back).
	noWait bool
}

// runFailover runs every Redis part on the topology, fails it over in the
// middle and checks that no value repeats, that errors are fast 503s and
// that issuing resumes.
func runFailover(t *testing.T, f failover, prefix string) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Fast failures: the client's own bounds, which every call obeys.
	timeouts := "dial_timeout=1s&read_timeout=1s&write_timeout=1s"
	if f.noWait {
		timeouts += "&min_replicas=0"
	}
	incr := &partLoad{name: "INCR source"}
	count := &partLoad{name: "per-period counter"}
	segs := &partLoad{name: "redisseg segments"}
	leases := &leaseLog{}
	leaseEvents := &partLoad{name: "worker leases"}

	db := "sqlite://" + filepath.ToSlash(filepath.Join(t.TempDir(), "idforge.db"))
	var sources []sequence.Source
	var counters []*sequence.Counter
	var stores []idforge.Store
	var providers []worker.Provider
	for i := range clients {
		src, err := sequence.Open(ctx, f.url("redis", "key="+prefix+"incr&"+timeouts))
		if err != nil {
			t.Fatal(err)
		}
		sources = append(sources, src)
		c, err := sequence.OpenCounter(ctx, f.url("redis", "name=order&period=day&prefix="+url.QueryEscape(prefix+"ctr:")+"&"+timeouts))
		if err != nil {
			t.Fatal(err)
		}
		counters = append(counters, c)
		st, err := store.Open(ctx, f.url("redisseg", "prefix="+url.QueryEscape(prefix+"seg:")+"&store="+url.QueryEscape(db)), store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		stores = append(stores, st)
		if i == 0 {
			if err := st.CreateKey(ctx, idforge.Key{Name: "orders", Strategy: idforge.StrategySegment, Step: 10, MaxID: 1}); err != nil {
				t.Fatal(err)
			}
		}
		p, err := worker.Open(ctx, f.url("redis", "prefix=t&ttl=3s&timeout=2s&"+timeouts), worker.Options{})
		if err != nil {
			t.Fatal(err)
		}
		providers = append(providers, p)
	}
	t.Cleanup(func() {
		for i := range clients {
			sources[i].Close()
			counters[i].Close()
			stores[i].Close()
			if c, ok := providers[i].(interface{ Close() error }); ok {
				c.Close()
			}
		}
	})

	var wg sync.WaitGroup
	pause := func() {
		select {
		case <-ctx.Done():
		case <-time.After(2 * time.Millisecond):
		}
	}
	for i := range clients {
		wg.Add(4)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				start := time.Now()
				v, err := sources[i].Next(ctx)
				incr.record(start, err, v)
				pause()
			}
		}()
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				start := time.Now()
				n, at, err := counters[i].Next(ctx, time.Time{})
				// One day's counts: a value is unique by (day, n).
				count.record(start, err, at.UTC().Truncate(24*time.Hour).Unix()/86400<<32|n)
				pause()
			}
		}()
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				start := time.Now()
				s, err := stores[i].ClaimSegment(ctx, "orders", 0)
				segs.record(start, err)
				if err == nil {
					segs.mu.Lock()
					segs.segs = append(segs.segs, [2]int64{s.Start, s.End})
					segs.mu.Unlock()
				}
				pause()
			}
		}()
		go func() {
			defer wg.Done()
			holdLeases(ctx, i, providers[i], leases, leaseEvents)
		}()
	}

	time.Sleep(1500 * time.Millisecond)
	if f.lag != nil {
		f.lag()
		time.Sleep(1500 * time.Millisecond)
	}
	killed := time.Now()
	f.kill()
	deadline := time.Now().Add(60 * time.Second)
	for !f.promoted() {
		if time.Now().After(deadline) {
			cancel()
			wg.Wait()
			t.Fatal("no replica was promoted within 60s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	promoted := time.Now()
	t.Logf("replica promoted %s after the primary was killed", promoted.Sub(killed).Round(time.Millisecond))
	if f.after != nil {
		f.after()
	}
	// Run on until every part issued again, and a little after.
	for time.Since(promoted) < resumeBound+5*time.Second {
		if resumedAll(killed, incr, count, segs, leaseEvents) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(time.Second)
	stop := time.Now()
	cancel()
	wg.Wait()

	lostAll := 0
	for _, p := range []*partLoad{incr, count, segs, leaseEvents} {
		gap, resumed, repeats, lost := p.check(t, f, stop, killed, promoted)
		fmt.Printf("FAILOVER %s %s: unavailable for %s, resumed %s after promotion\n", t.Name(), p.name, gap.Round(time.Millisecond), resumed.Round(time.Millisecond))
		switch {
		case f.noWait:
			t.Logf("%s without WAIT: %d values repeated, %d refusals of a counter that went back", p.name, repeats, lost)
			lostAll += repeats + lost
		case lost > 0:
			t.Errorf("%s: %d times a counter went back although every value waited for a replica", p.name, lost)
		}
	}
	if f.noWait && lostAll == 0 {
		t.Error("without WAIT the fail-over lost no value handed out: the lag did not work, and the test cannot tell WAIT's effect")
	}
	leases.check(t, f.noWait)
}

// resumedAll reports whether every part has succeeded since killed.
func resumedAll(killed time.Time, parts ...*partLoad) bool {
	for _, p := range parts {
		p.mu.Lock()
		ok := false
		for i := len(p.events) - 1; i >= 0 && p.events[i].at.After(killed); i-- {
			if p.events[i].err == nil {
				ok = true
				break
			}
		}
		p.mu.Unlock()
		if !ok {
			return false
		}
	}
	return true
}

// holdLeases keeps node's lease on a worker ID in 0..clients-1, acquiring
// again whenever it ends, and records when it held which ID.
func holdLeases(ctx context.Context, node int, p worker.Provider, log *leaseLog, events *partLoad) {
	for ctx.Err() == nil {
		start := time.Now()
		actx, cancel := context.WithTimeout(ctx, callBound)
		l, err := p.Acquire(actx, clients-1)
		cancel()
		events.record(start, err)
		if err != nil {
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
			continue
		}
		span := leaseSpan{node: node, id: l.ID(), from: start}
		tick := time.NewTicker(20 * time.Millisecond)
	hold:
		for {
			if v := l.ValidUntil(); v.After(span.to) {
				if !span.to.IsZero() {
					// A renewal landed: the coordinator still keeps
					// the ID for this node after the fail-over, which
					// is issuing resumed as much as a new acquire is.
					// (A slot migration moves the lease with its slot,
					// so the lease may never need acquiring again.)
					events.record(time.Now(), nil)
				}
				span.to = v
			}
			select {
			case <-l.Done():
				break hold
			case <-ctx.Done():
				span.to = time.Now() // released: the node stops using it now
				rctx, cancel := context.WithTimeout(context.Background(), time.Second)
				l.Release(rctx)
				cancel()
				break hold
			case <-tick.C:
			}
		}
		tick.Stop()
		if v := l.ValidUntil(); v.After(span.to) && ctx.Err() == nil {
			span.to = v
		}
		log.mu.Lock()
		log.held = append(log.held, span)
		log.mu.Unlock()
	}
}

// check asserts that no worker ID was valid for two nodes at once.
func (l *leaseLog) check(t *testing.T, control bool) {
	t.Helper()
	fail := t.Errorf
	if control {
		fail = t.Logf
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, a := range l.held {
		for _, b := range l.held[i+1:] {
			if a.id == b.id && a.node != b.node && a.from.Before(b.to) && b.from.Before(a.to) {
				fail("worker ID %d held by node %d (%s–%s) and node %d (%s–%s) at once", a.id,
					a.node, a.from.Format(time.StampMilli), a.to.Format(time.StampMilli),
					b.node, b.from.Format(time.StampMilli), b.to.Format(time.StampMilli))
			}
		}
	}
	t.Logf("worker leases: %d spans held", len(l.held))
}

// TestSentinelFailover runs every Redis part through Sentinel while
// replication to both replicas lags behind held proxies, then kills the
// primary (SIGKILL) and lets Sentinel promote a replica.
func TestSentinelFailover(t *testing.T) {
	testsvc.Slow(t)
	sentinelFailover(t, false)
}

// TestSentinelFailoverWithoutWait is the control: the same run with
// min_replicas=0 must lose values already handed out, or the test above
// would prove nothing.
func TestSentinelFailoverWithoutWait(t *testing.T) {
	testsvc.Slow(t)
	sentinelFailover(t, true)
}

func sentinelFailover(t *testing.T, noWait bool) {
	primary := testsvc.StartRedisServer(t)
	// Two replicas, so that the promoted one has a replica of its own to
	// WAIT for; each reaches the primary through a proxy that can hold
	// the replication stream back.
	var replicas []*testsvc.RedisServer
	var links []*e2e.Proxy
	for range 2 {
		r := testsvc.StartRedisServer(t)
		link := e2e.StartProxy(t, primary.Addr())
		r.ReplicaOf(link.Addr())
		replicas, links = append(replicas, r), append(links, link)
	}
	ss := testsvc.StartRedisSentinels(t, "idforge", primary.Addr(), 3)
	ss.WaitReplicas(t, 2)
	runFailover(t, failover{
		url: func(base, query string) string { return ss.URL(base+"+sentinel", query) },
		lag: func() {
			for _, l := range links {
				l.Hold()
			}
		},
		kill: func() {
			primary.Kill()
			for _, l := range links {
				l.Cut() // what the replicas had not received is lost
			}
		},
		promoted: func() bool {
			m := ss.MasterAddr()
			for _, r := range replicas {
				if m == r.Addr() && r.Info("replication", "role") == "master" {
					return true
				}
			}
			return false
		},
		noWait: noWait,
	}, "t:")
}

// TestClusterFailover runs every Redis part on a 3-master Redis Cluster
// with all keys in one slot (hash tag {t}). The slot's replica is frozen
// (SIGSTOP) and the master given more to replicate than the sockets
// between them hold, so that the writes after it stay in the master's
// memory; then the master is killed (SIGKILL), the replica resumed, and it
// takes over without them. The old master then comes back as the new
// master's replica, as an operator would bring it back.
func TestClusterFailover(t *testing.T) {
	testsvc.Slow(t)
	clusterFailover(t, false)
}

// TestClusterFailoverWithoutWait is the control of TestClusterFailover:
// with min_replicas=0 the fail-over must lose values handed out.
func TestClusterFailoverWithoutWait(t *testing.T) {
	testsvc.Slow(t)
	clusterFailover(t, true)
}

func clusterFailover(t *testing.T, noWait bool) {
	c := testsvc.StartRedisCluster(t, 3)
	master, replica := c.MasterOf("t")
	if replica == nil {
		t.Fatal("the master of slot {t} has no replica")
	}
	runFailover(t, failover{
		url: func(base, query string) string { return c.URL(base+"+cluster", query) },
		lag: func() {
			replica.Stop()
			junk := strings.Repeat("x", 1<<20)
			for range 64 { // 64 MiB, more than loopback's socket buffers
				master.Do("SET", "{t}:junk", junk)
			}
		},
		kill: func() {
			master.Kill()
			replica.Continue()
		},
		promoted: func() bool {
			return replica.Info("replication", "role") == "master"
		},
		// The promoted master has no replica left to WAIT for: the old
		// master comes back (empty) and the cluster makes it one.
		after:  master.Restart,
		noWait: noWait,
	}, "{t}:")
}

// TestClusterSlotMigration runs every Redis part on a 3-master Redis
// Cluster with all keys in one slot (hash tag {t}) and moves that slot to
// another master while they run, key by key, as redis-cli --cluster
// reshard does: clients meet ASK redirects while the slot is half moved
// and MOVED once it has, which go-redis follows (the WAIT path, pinned to
// the slot's master, answers a fast 503 and reloads the layout instead).
// No value may repeat; every error is a fast 503.
func TestClusterSlotMigration(t *testing.T) {
	testsvc.Slow(t)
	c := testsvc.StartRedisCluster(t, 3)
	from, _ := c.MasterOf("t")
	to := c.OtherMaster(from)
	runFailover(t, failover{
		url:  func(base, query string) string { return c.URL(base+"+cluster", query) },
		kill: func() { c.MigrateSlot("t", to, 50*time.Millisecond) },
		promoted: func() bool {
			m, _ := c.MasterOf("t")
			return m == to
		},
	}, "{t}:")
	if n := from.Do("CLUSTER", "COUNTKEYSINSLOT", from.Do("CLUSTER", "KEYSLOT", "t")).(int64); n != 0 {
		t.Errorf("%d keys of slot {t} left on its old master", n)
	}
}
