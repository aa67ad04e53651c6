package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/idforge/idforge/internal/e2e"
	"github.com/idforge/idforge/internal/httpwire"
)

// gaplessLoad drives nodes with clients that reserve a number of a
// gapless serial on one node, then commit or void it on another, or
// vanish without either; it records what the nodes acknowledged.
type gaplessLoad struct {
	mu        sync.Mutex
	committed map[int64]int // number: acknowledged commits
	voided    map[int64]string
	reserved  int
}

func (l *gaplessLoad) run(ctx context.Context, nodes []*e2e.Node, serial string, clients int, voids bool) *sync.WaitGroup {
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			rnd := rand.New(rand.NewPCG(uint64(c), 7))
			for k := c; ctx.Err() == nil; k++ {
				var r httpwire.Reservation
				if !gaplessCall(ctx, nodes[k%len(nodes)], serial, "reserve", "", &r) {
					continue
				}
				l.mu.Lock()
				l.reserved++
				l.mu.Unlock()
				// Time for a SIGKILL between the reserve and the commit.
				time.Sleep(time.Duration(rnd.IntN(50)) * time.Millisecond)
				step, reason, other := "commit", "", nodes[(k+1)%len(nodes)]
				switch p := rnd.IntN(10); {
				case p == 0:
					continue // vanishes
				case p <= 2 && voids:
					step, reason = "void", fmt.Sprintf("cancelled by client %d", c)
				}
				body, _ := json.Marshal(httpwire.End{Reservation: r.Reservation, Reason: reason})
				var done httpwire.Reservation
				if gaplessCall(ctx, other, serial, step, string(body), &done) {
					l.mu.Lock()
					if step == "commit" {
						l.committed[r.Number]++
					} else {
						l.voided[r.Number] = reason
					}
					l.mu.Unlock()
				}
			}
		})
	}
	return &wg
}

// gaplessCall makes one step on n, reporting whether it was acknowledged.
func gaplessCall(ctx context.Context, n *e2e.Node, serial, step, body string, out any) bool {
	rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	status, resp, err := e2e.Do(rctx, "POST", n.URL("/v1/serials/"+serial+"/"+step), body)
	if err != nil || status != 200 {
		time.Sleep(10 * time.Millisecond) // a killed node: ask another
		return false
	}
	return json.Unmarshal([]byte(resp), out) == nil
}

// audit reads every number of serial from 1, a page at a time.
func audit(t *testing.T, n *e2e.Node, serial string) []httpwire.Reservation {
	t.Helper()
	var all []httpwire.Reservation
	for from := int64(1); ; {
		var a httpwire.Audit
		status, body, err := e2e.Get(context.Background(), n.URL(fmt.Sprintf("/v1/serials/%s/audit?from=%d", serial, from)))
		if err != nil || status != 200 || json.Unmarshal([]byte(body), &a) != nil {
			t.Fatalf("audit from %d: %d %s %v", from, status, body, err)
		}
		all = append(all, a.Numbers...)
		if a.To >= a.Last {
			return all
		}
		from = a.To + 1
	}
}

// Three real idforge nodes on MariaDB and on PostgreSQL serve a gapless
// serial to clients that reserve a number on one node, then commit or
// void it on another, or vanish, while nodes are killed with SIGKILL
// between the steps. Afterwards the audit lists every number from the
// first to the last exactly once, each acknowledged commit or void is
// there, no number was acknowledged committed twice, and nothing is left
// reserved past its expiry; with reuse_expired (no voids), once the
// expired numbers have been handed on, every number is committed.
func TestGaplessAcrossNodes(t *testing.T) {
	endToEnd(t, parallel)
	for _, db := range databases {
		if !slices.Contains([]string{"mariadb", "postgres"}, db.name) {
			continue
		}
		for _, reuse := range []bool{false, true} {
			t.Run(db.name+"/reuse="+strconv.FormatBool(reuse), func(t *testing.T) {
				t.Parallel()
				storeURL := db.fresh(t)
				migrate(t, storeURL)
				nodes := make([]*e2e.Node, 3)
				for i := range nodes {
					nodes[i] = e2e.StartNode(t, "--store", storeURL, "--worker", strconv.Itoa(i+1))
				}
				const expiry = 2 * time.Second
				def := fmt.Sprintf(`{"name":"inv","template":"INV-@{seq:n,width=6}","gapless":true,"reuse_expired":%t,"expiry":"%s"}`, reuse, expiry)
				if status, resp, err := e2e.Do(context.Background(), "POST", nodes[0].URL("/v1/serials"), def); err != nil || status != 201 {
					t.Fatalf("POST /v1/serials: %d %s %v", status, resp, err)
				}
				load := &gaplessLoad{committed: map[int64]int{}, voided: map[int64]string{}}
				ctx, stop := context.WithCancel(context.Background())
				wg := load.run(ctx, nodes, "inv", 6, !reuse)
				if err := e2e.KillInTurn(nodes, 4, 600*time.Millisecond); err != nil {
					stop()
					wg.Wait()
					t.Fatal(err)
				}
				for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
					load.mu.Lock()
					n := len(load.committed)
					load.mu.Unlock()
					if n >= 30 {
						break
					}
					if time.Now().After(deadline) {
						stop()
						wg.Wait()
						t.Fatalf("only %d commits in a minute after the faults", n)
					}
				}
				stop()
				wg.Wait()
				time.Sleep(expiry + 200*time.Millisecond) // every reservation left has expired

				if reuse {
					// Hand every expired number on: reserve and commit until
					// a reservation gets a new number.
					last := audit(t, nodes[0], "inv")
					top := int64(len(last))
					for i := 0; ; i++ {
						var r, done httpwire.Reservation
						if !gaplessCall(context.Background(), nodes[i%3], "inv", "reserve", "", &r) {
							t.Fatalf("reserve after the faults failed")
						}
						body, _ := json.Marshal(httpwire.End{Reservation: r.Reservation})
						if !gaplessCall(context.Background(), nodes[(i+1)%3], "inv", "commit", string(body), &done) {
							t.Fatalf("commit of %+v after the faults failed", r)
						}
						load.committed[r.Number]++
						if r.Number > top {
							break
						}
					}
				}
				all := audit(t, nodes[1], "inv")
				states := map[string]int{}
				for i, r := range all {
					states[r.State+" "+r.Reason]++
					switch {
					case r.Number != int64(i+1):
						t.Fatalf("audit[%d] is number %d: a number missing or listed twice", i, r.Number)
					case r.Value != fmt.Sprintf("INV-%06d", r.Number):
						t.Errorf("number %d rendered %q", r.Number, r.Value)
					case r.State == "reserved":
						t.Errorf("number %d still reserved after its expiry: %+v", r.Number, r)
					case load.committed[r.Number] > 1:
						t.Errorf("number %d acknowledged committed %d times", r.Number, load.committed[r.Number])
					case load.committed[r.Number] == 1 && r.State != "committed":
						t.Errorf("number %d was acknowledged committed, the audit says %+v", r.Number, r)
					case load.voided[r.Number] != "" && (r.State != "voided" || r.Reason != load.voided[r.Number]):
						t.Errorf("number %d was acknowledged voided (%s), the audit says %+v", r.Number, load.voided[r.Number], r)
					case reuse && r.State != "committed":
						t.Errorf("reuse_expired: number %d is %s (%s), committed numbers are not contiguous", r.Number, r.State, r.Reason)
					}
				}
				t.Logf("%d reservations acknowledged; the audit lists %d numbers: %v", load.reserved, len(all), states)
			})
		}
	}
}
