package main_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/idforge/idforge/internal/e2e"
	"github.com/idforge/idforge/internal/testsvc"
)

// waitReady polls /readyz until it answers want with a body holding
// every fragment, or fails the test after a generous deadline.
func waitReady(t *testing.T, n *e2e.Node, want int, fragments ...string) {
	t.Helper()
	var status int
	var body string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		status, body, _ = e2e.Get(context.Background(), n.URL("/readyz"))
		ok := status == want
		for _, f := range fragments {
			ok = ok && strings.Contains(body, f)
		}
		if ok {
			return
		}
	}
	t.Fatalf("/readyz kept answering %d %s; want %d with %q", status, body, want, fragments)
}

// Leaf takes a node out of service while its clock runs behind what it
// issued: /readyz answers 503 with the reason while the snowflake
// generator refuses (the clock behind beyond the allowed wait, or the
// worker ID's lease lost), so that a load balancer routes around the
// node, and 200 again by itself once it issues.
func TestReadyzWhileSnowflakeRefuses(t *testing.T) {
	endToEnd(t, parallel)
	t.Run("clock", func(t *testing.T) {
		n := e2e.StartNode(t)
		createKey(t, n, `{"key":"msg","strategy":"snowflake"}`)
		if _, err := e2e.FetchID(context.Background(), n.URL("/api/snowflake/get/msg")); err != nil {
			t.Fatal(err)
		}
		waitReady(t, n, http.StatusOK, `"status":"ready"`)
		n.SetClock(-2 * time.Second)
		waitReady(t, n, http.StatusServiceUnavailable, `"status":"unavailable"`, `"snowflake":"idforge: clock moved backwards`)
		n.SetClock(0)
		waitReady(t, n, http.StatusOK, `"status":"ready"`)
	})
	t.Run("lease", func(t *testing.T) {
		redisURL := testsvc.Redis(t)
		redis := e2e.StartProxy(t, strings.Split(redisURL, "/")[2])
		workerURL := withParam(viaProxy(t, redisURL, redis), "ttl="+leaseTTL.String())
		n := e2e.StartNode(t, "--worker", workerURL)
		waitReady(t, n, http.StatusOK, `"status":"ready"`)
		redis.Cut() // no renewal reaches Redis: the lease lapses
		waitReady(t, n, http.StatusServiceUnavailable, `"status":"unavailable"`, `"snowflake":"idforge: worker ID lease lost`)
		redis.Restore()
		waitReady(t, n, http.StatusOK, `"status":"ready"`)
	})
}
