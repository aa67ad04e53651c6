package redis_test

// The failure matrix of the package documentation, against real servers:
// throwaway redis-server processes (killed and restarted), MariaDB behind
// a TCP proxy that can cut it off, and several Stores (nodes) claiming at
// once. Every test checks that no value is handed out twice and that each
// claimer's segments increase.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	mysqldrv "github.com/go-sql-driver/mysql"
	goredis "github.com/redis/go-redis/v9"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/e2e"
	"github.com/idforge/idforge/internal/testsvc"
	"github.com/idforge/idforge/store"
	"github.com/idforge/idforge/store/redis"
)

// TestMain silences the drivers' own loggers, which report every
// connection the tests cut.
func TestMain(m *testing.M) {
	mysqldrv.SetLogger(log.New(io.Discard, "", 0))
	goredis.SetLogger(discard{})
	os.Exit(m.Run())
}

type discard struct{}

func (discard) Printf(context.Context, string, ...any) {}

const (
	testKey    = "orders"
	testStep   = 10
	retryAfter = 50 * time.Millisecond
)

// cluster is a key in MariaDB, a redis-server of the test's own, and the
// nodes sharing them.
type cluster struct {
	t      *testing.T
	redis  *testsvc.RedisServer
	db     *e2e.Proxy    // every node reaches the database through it
	admin  idforge.Store // the database directly, for looking at max_id
	dbURL  string        // through db
	nodes  []*redis.Store
	rproxy []*e2e.Proxy // per node, in front of Redis, when asked for
}

type clusterOpts struct {
	nodes       int
	factor      int64
	redisProxy  bool // give each node a proxy of its own in front of Redis
	redisSrv    *testsvc.RedisServer
	fastDBFails bool
}

func newCluster(t *testing.T, o clusterOpts) *cluster {
	t.Helper()
	ctx := context.Background()
	direct := testsvc.MySQL(t)
	admin, err := store.Open(ctx, direct, store.Options{Logger: quiet, ForMigrate: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() })
	if err := admin.(idforge.Migrator).Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if err := admin.CreateKey(ctx, idforge.Key{Name: testKey, Strategy: idforge.StrategySegment, Step: testStep, MaxID: 1}); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(direct)
	if err != nil {
		t.Fatal(err)
	}
	c := &cluster{t: t, redis: o.redisSrv, admin: admin}
	if c.redis == nil {
		c.redis = testsvc.StartRedisServer(t)
	}
	c.db = e2e.StartProxy(t, u.Host)
	u.Host = c.db.Addr()
	u.RawQuery = "timeout=1s&retries=1"
	c.dbURL = u.String()
	for i := range o.nodes {
		c.nodes = append(c.nodes, c.newNode(i, o))
	}
	return c
}

// newNode opens one node: its own Redis client and database connections.
func (c *cluster) newNode(i int, o clusterOpts) *redis.Store {
	t := c.t
	t.Helper()
	addr := c.redis.Addr()
	if o.redisProxy {
		p := e2e.StartProxy(t, addr)
		c.rproxy = append(c.rproxy, p)
		addr = p.Addr()
	}
	rdb := goredis.NewClient(&goredis.Options{
		Addr:                  addr,
		DialTimeout:           200 * time.Millisecond,
		ReadTimeout:           200 * time.Millisecond,
		WriteTimeout:          200 * time.Millisecond,
		MaxRetries:            -1,
		DialerRetries:         1,
		ContextTimeoutEnabled: true,
		PoolSize:              4,
	})
	db, err := store.Open(context.Background(), c.dbURL, store.Options{Logger: quiet})
	if err != nil {
		rdb.Close()
		t.Fatal(err)
	}
	st, err := redis.New(redis.Config{
		Redis:      rdb,
		DB:         db,
		Prefix:     "t:",
		Factor:     o.factor,
		RetryAfter: retryAfter,
		Logger:     slog.New(slog.NewTextHandler(tlogWriter{t, i}, &slog.HandlerOptions{Level: slog.LevelInfo})),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// tlogWriter sends a node's log lines to the test log.
type tlogWriter struct {
	t    *testing.T
	node int
}

func (w tlogWriter) Write(p []byte) (int, error) {
	w.t.Logf("node %d: %s", w.node, strings.TrimSpace(string(p)))
	return len(p), nil
}

// sqlMax returns the key's max_id in the database.
func (c *cluster) sqlMax() int64 {
	c.t.Helper()
	k, err := c.admin.Key(context.Background(), testKey)
	if err != nil {
		c.t.Fatal(err)
	}
	return k.MaxID
}

// settledMax returns max_id once Redis, just killed, is known dead to
// every node and claims that were under way have ended: one whose block
// Redis could no longer take serves itself from the block and hands the
// rest back, lowering max_id again. From then on every claim goes to the
// database (whose claims start at max_id) or to a Redis that starts
// again from it.
func (c *cluster) settledMax() int64 {
	c.t.Helper()
	waitFor(c.t, 30*time.Second, "every node knows Redis is down", func() bool {
		return !c.stats().RedisUp
	})
	time.Sleep(300 * time.Millisecond) // > the client's timeouts
	return c.sqlMax()
}

// claim is one claim's outcome.
type claim struct {
	seg   idforge.Segment
	err   error
	phase string
	took  time.Duration
}

// load keeps claimers running on the nodes, one goroutine per claimer,
// recording every outcome under the current phase.
type load struct {
	phase  atomic.Pointer[string]
	stop   chan struct{}
	wg     sync.WaitGroup
	mu     sync.Mutex
	claims [][]claim // per claimer, in order
}

// start runs perNode claimers on every node.
func (c *cluster) start(perNode int) *load {
	l := &load{stop: make(chan struct{})}
	l.setPhase("start")
	for _, n := range c.nodes {
		for range perNode {
			idx := len(l.claims)
			l.claims = append(l.claims, nil)
			l.wg.Go(func() { l.run(n, idx) })
		}
	}
	c.t.Cleanup(l.halt)
	return l
}

func (l *load) setPhase(p string) { l.phase.Store(&p) }

func (l *load) run(n *redis.Store, idx int) {
	for {
		select {
		case <-l.stop:
			return
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		phase := *l.phase.Load()
		t0 := time.Now()
		seg, err := n.ClaimSegment(ctx, testKey, 0)
		cancel()
		l.mu.Lock()
		l.claims[idx] = append(l.claims[idx], claim{seg: seg, err: err, phase: phase, took: time.Since(t0)})
		l.mu.Unlock()
		if err != nil {
			time.Sleep(5 * time.Millisecond)
		} else {
			time.Sleep(time.Millisecond)
		}
	}
}

// halt stops the claimers and waits for them; it is idempotent.
func (l *load) halt() {
	select {
	case <-l.stop:
	default:
		close(l.stop)
	}
	l.wg.Wait()
}

// in returns the outcomes of phase.
func (l *load) in(phase string) (ok []idforge.Segment, errs []claim) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, cs := range l.claims {
		for _, c := range cs {
			if c.phase != phase {
				continue
			}
			if c.err != nil {
				errs = append(errs, c)
			} else {
				ok = append(ok, c.seg)
			}
		}
	}
	return ok, errs
}

// check stops the load and checks every segment: no value twice, each
// claimer's segments increasing. It returns the segments.
func (l *load) check(t *testing.T) []idforge.Segment {
	t.Helper()
	l.halt()
	var all []idforge.Segment
	for i, cs := range l.claims {
		var last idforge.Segment
		for _, c := range cs {
			if c.err != nil {
				continue
			}
			if c.seg.Len() != testStep {
				t.Errorf("claimer %d: segment [%d, %d) has %d IDs, want %d", i, c.seg.Start, c.seg.End, c.seg.Len(), testStep)
			}
			if c.seg.Start < last.End {
				t.Errorf("claimer %d: segment [%d, %d) (%s) after [%d, %d): not increasing", i, c.seg.Start, c.seg.End, c.phase, last.Start, last.End)
			}
			last = c.seg
			all = append(all, c.seg)
		}
	}
	slices.SortFunc(all, func(a, b idforge.Segment) int { return cmp.Compare(a.Start, b.Start) })
	for i := 1; i < len(all); i++ {
		if all[i].Start < all[i-1].End {
			t.Fatalf("segments [%d, %d) and [%d, %d) overlap: a value was handed out twice",
				all[i-1].Start, all[i-1].End, all[i].Start, all[i].End)
		}
	}
	return all
}

// noErrors fails the test if phase had failed claims.
func (l *load) noErrors(t *testing.T, phase string) []idforge.Segment {
	t.Helper()
	// A phase's sleep is a minimum: on a loaded machine its first claim
	// (through a proxy to the database, say) may land later. Wait for one
	// rather than call the phase a failure.
	ok, errs := l.in(phase)
	for deadline := time.Now().Add(10 * time.Second); len(ok) == 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		ok, errs = l.in(phase)
	}
	for i, c := range errs {
		if i == 5 {
			t.Errorf("… and %d more", len(errs)-5)
			break
		}
		t.Errorf("%s: claim failed: %v", phase, c.err)
	}
	if len(ok) == 0 {
		t.Errorf("%s: no claim succeeded", phase)
	}
	return ok
}

// stats sums the nodes' counters.
func (c *cluster) stats() (s redis.Stats) {
	s.RedisUp = true
	for _, n := range c.nodes {
		x := n.Stats()
		s.RedisClaims += x.RedisClaims
		s.DirectClaims += x.DirectClaims
		s.Reservations += x.Reservations
		s.Resets += x.Resets
		s.RedisUp = s.RedisUp && x.RedisUp
	}
	return s
}

// hang is how long a failing claim may take before the test calls it
// hung: far above the client's timeouts, so a busy machine stays under it.
const hang = 30 * time.Second

// waitFor polls cond until it holds, or fails the test after d.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// redisRecovered waits until every node has handed out from Redis again.
func (c *cluster) redisRecovered(d time.Duration) {
	c.t.Helper()
	base := make([]int64, len(c.nodes))
	for i, n := range c.nodes {
		base[i] = n.Stats().RedisClaims
	}
	waitFor(c.t, d, "every node claims through Redis again", func() bool {
		for i, n := range c.nodes {
			if s := n.Stats(); !s.RedisUp || s.RedisClaims < base[i]+3 {
				return false
			}
		}
		return true
	})
}

// aboveAll fails the test if a segment of phase starts below floor.
func (l *load) aboveAll(t *testing.T, phase string, floor int64) {
	t.Helper()
	ok, _ := l.in(phase)
	for _, s := range ok {
		if s.Start < floor {
			t.Errorf("%s: segment [%d, %d) starts below %d, the database's max_id when the phase began", phase, s.Start, s.End, floor)
		}
	}
}

// TestRedisDown is case ①: Redis dies under load. Claims go on through the
// database without an error; when Redis is back (empty) its hash starts
// again from the database's max_id and claims go through it again.
func TestRedisDown(t *testing.T) {
	c := newCluster(t, clusterOpts{nodes: 3, factor: 20})
	l := c.start(1)
	time.Sleep(150 * time.Millisecond)
	l.noErrors(t, "start")
	if s := c.stats(); s.RedisClaims == 0 || s.DirectClaims != 0 {
		t.Fatalf("before the outage: %+v, want claims from Redis only", s)
	}

	l.setPhase("redis down")
	c.redis.Kill()
	before := c.stats()
	waitFor(t, 30*time.Second, "direct claims with Redis marked down", func() bool {
		s := c.stats()
		return s.DirectClaims > before.DirectClaims && !s.RedisUp
	})
	l.noErrors(t, "redis down")

	// Everything claimed from here on, through the database or the
	// restarted Redis, lies above the database's max_id now.
	floor := c.settledMax()
	l.setPhase("redis back")
	resets := c.stats().Resets
	c.redis.Restart()
	c.redisRecovered(30 * time.Second)
	l.noErrors(t, "redis back")
	l.aboveAll(t, "redis back", floor)
	if s := c.stats(); s.Resets <= resets {
		t.Errorf("after the restart: %+v, want the hash started afresh", s)
	}
	l.check(t)
}

// TestRedisRestartsEmpty is case ②: Redis restarts without its data (no
// persistence) while claims run; nodes may not even notice an outage. The
// hash starts again from the database's max_id.
func TestRedisRestartsEmpty(t *testing.T) {
	c := newCluster(t, clusterOpts{nodes: 3, factor: 20})
	l := c.start(1)
	time.Sleep(100 * time.Millisecond)
	for i := range 3 {
		c.redis.Kill()
		floor := c.settledMax()
		phase := fmt.Sprintf("restart %d", i)
		l.setPhase(phase)
		c.redis.Restart()
		c.redisRecovered(30 * time.Second)
		l.noErrors(t, phase)
		l.aboveAll(t, phase, floor)
	}
	l.check(t)
}

// TestRestartStartsAtMax checks the restart rule exactly, with one node
// and nothing else going on: after Redis lost its data, the next segment
// starts at the database's max_id (the Redis-and-MongoDB design's
// "cur = max + 1", for a max_id that is the first value not yet
// claimed).
func TestRestartStartsAtMax(t *testing.T) {
	c := newCluster(t, clusterOpts{nodes: 1, factor: 5})
	n := c.nodes[0]
	ctx := context.Background()
	for range 12 {
		if _, err := n.ClaimSegment(ctx, testKey, 0); err != nil {
			t.Fatal(err)
		}
	}
	last := int64(-1)
	waitFor(t, 30*time.Second, "background refills are over", func() bool {
		time.Sleep(100 * time.Millisecond)
		r := n.Stats().Reservations
		defer func() { last = r }()
		return r == last
	})
	max := c.sqlMax()
	c.redis.Restart()
	seg, err := n.ClaimSegment(ctx, testKey, 0)
	if err != nil {
		t.Fatal(err)
	}
	if seg.Start != max {
		t.Fatalf("first segment after the restart = [%d, %d), want it to start at max_id %d", seg.Start, seg.End, max)
	}
	if s := n.Stats(); s.DirectClaims != 0 {
		t.Fatalf("Stats = %+v: a claim went around Redis", s)
	}
}

// TestRedisStaleData is case ② with persistence: Redis comes back with an
// old copy of the hash (restored from an RDB file taken earlier, whose cur
// is behind values handed out since). The copy was written by another
// server instance, so it is never used: the hash starts again from the
// database.
func TestRedisStaleData(t *testing.T) {
	c := newCluster(t, clusterOpts{nodes: 3, factor: 20})
	rdb := goredis.NewClient(&goredis.Options{Addr: c.redis.Addr()})
	defer rdb.Close()
	ctx := context.Background()
	l := c.start(1)
	time.Sleep(100 * time.Millisecond)
	snapshot, err := rdb.Dump(ctx, "t:"+testKey).Result()
	if err != nil {
		t.Fatalf("DUMP: %v", err)
	}
	time.Sleep(150 * time.Millisecond) // cur moves on past the snapshot

	c.redis.Kill()
	floor := c.settledMax()
	l.setPhase("restored")
	resets := c.stats().Resets
	c.redis.Restart()
	if err := rdb.RestoreReplace(ctx, "t:"+testKey, 0, snapshot).Err(); err != nil {
		t.Fatalf("RESTORE: %v", err)
	}
	c.redisRecovered(30 * time.Second)
	l.noErrors(t, "restored")
	l.aboveAll(t, "restored", floor)
	if s := c.stats(); s.Resets <= resets {
		t.Errorf("after the restore: %+v, want the hash started afresh", s)
	}
	l.check(t)
}

// TestRedisPartition is case ① for one node only: it cannot reach Redis
// (which keeps its data and serves the others) and claims from the
// database meanwhile. Back in touch, it finds the hash valid but behind
// its own direct claims, and starts it again above them.
func TestRedisPartition(t *testing.T) {
	c := newCluster(t, clusterOpts{nodes: 3, factor: 20, redisProxy: true})
	l := c.start(1)
	time.Sleep(100 * time.Millisecond)
	l.noErrors(t, "start")

	l.setPhase("partition")
	c.rproxy[0].Cut()
	cut := c.nodes[0].Stats()
	others := c.nodes[1].Stats().RedisClaims
	time.Sleep(300 * time.Millisecond)
	l.noErrors(t, "partition")
	if s := c.nodes[0].Stats(); s.DirectClaims <= cut.DirectClaims || s.RedisUp {
		t.Fatalf("cut-off node: %+v, want direct claims", s)
	}
	if s := c.nodes[1].Stats(); s.RedisClaims <= others {
		t.Fatalf("other node: %+v, want it to go on claiming through Redis", s)
	}

	l.setPhase("healed")
	c.rproxy[0].Restore()
	c.redisRecovered(30 * time.Second)
	l.noErrors(t, "healed")
	l.check(t) // includes: the cut-off node's segments kept increasing
}

// TestPartitionedNodeStaysAbove is TestRedisPartition step by step: the
// other node is idle meanwhile, so the hash is still where the cut-off
// node left it, below its direct claims. Back in touch, the node starts
// the hash again above them rather than go back down.
func TestPartitionedNodeStaysAbove(t *testing.T) {
	c := newCluster(t, clusterOpts{nodes: 2, factor: 20, redisProxy: true})
	ctx := context.Background()
	a, b := c.nodes[0], c.nodes[1]
	claim := func(n *redis.Store) idforge.Segment {
		t.Helper()
		seg, err := n.ClaimSegment(ctx, testKey, 0)
		if err != nil {
			t.Fatal(err)
		}
		return seg
	}
	var segs []idforge.Segment
	for range 3 {
		segs = append(segs, claim(a), claim(b))
	}
	c.rproxy[0].Cut()
	var direct idforge.Segment
	for range 3 {
		direct = claim(a)
		segs = append(segs, direct)
	}
	if s := a.Stats(); s.DirectClaims != 3 {
		t.Fatalf("cut-off node: %+v, want 3 direct claims", s)
	}
	c.rproxy[0].Restore()
	time.Sleep(2 * retryAfter)
	resets := a.Stats().Resets
	next := claim(a)
	if next.Start < direct.End {
		t.Fatalf("after healing the node claimed [%d, %d), below its direct claim [%d, %d)", next.Start, next.End, direct.Start, direct.End)
	}
	if s := a.Stats(); s.Resets != resets+1 || s.DirectClaims != 3 {
		t.Fatalf("after healing: %+v, want the hash started again (one more reset) and no more direct claims", s)
	}
	segs = append(segs, next, claim(b), claim(a))
	slices.SortFunc(segs, func(x, y idforge.Segment) int { return cmp.Compare(x.Start, y.Start) })
	for i := 1; i < len(segs); i++ {
		if segs[i].Start < segs[i-1].End {
			t.Fatalf("segments [%d, %d) and [%d, %d) overlap", segs[i-1].Start, segs[i-1].End, segs[i].Start, segs[i].End)
		}
	}
}

// TestDatabaseDown is case ③: the database is cut off. Redis goes on
// handing out the room it has, never more: then claims fail fast with
// ErrUnavailable, and max_id has not moved. When the database is back,
// claims succeed again.
func TestDatabaseDown(t *testing.T) {
	const factor = 5 // Redis holds 50 to 100 IDs of room
	c := newCluster(t, clusterOpts{nodes: 3, factor: factor})
	rdb := goredis.NewClient(&goredis.Options{Addr: c.redis.Addr()})
	defer rdb.Close()
	ctx := context.Background()
	l := c.start(1)
	time.Sleep(150 * time.Millisecond)
	l.noErrors(t, "start")

	l.setPhase("db down")
	c.db.Cut()
	time.Sleep(50 * time.Millisecond) // let a reservation in flight end
	max := c.sqlMax()
	waitFor(t, 30*time.Second, "claims fail", func() bool {
		_, errs := l.in("db down")
		return len(errs) >= 10
	})
	ok, errs := l.in("db down")
	for _, cl := range errs {
		if !errors.Is(cl.err, idforge.ErrUnavailable) {
			t.Errorf("claim with the database down: %v, want ErrUnavailable", cl.err)
		}
		if cl.took > hang {
			t.Errorf("a failing claim took %v: it hung instead of failing", cl.took)
		}
	}
	if len(ok) > 2*factor {
		t.Errorf("%d segments of %d IDs handed out with the database down, more than the room Redis can hold", len(ok), testStep)
	}
	for _, s := range ok {
		if s.End > max {
			t.Errorf("segment [%d, %d) handed out above max_id %d", s.Start, s.End, max)
		}
	}
	if got := c.sqlMax(); got != max {
		t.Fatalf("max_id moved from %d to %d while the database was cut off", max, got)
	}
	room, err := rdb.HGet(ctx, "t:"+testKey, "max").Int64()
	if err != nil || room > max {
		t.Fatalf("Redis's max = %d (%v), want at most max_id %d", room, err, max)
	}

	l.setPhase("db back")
	c.db.Restore()
	waitFor(t, 30*time.Second, "claims succeed again", func() bool {
		ok, _ := l.in("db back")
		return len(ok) >= 10
	})
	l.setPhase("db back, settled")
	time.Sleep(100 * time.Millisecond)
	l.noErrors(t, "db back, settled")
	l.check(t)
}

// TestBothDown is case ⑤: Redis and the database are down. Claims fail
// fast with ErrUnavailable, naming both causes; everything recovers on
// its own.
func TestBothDown(t *testing.T) {
	c := newCluster(t, clusterOpts{nodes: 3, factor: 5})
	l := c.start(1)
	time.Sleep(100 * time.Millisecond)
	l.noErrors(t, "start")

	c.db.Cut()
	c.redis.Kill()
	l.setPhase("both down")
	waitFor(t, 30*time.Second, "claims fail", func() bool {
		_, errs := l.in("both down")
		return len(errs) >= 10
	})
	ok, errs := l.in("both down")
	if len(ok) != 0 {
		t.Errorf("%d claims succeeded with Redis and the database down", len(ok))
	}
	for _, cl := range errs {
		if !errors.Is(cl.err, idforge.ErrUnavailable) {
			t.Errorf("claim with both down: %v, want ErrUnavailable", cl.err)
		}
		if msg := cl.err.Error(); !strings.Contains(msg, "Redis") || !strings.Contains(msg, "database") {
			t.Errorf("error %q does not name both causes", msg)
		}
		if cl.took > hang {
			t.Errorf("a failing claim took %v: it hung instead of failing", cl.took)
		}
	}

	l.setPhase("recovering")
	c.redis.Restart()
	c.db.Restore()
	c.redisRecovered(30 * time.Second)
	l.setPhase("recovered")
	time.Sleep(100 * time.Millisecond)
	l.noErrors(t, "recovered")
	l.check(t)
}

// TestRedisSlow has one node reach Redis through a link slower than its
// client's timeout: every script it sends runs on Redis after the node
// gave up on it, installs of its reserved blocks included. The node must
// treat those outcomes as unknown (abandon the block, claim from the
// database) and never hand such a block back to the database, which
// would issue it a second time.
func TestRedisSlow(t *testing.T) {
	c := newCluster(t, clusterOpts{nodes: 3, factor: 3, redisProxy: true})
	l := c.start(1)
	time.Sleep(100 * time.Millisecond)
	l.noErrors(t, "start")

	l.setPhase("slow")
	c.rproxy[0].SetLatency(300 * time.Millisecond) // the client gives up after 200 ms
	// How soon the slow node needs a claim depends on how much room its
	// Redis segment had left; on a busy machine that can take a while.
	waitFor(t, 30*time.Second, "the slow node claims from the database", func() bool {
		return c.nodes[0].Stats().DirectClaims > 0
	})
	l.noErrors(t, "slow")

	l.setPhase("fast")
	c.rproxy[0].SetLatency(0)
	c.redisRecovered(30 * time.Second)
	l.noErrors(t, "fast")
	l.check(t)
}
