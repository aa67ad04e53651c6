package main_test

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idforge/idforge/internal/e2e"
	"github.com/idforge/idforge/internal/testsvc"
)

// coordinator is a worker-ID coordinator the tests run against.
type coordinator struct {
	name string
	// url returns a --worker URL with a fresh namespace.
	url func(testing.TB) string
	// expires is true for leases that lapse (etcd, Redis, SQL); ZooKeeper
	// binds an ID to its host:port for good, as Leaf does.
	expires bool
	// port is the coordinator's port, for the proxy tests.
	port string
}

// leaseTTL is the lease length the tests use, short to keep them fast.
const leaseTTL = 3 * time.Second

func withParam(u, param string) string {
	if strings.Contains(u, "?") {
		return u + "&" + param
	}
	return u + "?" + param
}

var coordinators = []coordinator{
	{"etcd", func(t testing.TB) string { return withParam(testsvc.Etcd(t), "ttl="+leaseTTL.String()) }, true, "2379"},
	{"zookeeper", testsvc.ZooKeeper, false, "2181"},
	{"redis", func(t testing.TB) string { return withParam(testsvc.Redis(t), "ttl="+leaseTTL.String()) }, true, "6379"},
	{"sql", func(t testing.TB) string {
		return migrateWorker(t, withParam(testsvc.MySQL(t), "stale_after="+leaseTTL.String()))
	}, true, "3306"},
}

// migrateWorker runs `idforge migrate --worker workerURL`, which creates
// the SQL worker-ID provider's table, and returns workerURL.
func migrateWorker(t testing.TB, workerURL string) string {
	t.Helper()
	out, err := exec.Command(e2e.Binary(t), "migrate", "--worker", workerURL, "--data", t.TempDir()).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "created idforge_workers") {
		t.Fatalf("idforge migrate --worker: %v\n%s", err, out)
	}
	return workerURL
}

// Issue 24, item 8: idforge serve never creates a table on a database
// server. A SQL worker-ID provider on a database without its table stops
// the node, saying to run idforge migrate, and creates nothing; after
// `idforge migrate --worker` the node starts.
func TestServeCreatesNoWorkerTable(t *testing.T) {
	endToEnd(t, parallel)
	for _, db := range []struct {
		name  string
		url   func(testing.TB) string
		count func(testing.TB, string) *sql.DB
	}{{"mariadb", testsvc.MySQL, testsvc.MySQLDB}, {"postgres", testsvc.Postgres, testsvc.PostgresDB}} {
		t.Run(db.name, func(t *testing.T) {
			t.Parallel()
			u := db.url(t)
			err := e2e.NewNode(t, "--worker", u).Start()
			if err == nil || !strings.Contains(err.Error(), "run `idforge migrate`") {
				t.Fatalf("serve on a database without idforge_workers: %v; want it to stop saying to run idforge migrate", err)
			}
			var n int
			if db.count(t, u).QueryRow("SELECT COUNT(*) FROM idforge_workers").Scan(&n) == nil {
				t.Fatal("serve created idforge_workers")
			}
			e2e.StartNode(t, "--worker", migrateWorker(t, u))
		})
	}
}

// workerOf issues a snowflake ID on n and decodes its worker ID.
func workerOf(t *testing.T, n *e2e.Node) int64 {
	t.Helper()
	ctx := context.Background()
	id, err := e2e.FetchID(ctx, n.URL("/api/snowflake/get/any"))
	if err != nil {
		t.Fatal(err)
	}
	_, body, err := e2e.Get(ctx, n.URL(fmt.Sprintf("/v1/explain/%d", id)))
	if err != nil {
		t.Fatal(err)
	}
	w, err := strconv.ParseInt(between(body, `"worker":`, `,`), 10, 64)
	if err != nil {
		t.Fatalf("explain: %s", body)
	}
	return w
}

// Five processes started at once get five distinct worker IDs. A killed
// node's ID goes back to the same host:port at once, to nobody else while
// its lease may be live, and (where leases lapse) to others only after.
func TestWorkerCoordinators(t *testing.T) {
	endToEnd(t, parallel)
	for _, c := range coordinators {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			workerURL := c.url(t)
			nodes := make([]*e2e.Node, 5)
			errs := make(chan error, len(nodes))
			var wg sync.WaitGroup
			for i := range nodes {
				nodes[i] = e2e.NewNode(t, "--worker", workerURL, "--http", e2e.FreePort(t))
				wg.Go(func() { errs <- nodes[i].Start() })
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			seen := map[int64]int{}
			for i, n := range nodes {
				w := workerOf(t, n)
				if j, dup := seen[w]; dup {
					t.Fatalf("nodes %d and %d both got worker ID %d", j, i, w)
				}
				seen[w] = i
			}

			victim := nodes[0]
			w0 := workerOf(t, victim)
			victim.Kill()
			killed := time.Now()
			newcomer := e2e.StartNode(t, "--worker", workerURL)
			// The victim's last renewal was at most TTL/3 before the kill,
			// so the coordinator holds its ID for 2/3 TTL after it at least.
			// A newcomer that started within that window must not get it;
			// one slowed past it by a loaded machine may, rightly.
			if w := workerOf(t, newcomer); w == w0 {
				if took := time.Since(killed); !c.expires || took < leaseTTL-leaseTTL/3 {
					t.Fatalf("a new node got worker ID %d of a node killed %v ago", w, took)
				}
				t.Logf("the newcomer took %v to start, past the killed node's lease: it got its ID %d", time.Since(killed), w)
				return
			}
			if err := victim.Restart(); err != nil {
				t.Fatal(err)
			}
			if w := workerOf(t, victim); w != w0 {
				t.Fatalf("restarted on the same host:port, the node got worker ID %d, want its own %d", w, w0)
			}
			if !c.expires {
				return
			}
			victim.Kill()
			time.Sleep(2 * leaseTTL) // the lease, and the coordinator's expiry check, lapse
			late := e2e.StartNode(t, "--worker", workerURL)
			if w := workerOf(t, late); w != w0 {
				t.Fatalf("after the lease lapsed a new node got worker ID %d, want the freed lowest ID %d", w, w0)
			}
		})
	}
}

// A node frozen with SIGSTOP past its lease must not issue with its old
// worker ID once another node has it: when it wakes it refuses, gets a new
// ID and goes on. No ID is issued twice.
func TestFrozenPastLease(t *testing.T) {
	endToEnd(t, parallel)
	for _, c := range coordinators {
		if !c.expires || c.name == "sql" {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			workerURL := c.url(t)
			a := e2e.StartNode(t, "--worker", workerURL)
			wa := workerOf(t, a)
			ledger := e2e.NewLedger()
			collect := func(n *e2e.Node, client, count int) (workers map[int64]int, failures int) {
				workers = map[int64]int{}
				for range count {
					ids, err := e2e.FetchIDs(ctx, n.URL("/v1/ids/any?count=5"))
					if err != nil {
						failures++
						time.Sleep(10 * time.Millisecond)
						continue
					}
					ledger.Add(client, ids...)
					for _, id := range ids {
						workers[id>>12&1023]++ // twitter layout: datacenter and worker bits
					}
				}
				return workers, failures
			}
			createKey(t, a, `{"key":"any","strategy":"snowflake"}`)
			collect(a, 0, 50)

			a.Pause()
			time.Sleep(2 * leaseTTL) // the lease, and the coordinator's expiry check, lapse
			b := e2e.StartNode(t, "--worker", workerURL)
			if wb := workerOf(t, b); wb != wa {
				t.Fatalf("the new node got worker ID %d; the test wants it to take the frozen node's %d", wb, wa)
			}
			collect(b, 1, 100)
			a.Resume()
			// The woken node refuses until it holds a new ID: keep asking
			// until it issues (a loaded machine may take a while).
			workers, failures := map[int64]int{}, 0
			for deadline := time.Now().Add(15 * time.Second); len(workers) == 0 && time.Now().Before(deadline); {
				w, f := collect(a, 2, 50)
				for id, n := range w {
					workers[id] += n
				}
				failures += f
			}
			if workers[wa] > 0 {
				t.Fatalf("the frozen node issued %d IDs with worker ID %d after waking, while another node holds it", workers[wa], wa)
			}
			t.Logf("after waking: %d refused requests, then IDs with worker IDs %v", failures, workers)
			if len(workers) == 0 {
				t.Fatalf("the woken node never got a new worker ID:\n%s", a.Logs())
			}
			if !strings.Contains(a.Logs(), "lease lost") {
				t.Fatalf("no log line about the lost lease:\n%s", a.Logs())
			}
			if err := ledger.CheckUnique(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// With the coordinator unreachable at start-up, a node that held an ID
// resumes it from its local cache and says so; a node without a cache
// refuses with a clear error.
func TestCoordinatorDownAtStart(t *testing.T) {
	endToEnd(t, parallel)
	for _, c := range coordinators {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			proxy := e2e.StartProxy(t, "127.0.0.1:"+c.port)
			u, err := url.Parse(c.url(t))
			if err != nil {
				t.Fatal(err)
			}
			u.Host = proxy.Addr()
			// A long lease, so the cached ID is still valid after the kill.
			q := u.Query()
			for _, p := range []string{"ttl", "stale_after"} {
				if q.Has(p) {
					q.Set(p, "60s")
				}
			}
			u.RawQuery = q.Encode()
			workerURL := u.String()

			a := e2e.StartNode(t, "--worker", workerURL, "--http", e2e.FreePort(t))
			wa := workerOf(t, a)
			a.Kill() // a crash: the cache stays
			proxy.Cut()
			if err := a.Restart(); err != nil {
				t.Fatalf("a node with a cached worker ID did not start with the coordinator down: %v", err)
			}
			if w := workerOf(t, a); w != wa {
				t.Fatalf("resumed worker ID %d, want the cached %d", w, wa)
			}
			if logs := a.Logs(); !strings.Contains(strings.ToLower(logs), "cache") || !strings.Contains(logs, "level=WARN") {
				t.Fatalf("the node did not say it resumed from its cache:\n%s", logs)
			}
			fresh := e2e.NewNode(t, "--worker", workerURL)
			err = fresh.Start()
			if err == nil {
				t.Fatal("a node without a cache started with the coordinator down")
			}
			if msg := strings.ToLower(err.Error()); !strings.Contains(msg, "unreachable") && !strings.Contains(msg, "unavailable") {
				t.Fatalf("refusal does not say the coordinator is unreachable: %v", err)
			}
		})
	}
}
