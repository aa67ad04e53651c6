package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/e2e"
	"github.com/idforge/idforge/internal/testsvc"
)

// failoverLoad drives nodes over HTTP and records every ID and every
// error code, with the time of the first refusal and of the last success.
type failoverLoad struct {
	mu       sync.Mutex
	seen     map[int64]bool
	dups     []int64
	codes    map[string]int
	lastOK   time.Time
	firstBad time.Time
	// mark, once set, has record note the first success after it in
	// resumed.
	mark, resumed time.Time
	max           int64
}

func newFailoverLoad() *failoverLoad {
	return &failoverLoad{seen: map[int64]bool{}, codes: map[string]int{}}
}

// run fetches batches of IDs of key from the nodes, round robin, until ctx
// ends.
func (l *failoverLoad) run(ctx context.Context, nodes []*e2e.Node, key string, clients int) *sync.WaitGroup {
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			for i := c; ctx.Err() == nil; i++ {
				n := nodes[i%len(nodes)]
				rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
				status, body, err := e2e.Get(rctx, n.URL("/v1/ids/"+key+"?count=5"))
				cancel()
				if ctx.Err() != nil {
					return
				}
				l.record(status, body, err)
				if status != 200 {
					time.Sleep(20 * time.Millisecond)
				}
			}
		})
	}
	return &wg
}

func (l *failoverLoad) record(status int, body string, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		l.codes["transport"]++
		return
	}
	if status != 200 {
		var e struct {
			Error struct {
				Code string `json:"code"`
			} `json:"error"`
		}
		json.Unmarshal([]byte(body), &e)
		l.codes[e.Error.Code]++
		if e.Error.Code == string(idforge.CodeStoreFailedOver) && l.firstBad.IsZero() {
			l.firstBad = time.Now()
		}
		return
	}
	var r struct {
		IDs []string `json:"ids"`
	}
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		l.codes["bad body"]++
		return
	}
	for _, s := range r.IDs {
		v, _ := strconv.ParseInt(s, 10, 64)
		if l.seen[v] {
			l.dups = append(l.dups, v)
		}
		l.seen[v] = true
		l.max = max(l.max, v)
	}
	l.lastOK = time.Now()
	if !l.mark.IsZero() && l.resumed.IsZero() {
		l.resumed = l.lastOK
	}
}

// snapshot returns the number of IDs, the duplicates, the codes and the
// largest ID so far.
func (l *failoverLoad) snapshot() (int, []int64, map[string]int, int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	codes := map[string]int{}
	for k, v := range l.codes {
		codes[k] = v
	}
	return len(l.seen), append([]int64(nil), l.dups...), codes, l.max
}

// waitForIDs waits until the load has issued more than n IDs in all.
func (l *failoverLoad) waitForIDs(t *testing.T, n int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		got, _, codes, _ := l.snapshot()
		if got > n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d IDs issued after %s (want more than %d); errors: %v", got, within, n, codes)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// replicated is a primary and an asynchronous replica of a test's own,
// the replica fed through link so that the test can cut its stream.
type replicated struct {
	primary, replica string // host:port
	link             *e2e.Proxy
	// url is the store URL of the database idf through addr.
	url func(addr string) string
	// position tells how far the primary's and the replica's data go.
	position      func() string
	kill, promote func()
}

func replicatedMariaDB(t *testing.T) replicated {
	primary := testsvc.StartMariaDB(t, 1)
	replica := testsvc.StartMariaDB(t, 2)
	link := e2e.StartProxy(t, primary.Addr())
	replica.ReplicateFrom(link.Addr())
	primary.Exec("CREATE DATABASE idf")
	return replicated{primary: primary.Addr(), replica: replica.Addr(), link: link,
		url:      func(addr string) string { return "mysql://root@" + addr + "/idf?timeout=2s" },
		position: func() string { return "primary at GTID " + primary.GTID() + ", replica at " + replica.GTID() },
		kill:     primary.Kill, promote: replica.Promote}
}

func replicatedPostgres(t *testing.T) replicated {
	primary := testsvc.StartPostgres(t)
	primary.Exec("CREATE DATABASE idf")
	link := e2e.StartProxy(t, primary.Addr())
	replica := testsvc.StartStandby(t, link.Addr())
	return replicated{primary: primary.Addr(), replica: replica.Addr(), link: link,
		url:      func(addr string) string { return "postgres://postgres@" + addr + "/idf?sslmode=disable&timeout=2s" },
		position: func() string { return "primary at LSN " + primary.LSN() + ", standby at " + replica.LSN() },
		kill:     primary.Kill, promote: replica.Promote}
}

// Three real idforge nodes reach a database primary through one address
// (a virtual IP): MariaDB with an asynchronous replica, PostgreSQL with
// a streaming standby. The replica stops receiving the primary's log
// (the replication link is cut: nothing more arrives, unlike a paused
// replay) while the nodes go on claiming segments; the primary is killed,
// the replica promoted and the address moved to it, so the database now
// lacks the last claims. No ID repeats over the whole run: every node
// refuses with store_failed_over (and the metric says so) as soon as its
// buffer is spent, and after `idforge keys repair --from-nodes` every
// node issues again, above every ID handed out before. A key in global
// order, loaded beside it, keeps its order over the whole run.
func TestFailoverReplicaPromoted(t *testing.T) {
	testsvc.Slow(t)
	endToEnd(t, false)
	for _, engine := range []struct {
		name  string
		start func(*testing.T) replicated
	}{{"mariadb", replicatedMariaDB}, {"postgres", replicatedPostgres}} {
		t.Run(engine.name, func(t *testing.T) { failoverReplicaPromoted(t, engine.start(t)) })
	}
}

func failoverReplicaPromoted(t *testing.T, db replicated) {
	vip := e2e.StartProxy(t, db.primary)
	storeURL := db.url(vip.Addr())
	migrate(t, storeURL)
	cfg := filepath.Join(t.TempDir(), "idforge.toml")
	if err := os.WriteFile(cfg, []byte("[segment]\nmax_step = 200\nmin_step = 20\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	nodes := make([]*e2e.Node, 3)
	for i := range nodes {
		nodes[i] = e2e.StartNode(t, "--config", cfg, "--store", storeURL, "--worker", strconv.Itoa(i+1))
	}
	createKey(t, nodes[0], `{"key":"order","step":20}`)
	createKey(t, nodes[0], `{"key":"tx","step":20,"order":"global"}`)

	load := newFailoverLoad()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	wg := load.run(ctx, nodes, "order", 6)
	var global globalLoad
	globalWG := global.run(ctx, nodes, "tx", 3)
	load.waitForIDs(t, 2000, 30*time.Second)

	// The replica stops receiving the binary log; the nodes go on
	// claiming on the primary.
	db.link.Cut()
	cutAt, _, _, _ := load.snapshot()
	load.waitForIDs(t, cutAt+3000, 30*time.Second)
	t.Logf("when the primary is killed: %s", db.position())
	db.kill()
	db.promote()
	vip.Cut()
	vip.SetTarget(db.replica)
	vip.Restore()
	switched := time.Now()

	// Every node refuses once its buffer is spent.
	deadline := time.Now().Add(60 * time.Second)
	for {
		ok := true
		for _, n := range nodes {
			if _, body, err := e2e.Get(ctx, n.URL("/v1/ids/order")); err != nil || !strings.Contains(body, `"store_failed_over"`) {
				ok = false
			}
		}
		if ok {
			break
		}
		if time.Now().After(deadline) {
			_, _, codes, _ := load.snapshot()
			t.Fatalf("the nodes do not all refuse with store_failed_over 60s after the fail-over; errors: %v", codes)
		}
		time.Sleep(100 * time.Millisecond)
	}
	refusedAt := time.Now()
	for _, n := range nodes {
		_, metrics, err := e2e.Get(ctx, n.URL("/metrics"))
		if err != nil || !strings.Contains(metrics, `idforge_store_failover_detected{key="order"} 1`) {
			t.Fatalf("metrics of a refusing node lack idforge_store_failover_detected 1: %v\n%s", err, grepLines(metrics, "failover"))
		}
	}
	_, dups, _, before := load.snapshot()
	if len(dups) > 0 {
		t.Fatalf("%d IDs issued twice across the fail-over, e.g. %v", len(dups), dups[:min(5, len(dups))])
	}

	// The operator repairs, with the floor the live nodes report.
	var from []string
	for _, n := range nodes {
		from = append(from, n.URL(""))
	}
	out, err := exec.Command(e2e.Binary(t), "keys", "repair", "--store", storeURL, "--data", t.TempDir(),
		"--from-nodes", strings.Join(from, ","), "--wait", "0s").CombinedOutput()
	if err != nil {
		t.Fatalf("idforge keys repair: %v\n%s", err, out)
	}
	t.Logf("idforge keys repair:\n%s", out)
	repairedAt := time.Now()
	load.mu.Lock()
	load.mark = repairedAt
	lastBefore := load.lastOK
	load.mu.Unlock()
	issued, _, _, _ := load.snapshot()
	load.waitForIDs(t, issued+2000, 60*time.Second)
	load.mu.Lock()
	resumedAt := load.resumed
	load.mu.Unlock()
	stop()
	wg.Wait()
	globalWG.Wait()

	total, dups, codes, _ := load.snapshot()
	if len(dups) > 0 {
		t.Fatalf("%d IDs issued twice over the run, e.g. %v", len(dups), dups[:min(5, len(dups))])
	}
	if codes["internal"] > 0 {
		t.Fatalf("internal errors: %v", codes)
	}
	load.mu.Lock()
	above := 0
	for v := range load.seen {
		if v > before {
			above++
		}
	}
	load.mu.Unlock()
	if above == 0 {
		t.Fatalf("nothing issued above %d after the repair", before)
	}
	t.Logf("%d IDs, none twice; errors by code: %v", total, codes)
	ops, ids := global.hist.Len()
	t.Logf("key in global order: %d requests returned %d IDs, %d failed; the longest time without an answer was %s (the fail-over to the end of the repair)",
		ops, ids, global.failed, global.gap.Round(time.Millisecond))
	if err := global.hist.Check(); err != nil {
		t.Fatalf("key in global order: %v", err)
	}
	t.Logf("availability: last ID before the refusal %s after the switch; all nodes refusing %s after it; "+
		"first ID %s after the repair finished (%s from the switch, the operator's time included)",
		lastBefore.Sub(switched).Round(time.Millisecond), refusedAt.Sub(switched).Round(time.Millisecond),
		resumedAt.Sub(repairedAt).Round(time.Millisecond), resumedAt.Sub(switched).Round(time.Millisecond))
}

// grepLines returns the lines of text that contain word.
func grepLines(text, word string) string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		if strings.Contains(line, word) {
			out = append(out, line)
		}
	}
	return fmt.Sprint(out)
}
