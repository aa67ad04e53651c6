package main_test

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/idforge/idforge/internal/e2e"
)

// globalLoad drives nodes with concurrent clients asking for IDs of a key
// in global order, over the JSON API and Leaf's endpoint, and records
// when each request began and ended with the IDs it returned.
type globalLoad struct {
	hist e2e.History
	mu   sync.Mutex
	// gap is the longest time no request succeeded anywhere; lastOK is
	// when one last did.
	lastOK time.Time
	gap    time.Duration
	failed int
}

func (l *globalLoad) run(ctx context.Context, nodes []*e2e.Node, key string, clients int) *sync.WaitGroup {
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			for k := c; ctx.Err() == nil; k++ {
				n := nodes[k%len(nodes)]
				// A paused node answers nothing: the client gives up, as
				// a real one would, and asks another.
				rctx, cancel := context.WithTimeout(ctx, time.Second)
				began := time.Now()
				var ids []int64
				var err error
				if k%3 == 0 {
					var id int64
					id, err = e2e.FetchID(rctx, n.URL("/api/segment/get/"+key))
					ids = []int64{id}
				} else {
					ids, err = e2e.FetchIDs(rctx, n.URL("/v1/ids/"+key+"?count="+strconv.Itoa(1+k%4)))
				}
				ended := time.Now()
				cancel()
				if ctx.Err() != nil {
					return
				}
				l.record(began, ended, ids, err)
				if err != nil {
					time.Sleep(10 * time.Millisecond)
				}
			}
		})
	}
	return &wg
}

func (l *globalLoad) record(began, ended time.Time, ids []int64, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		l.failed++
		return
	}
	l.hist.Add(began, ended, ids)
	if !l.lastOK.IsZero() {
		l.gap = max(l.gap, ended.Sub(l.lastOK))
	}
	l.lastOK = ended
}

// Three real idforge nodes on MariaDB and on PostgreSQL serve a key in
// global order to concurrent clients while the nodes are killed with
// SIGKILL and restarted, and paused with SIGSTOP and resumed. Over the
// whole history, every request's IDs are all greater than those of every
// request that ended before it began, and no ID is issued twice.
func TestGlobalOrderAcrossNodes(t *testing.T) {
	endToEnd(t, parallel)
	for _, db := range databases {
		if !slices.Contains([]string{"mariadb", "postgres"}, db.name) {
			continue
		}
		t.Run(db.name, func(t *testing.T) {
			t.Parallel()
			storeURL := db.fresh(t)
			migrate(t, storeURL)
			nodes := make([]*e2e.Node, 3)
			for i := range nodes {
				nodes[i] = e2e.StartNode(t, "--store", storeURL, "--worker", strconv.Itoa(i+1))
			}
			createKey(t, nodes[0], `{"key":"tx","order":"global","step":10}`)

			var load globalLoad
			ctx, stop := context.WithCancel(context.Background())
			defer stop()
			wg := load.run(ctx, nodes, "tx", 9)
			for round := range 6 {
				time.Sleep(700 * time.Millisecond)
				victim := nodes[round%len(nodes)]
				if round%2 == 0 {
					victim.Kill()
					time.Sleep(100 * time.Millisecond)
					if err := victim.Restart(); err != nil {
						stop()
						wg.Wait()
						t.Fatal(err)
					}
				} else {
					victim.Pause()
					time.Sleep(700 * time.Millisecond)
					victim.Resume()
				}
			}
			// Enough requests to prove something, however busy the machine.
			for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
				if ops, _ := load.hist.Len(); ops >= 300 {
					break
				}
				if time.Now().After(deadline) {
					stop()
					wg.Wait()
					ops, _ := load.hist.Len()
					t.Fatalf("only %d requests succeeded in a minute after the faults: too few to prove anything", ops)
				}
			}
			stop()
			wg.Wait()

			ops, ids := load.hist.Len()
			t.Logf("%d requests returned %d IDs, %d failed (nodes down or paused); the longest time without any answer was %s",
				ops, ids, load.failed, load.gap.Round(time.Millisecond))
			if err := load.hist.Check(); err != nil {
				t.Fatal(err)
			}
		})
	}
}
