package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/idforge/idforge/internal/e2e"
	"github.com/idforge/idforge/internal/testsvc"
)

// serialConfig writes a config with a per-second Redis counter and a
// yyMMddHHmmss + counter serial, and returns its path.
func serialConfig(t *testing.T, counterURL string) string {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "idforge.toml")
	err := os.WriteFile(cfg, []byte(fmt.Sprintf(`
[[counters]]
name = "persec"
url = %q

[[serials]]
name = "bill"
template = "@{date:yyMMddHHmmss}@{seq:persec,width=4}"
`, counterURL)), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// fetchSerials gets serials over HTTP.
func fetchSerials(ctx context.Context, n *e2e.Node, name string, count int) ([]string, error) {
	var resp struct {
		Values []string `json:"values"`
	}
	status, body, err := e2e.Get(ctx, n.URL(fmt.Sprintf("/v1/serials/%s?count=%d", name, count)))
	if err != nil {
		return nil, err
	}
	if status != 200 {
		return nil, fmt.Errorf("%d %s", status, body)
	}
	if err := jsonUnmarshal(body, &resp); err != nil {
		return nil, err
	}
	return resp.Values, nil
}

// Three processes issue yyMMddHHmmss + per-second-counter serials from one
// Redis, with a cap of 200 a second: no serial twice, never more than 200
// in one second.
func TestSerialsAcrossProcesses(t *testing.T) {
	endToEnd(t, parallel)
	cfg := serialConfig(t, withParam(testsvc.Redis(t), "period=second&cap=200&over_cap=wait"))
	nodes := make([]*e2e.Node, 3)
	for i := range nodes {
		nodes[i] = e2e.StartNode(t, "--config", cfg, "--worker", strconv.Itoa(i+1))
	}
	var (
		mu   sync.Mutex
		seen = map[string]bool{}
		per  = map[string]int{}
		errs = make(chan error, 6)
		wg   sync.WaitGroup
	)
	deadline := time.Now().Add(2500 * time.Millisecond)
	for c := range 6 {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				values, err := fetchSerials(context.Background(), nodes[c%3], "bill", 7)
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				for _, v := range values {
					if seen[v] {
						mu.Unlock()
						errs <- fmt.Errorf("serial %s issued twice", v)
						return
					}
					seen[v] = true
					per[v[:12]]++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for second, n := range per {
		if n > 200 {
			t.Errorf("%d serials in second %s, over the cap of 200", n, second)
		}
	}
	t.Logf("%d serials over %d seconds", len(seen), len(per))
	if len(seen) < 300 {
		t.Fatalf("only %d serials: the test proved little", len(seen))
	}
}

// The clock goes an hour back under a per-second serial: the counter keeps
// counting in its newest second instead of reusing an old one, so nothing
// repeats. Killed and restarted, the node recovers the last number.
func TestSerialClockBackAndCrash(t *testing.T) {
	endToEnd(t, parallel)
	cfg := serialConfig(t, withParam(testsvc.Redis(t), "period=second&cap=5000&over_cap=refuse"))
	n := e2e.StartNode(t, "--config", cfg)
	ctx := context.Background()
	seen := map[string]bool{}
	var last string
	take := func(count int) {
		t.Helper()
		values, err := fetchSerials(ctx, n, "bill", count)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range values {
			if seen[v] {
				t.Fatalf("serial %s issued twice", v)
			}
			if v <= last {
				t.Fatalf("serial %s after %s: went backwards", v, last)
			}
			seen[v], last = true, v
		}
	}
	take(20)
	n.SetClock(-time.Hour)
	take(20) // still the newest second: no serial from an hour ago
	n.SetClock(0)
	take(20)
	n.Kill()
	if err := n.Restart(); err != nil {
		t.Fatal(err)
	}
	take(20)
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }

// A serial defined through the API on the embedded store survives a
// restart and is served by the real binary.
func TestSerialDefinedOverHTTP(t *testing.T) {
	endToEnd(t, parallel)
	n := e2e.StartNode(t)
	createKey(t, n, `{"key":"order","step":10}`)
	status, body, err := e2e.Do(context.Background(), "POST", n.URL("/v1/serials"),
		`{"name":"sn","template":"SN-@{seq:order,width=6}-@{checksum:mod,of=seq}"}`)
	if err != nil || status != 201 {
		t.Fatalf("POST /v1/serials: %d %s %v", status, body, err)
	}
	values, err := fetchSerials(context.Background(), n, "sn", 1)
	if err != nil || values[0] != "SN-000001-9" {
		t.Fatalf("sn = %v, %v", values, err)
	}
	if err := n.Terminate(); err != nil {
		t.Fatal(err)
	}
	if err := n.Restart(); err != nil {
		t.Fatal(err)
	}
	values, err = fetchSerials(context.Background(), n, "sn", 1)
	if err != nil || values[0] != "SN-000002-8" {
		t.Fatalf("sn after a restart = %v, %v; want the next one (the segment was handed back)", values, err)
	}
}
