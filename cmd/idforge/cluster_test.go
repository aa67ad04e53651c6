package main_test

import (
	"context"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idforge/idforge/internal/e2e"
	"github.com/idforge/idforge/internal/testsvc"
)

// database is one database server the cluster tests run against.
type database struct {
	name string
	// fresh returns the store URL of a new, empty database.
	fresh func(testing.TB) string
	// port is the server's port, for the proxy tests.
	port string
}

var databases = []database{
	{"mariadb", testsvc.MySQL, "3306"},
	{"postgres", testsvc.Postgres, "5432"},
	{"mongodb", testsvc.Mongo, "27017"},
}

// migrate runs `idforge migrate` against storeURL.
func migrate(t *testing.T, storeURL string) {
	t.Helper()
	out, err := exec.Command(e2e.Binary(t), "migrate", "--store", storeURL, "--data", t.TempDir()).CombinedOutput()
	if err != nil {
		t.Fatalf("idforge migrate: %v\n%s", err, out)
	}
}

// viaProxy rewrites a store URL to go through p.
func viaProxy(t *testing.T, storeURL string, p *e2e.Proxy) string {
	t.Helper()
	u, err := url.Parse(storeURL)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = p.Addr()
	return u.String()
}

// Three idforge processes share one database while concurrent clients
// hammer all of them over HTTP and the nodes are killed with SIGKILL and
// restarted one after another. The union of every ID has no duplicate, and
// every client sees its node's IDs strictly increase, across restarts too.
func TestClusterKillDashNine(t *testing.T) {
	endToEnd(t, parallel)
	for _, db := range databases {
		t.Run(db.name, func(t *testing.T) {
			t.Parallel()
			storeURL := db.fresh(t)
			migrate(t, storeURL)
			nodes := make([]*e2e.Node, 3)
			for i := range nodes {
				nodes[i] = e2e.StartNode(t, "--store", storeURL, "--worker", strconv.Itoa(i+1))
			}
			createKey(t, nodes[0], `{"key":"order","step":25}`)
			createKey(t, nodes[0], `{"key":"msg","strategy":"snowflake"}`)

			seg, snow := e2e.NewLedger(), e2e.NewLedger()
			ctx, stop := context.WithCancel(context.Background())
			var drivers sync.WaitGroup
			const perNode = 3
			drivers.Go(func() {
				e2e.Drive(ctx, seg, len(nodes)*perNode, func(ctx context.Context, c int) ([]int64, error) {
					n := nodes[c/perNode]
					if c%2 == 0 {
						id, err := e2e.FetchID(ctx, n.URL("/api/segment/get/order"))
						return []int64{id}, err
					}
					return e2e.FetchIDs(ctx, n.URL("/v1/ids/order?count=7"))
				})
			})
			drivers.Go(func() {
				e2e.Drive(ctx, snow, len(nodes), func(ctx context.Context, c int) ([]int64, error) {
					return e2e.FetchIDs(ctx, nodes[c].URL("/v1/ids/msg?count=3"))
				})
			})
			if err := e2e.KillInTurn(nodes, 4, 500*time.Millisecond); err != nil {
				stop()
				drivers.Wait()
				t.Fatal(err)
			}
			time.Sleep(500 * time.Millisecond)
			stop()
			drivers.Wait()

			ids, failed := seg.Counts()
			snowIDs, _ := snow.Counts()
			t.Logf("%d segment IDs, %d snowflake IDs, %d failed requests (while nodes were down)", ids, snowIDs, failed)
			if ids < 1000 || snowIDs < 1000 {
				t.Fatalf("too few IDs issued to prove anything")
			}
			for name, l := range map[string]*e2e.Ledger{"segment": seg, "snowflake": snow} {
				if err := l.CheckUnique(); err != nil {
					t.Errorf("%s: %v", name, err)
				}
				if err := l.CheckIncreasing(); err != nil {
					t.Errorf("%s: %v", name, err)
				}
			}
		})
	}
}

// A node pointed at a database Leaf set up, with Leaf's own DDL and rows
// and no idforge tables at all, serves Leaf's endpoint exactly as Leaf
// does: plain text, the first ID at the row's max_id.
func TestLeafDatabaseAsIs(t *testing.T) {
	endToEnd(t, parallel)
	storeURL := testsvc.MySQL(t)
	db := testsvc.MySQLDB(t, storeURL)
	for _, q := range []string{
		"CREATE TABLE `leaf_alloc` (" +
			"`biz_tag` varchar(128) NOT NULL DEFAULT ''," +
			"`max_id` bigint(20) NOT NULL DEFAULT '1'," +
			"`step` int(11) NOT NULL," +
			"`description` varchar(256) DEFAULT NULL," +
			"`update_time` timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP," +
			"PRIMARY KEY (`biz_tag`)) ENGINE=InnoDB",
		"INSERT INTO leaf_alloc(biz_tag, max_id, step, description) VALUES('leaf-segment-test', 1, 2000, 'Test leaf Segment Mode Get Id')",
		// A key Leaf has been issuing from: it claimed up to 3001.
		"INSERT INTO leaf_alloc(biz_tag, max_id, step, description) VALUES('order', 3001, 1000, 'orders')",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	n := e2e.StartNode(t, "--store", storeURL)
	for key, want := range map[string][]string{"leaf-segment-test": {"1", "2", "3"}, "order": {"3001", "3002"}} {
		for _, w := range want {
			status, body, err := e2e.Get(context.Background(), n.URL("/api/segment/get/"+key))
			if err != nil || status != 200 || body != w {
				t.Fatalf("GET /api/segment/get/%s = %d %q %v, want 200 %q", key, status, body, err, w)
			}
		}
	}
	// Leaf's own bookkeeping sees the claims.
	var maxID int64
	if err := db.QueryRow("SELECT max_id FROM leaf_alloc WHERE biz_tag = 'leaf-segment-test'").Scan(&maxID); err != nil || maxID != 2001 {
		t.Fatalf("max_id = %d, %v; want 2001", maxID, err)
	}
}

// The database goes away mid-load (every connection cut by a proxy): the
// node issues everything it has buffered without a single failure, then
// answers fast 503s, then recovers by itself when the database is back.
// No ID is issued twice across the outage.
func TestDatabaseOutage(t *testing.T) {
	endToEnd(t, parallel)
	for _, db := range databases {
		t.Run(db.name, func(t *testing.T) {
			t.Parallel()
			storeURL := db.fresh(t)
			migrate(t, storeURL)
			proxy := e2e.StartProxy(t, "127.0.0.1:"+db.port)
			// Segments of at most 1000, so the buffers drain quickly.
			cfg := filepath.Join(t.TempDir(), "idforge.toml")
			os.WriteFile(cfg, []byte("[segment]\nmax_step = 1000\n"), 0o600)
			n := e2e.StartNode(t, "--store", viaProxy(t, storeURL, proxy), "--config", cfg)
			createKey(t, n, `{"key":"order","step":300}`)
			ctx := context.Background()
			seen := map[int64]bool{}
			take := func() (int, string) {
				status, body, err := e2e.Get(ctx, n.URL("/api/segment/get/order"))
				if err != nil {
					t.Fatal(err)
				}
				if status == 200 {
					id, _ := strconv.ParseInt(body, 10, 64)
					if seen[id] {
						t.Fatalf("ID %d issued twice", id)
					}
					seen[id] = true
				}
				return status, body
			}
			for range 50 { // the first segment, and the prefetch of the next
				if status, body := take(); status != 200 {
					t.Fatalf("%d %s", status, body)
				}
			}
			// Cut only once the prefetched segment has landed: a claim
			// answered while the cut happens would land after the count
			// of buffered IDs below was read.
			prefetched := time.Now().Add(time.Minute)
			for keyBuffered(t, n, "order") <= 250 {
				if time.Now().After(prefetched) {
					t.Fatalf("the next segment was not prefetched within a minute (%d IDs buffered)", keyBuffered(t, n, "order"))
				}
				time.Sleep(10 * time.Millisecond)
			}

			proxy.Cut()
			// Still serving from its buffers: ready, but degraded, and it
			// says for how long.
			status, body, err := e2e.Get(ctx, n.URL("/readyz?verbose=1"))
			if err != nil {
				t.Fatal(err)
			}
			if status != 200 || !strings.Contains(body, `"status":"degraded"`) || !regexp.MustCompile(`"order":\{"buffered_ids":[1-9]\d*,"buffered_seconds":[0-9.e+-]+`).MatchString(body) {
				t.Fatalf("readyz with the database cut and IDs buffered: %d %s; want 200 degraded with the buffered IDs and seconds", status, body)
			}
			buffered := keyBuffered(t, n, "order")
			for i := range buffered {
				if status, body := take(); status != 200 {
					t.Fatalf("request %d of %d buffered IDs failed during the outage: %d %s", i+1, buffered, status, body)
				}
			}
			for range 20 {
				began := time.Now()
				status, body := take()
				if status != 503 || !strings.Contains(body, `"unavailable"`) {
					t.Fatalf("after the buffers ran out: %d %s, want 503 unavailable", status, body)
				}
				if took := time.Since(began); took > 4*time.Second {
					t.Fatalf("a request took %v to fail; want a fast failure", took)
				}
			}
			if status, body, _ := e2e.Get(ctx, n.URL("/readyz")); status != 503 {
				t.Fatalf("readyz during the outage with no buffers: %d %s", status, body)
			}

			proxy.Restore()
			deadline := time.Now().Add(15 * time.Second)
			for {
				if status, _ := take(); status == 200 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("no recovery 15 s after the database came back")
				}
				time.Sleep(20 * time.Millisecond)
			}
			for range 500 {
				if status, body := take(); status != 200 {
					t.Fatalf("after recovery: %d %s", status, body)
				}
			}
		})
	}
}

// keyBuffered reads how many IDs a node holds for key from /readyz?verbose=1, which
// reports it without asking the store (it may be down).
func keyBuffered(t *testing.T, n *e2e.Node, key string) int {
	t.Helper()
	_, body, err := e2e.Get(context.Background(), n.URL("/readyz?verbose=1"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`"` + key + `":\{"buffered_ids":(\d+)`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no buffered count for %s in %s", key, body)
	}
	b, _ := strconv.Atoi(m[1])
	return b
}

// metric reads one sample from /metrics.
func metric(t *testing.T, n *e2e.Node, sample string) float64 {
	t.Helper()
	_, body, err := e2e.Get(context.Background(), n.URL("/metrics"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(body, "\n") {
		if rest, ok := strings.CutPrefix(line, sample+" "); ok {
			v, err := strconv.ParseFloat(rest, 64)
			if err != nil {
				t.Fatalf("metric %s: %q", sample, line)
			}
			return v
		}
	}
	t.Fatalf("no metric %s in:\n%s", sample, body)
	return 0
}

// With 25 ms added to every database round trip, no request waits for the
// database while a buffered range remains: at a steady rate, the only call
// that ever waited is the very first.
func TestSlowDatabaseNeverBlocksCallers(t *testing.T) {
	endToEnd(t, alone) // it counts waits: no other test may steal the CPU
	for _, db := range databases {
		t.Run(db.name, func(t *testing.T) {
			storeURL := db.fresh(t)
			migrate(t, storeURL)
			proxy := e2e.StartProxy(t, "127.0.0.1:"+db.port)
			// Short segments, so that many claims happen under latency.
			cfg := filepath.Join(t.TempDir(), "idforge.toml")
			os.WriteFile(cfg, []byte("[segment]\nmax_step = 200\n"), 0o600)
			n := e2e.StartNode(t, "--store", viaProxy(t, storeURL, proxy), "--config", cfg)
			// Every segment, the first included, leaves 180 IDs (450 ms at
			// the test's rate) for the prefetch's 4 round trips (100 ms):
			// room for a loaded machine, while a prefetch that started
			// late or not at all still makes callers wait.
			createKey(t, n, `{"key":"order","step":200}`)
			proxy.SetLatency(25 * time.Millisecond)
			ctx := context.Background()
			// The first call has nothing buffered and must wait: that is
			// the one wait allowed.
			if _, err := e2e.FetchID(ctx, n.URL("/api/segment/get/order")); err != nil {
				t.Fatal(err)
			}
			// 4 clients at ~100 requests/s each for 4 s.
			var wg sync.WaitGroup
			errs := make(chan error, 4)
			for range 4 {
				wg.Go(func() {
					tick := time.NewTicker(10 * time.Millisecond)
					defer tick.Stop()
					for range 400 {
						<-tick.C
						if _, err := e2e.FetchID(ctx, n.URL("/api/segment/get/order")); err != nil {
							errs <- err
							return
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			waits := metric(t, n, `idforge_segment_waits_total{key="order"}`)
			loads := metric(t, n, `idforge_segment_loads_total{key="order"}`)
			t.Logf("%v segment loads with 25 ms per database round trip", loads)
			if loads < 5 {
				t.Fatalf("only %v segment loads: the test did not cross enough segment boundaries", loads)
			}
			if waits != 1 {
				t.Fatalf("%v calls waited for the database (over %v segment loads); want only the first", waits, loads)
			}
		})
	}
}

// A clean restart of a lone node hands its unused range back: the next ID
// after the restart follows the last one issued. With a second node having
// claimed in between, the hand-back is refused and nothing is duplicated.
func TestGracefulRestartLeavesNoGap(t *testing.T) {
	endToEnd(t, parallel)
	for _, db := range databases {
		t.Run(db.name, func(t *testing.T) {
			t.Parallel()
			gracefulRestart(t, db.fresh(t))
		})
	}
}

func gracefulRestart(t *testing.T, storeURL string) {
	migrate(t, storeURL)
	ctx := context.Background()

	a := e2e.StartNode(t, "--store", storeURL, "--worker", "1")
	createKey(t, a, `{"key":"order","step":100}`)
	var last int64
	for range 37 {
		id, err := e2e.FetchID(ctx, a.URL("/api/segment/get/order"))
		if err != nil {
			t.Fatal(err)
		}
		last = id
	}
	// Stop once the prefetched segment has landed: a claim still in
	// flight when the node stops is cancelled, and if the store applied
	// it anyway the hand-back is rightly refused (a gap). A store whose
	// writes take a while (MongoDB waiting for a majority) would make that
	// race likely.
	prefetched := time.Now().Add(10 * time.Second)
	for keyBuffered(t, a, "order") <= 100-37 {
		if time.Now().After(prefetched) {
			t.Fatalf("the next segment was not prefetched within 10 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := a.Terminate(); err != nil {
		t.Fatal(err)
	}
	if err := a.Restart(); err != nil {
		t.Fatal(err)
	}
	next, err := e2e.FetchID(ctx, a.URL("/api/segment/get/order"))
	if err != nil || next != last+1 {
		t.Fatalf("after a clean restart: %d, %v; want %d", next, err, last+1)
	}

	// Now a second node claims after a.
	b := e2e.StartNode(t, "--store", storeURL, "--worker", "2")
	seen := map[int64]string{}
	record := func(n *e2e.Node, name string, count int) {
		for range count {
			id, err := e2e.FetchID(ctx, n.URL("/api/segment/get/order"))
			if err != nil {
				t.Fatal(err)
			}
			if other, dup := seen[id]; dup {
				t.Fatalf("ID %d issued by %s and %s", id, other, name)
			}
			seen[id] = name
		}
	}
	record(a, "a", 5)
	record(b, "b", 5)
	if err := a.Terminate(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(a.Logs(), "not handed back: another node claimed after it") {
		t.Fatalf("the hand-back was not refused:\n%s", a.Logs())
	}
	if err := a.Restart(); err != nil {
		t.Fatal(err)
	}
	record(a, "a after restart", 50)
	record(b, "b", 50)
}
