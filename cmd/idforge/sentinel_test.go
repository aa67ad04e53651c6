package main_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idforge/idforge/internal/e2e"
	"github.com/idforge/idforge/internal/testsvc"
)

// A Redis Sentinel fail-over with one replica, the primary killed after
// acknowledging INCRs the replica never saw, under three nodes issuing
// from an INCR source through the sentinels: no value twice, every
// request answered by its deadline, every error a documented 503; while
// the promoted replica has no replica of its own nothing is issued, and
// issuing resumes once one is back.
func TestSentinelFailoverOneReplica(t *testing.T) {
	endToEnd(t, parallel)
	primary := testsvc.StartRedisServer(t)
	link := e2e.StartProxy(t, primary.Addr()) // the replication link, held to lose writes
	replica := testsvc.StartRedisServer(t)
	replica.ReplicaOf(link.Addr())
	ss := testsvc.StartRedisSentinels(t, "idforge", primary.Addr(), 3)
	ss.WaitReplicas(t, 1)

	cfg := filepath.Join(t.TempDir(), "idforge.toml")
	os.WriteFile(cfg, []byte(fmt.Sprintf("[[sources]]\nname = \"orders\"\nurl = %q\n", ss.URL("redis+sentinel", "key=orders"))), 0o600)
	var nodes []*e2e.Node
	for i := range 3 {
		nodes = append(nodes, e2e.StartNode(t, "--config", cfg, "--worker", fmt.Sprint(i+1)))
	}

	// deadline is what a client waits for an answer, as the report of
	// the hang measured it: a call through the fail-over fails in about
	// a second (redisconn.FailFast); without those settings six calls
	// waited out go-redis's retries for close to 4s.
	const deadline = 3 * time.Second
	var (
		mu       sync.Mutex
		seen     = map[string]int{}
		codes    = map[string]int{}
		hung     []string
		slowest  time.Duration
		lastOK   time.Time
		requests int
	)
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for c := range 6 {
		wg.Go(func() {
			for ctx.Err() == nil {
				rctx, cancel := context.WithTimeout(context.Background(), deadline)
				start := time.Now()
				status, body, err := e2e.Get(rctx, nodes[c%3].URL("/v1/ids/orders"))
				took := time.Since(start)
				cancel()
				mu.Lock()
				requests++
				slowest = max(slowest, took)

				switch {
				case err != nil:
					hung = append(hung, fmt.Sprintf("node %d: no answer after %s: %v", c%3, took.Round(time.Millisecond), err))
				case status == http.StatusOK:
					id := between(body, `"ids":["`, `"`)
					seen[id]++
					lastOK = time.Now()
				default:
					codes[fmt.Sprintf("%d %s", status, between(body, `"code":"`, `"`))]++
				}
				mu.Unlock()
				if status != http.StatusOK {
					time.Sleep(20 * time.Millisecond)
				}
			}
		})
	}
	issued := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(seen)
	}
	waitUntil := func(what string, cond func() bool) {
		t.Helper()
		for end := time.Now().Add(60 * time.Second); !cond(); time.Sleep(50 * time.Millisecond) {
			if time.Now().After(end) {
				stop()
				wg.Wait()
				t.Fatalf("no %s within 60s (codes %v, hung %v)", what, codes, hung)
			}
		}
	}
	waitUntil("values issued", func() bool { return issued() >= 200 })
	link.Hold() // INCRs from now on are acknowledged by the primary only
	time.Sleep(time.Second)
	primary.Kill()
	waitUntil("fail-over to the replica", func() bool { return ss.MasterAddr() == replica.Addr() })
	time.Sleep(3 * time.Second) // the promoted replica has no replica: nothing is issued
	mu.Lock()
	before := lastOK
	mu.Unlock()
	testsvc.StartRedisServer(t).ReplicaOf(replica.Addr())
	waitUntil("issuing once a replica is back", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return lastOK.After(before) && len(seen) > 0
	})
	stop()
	wg.Wait()

	mu.Lock()
	defer mu.Unlock()
	t.Logf("%d requests, %d values, errors %v, slowest answer %s", requests, len(seen), codes, slowest.Round(time.Millisecond))
	for id, n := range seen {
		if n > 1 {
			t.Errorf("value %s issued %d times", id, n)
		}
	}
	if len(hung) > 0 {
		sort.Strings(hung)
		t.Errorf("%d requests got no answer within %s:\n%s", len(hung), deadline, strings.Join(hung, "\n"))
	}
	for code := range codes {
		if code != "503 unavailable" && code != "503 timeout" {
			t.Errorf("error %s; want only 503 unavailable or timeout", code)
		}
	}
}
