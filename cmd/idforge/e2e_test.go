package main_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idforge/idforge/internal/e2e"
)

func TestMain(m *testing.M) { os.Exit(e2e.Main(m)) }

// How an end-to-end test shares the machine.
const (
	// alone: the test measures or moves time and wants the machine.
	alone = false
	// parallel: the test mostly waits (on leases, restarts, sleeps) and
	// runs beside the others.
	parallel = true
)

// endToEnd marks an end-to-end test: skipped with -short, and run in
// parallel with the others when it mostly waits.
func endToEnd(t *testing.T, par bool) {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end test")
	}
	if par {
		t.Parallel()
	}
}

func createKey(t *testing.T, n *e2e.Node, body string) {
	t.Helper()
	status, resp, err := e2e.Do(context.Background(), "POST", n.URL("/v1/keys"), body)
	if err != nil || status != 201 {
		t.Fatalf("POST /v1/keys %s: %d %s %v", body, status, resp, err)
	}
}

// The real binary is killed with SIGKILL while clients hammer it, and
// restarted on the same data directory, three times over; once it is also
// frozen with SIGSTOP. No ID is ever issued twice, every client sees its
// IDs strictly increase, and the first segment IDs after each restart are
// above every ID issued before it.
func TestKillDashNineMidLoad(t *testing.T) {
	endToEnd(t, alone)
	n := e2e.StartNode(t)
	createKey(t, n, `{"key":"order","step":50}`)
	createKey(t, n, `{"key":"msg","strategy":"snowflake"}`)

	segAll, snowAll := e2e.NewLedger(), e2e.NewLedger()
	fetchSegment := func(ctx context.Context, c int) ([]int64, error) {
		if c%2 == 0 {
			id, err := e2e.FetchID(ctx, n.URL("/api/segment/get/order"))
			return []int64{id}, err
		}
		return e2e.FetchIDs(ctx, n.URL(fmt.Sprintf("/v1/ids/order?count=%d", 1+c)))
	}
	fetchSnowflake := func(ctx context.Context, c int) ([]int64, error) {
		if c%2 == 0 {
			id, err := e2e.FetchID(ctx, n.URL("/api/snowflake/get/msg"))
			return []int64{id}, err
		}
		return e2e.FetchIDs(ctx, n.URL(fmt.Sprintf("/v1/ids/msg?count=%d", 1+c)))
	}

	const rounds = 3
	var prevMax int64 // the largest segment ID of the rounds before
	for round := range rounds + 1 {
		seg, snow := e2e.NewLedger(), e2e.NewLedger()
		ctx, stop := context.WithCancel(context.Background())
		done := make(chan struct{}, 4)
		drive := func(l, all *e2e.Ledger, fetch func(context.Context, int) ([]int64, error)) {
			e2e.Drive(ctx, l, 4, func(ctx context.Context, c int) ([]int64, error) {
				ids, err := fetch(ctx, c)
				if err == nil {
					all.Add(c, ids...)
				}
				return ids, err
			})
			done <- struct{}{}
		}
		go drive(seg, segAll, fetchSegment)
		go drive(snow, snowAll, fetchSnowflake)

		// Load runs for a while, and at least until both strategies have
		// answered: on a loaded machine the restarted binary may take
		// longer than the pause to serve its first request.
		time.Sleep(400 * time.Millisecond)
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			segIDs, _ := seg.Counts()
			snowIDs, _ := snow.Counts()
			if segIDs > 0 && snowIDs > 0 {
				break
			}
		}
		if round == 1 {
			n.Pause()
			time.Sleep(300 * time.Millisecond)
			n.Resume()
			time.Sleep(200 * time.Millisecond)
		}
		if round < rounds {
			n.Kill() // mid-load: requests in flight, segments half used
		}
		stop()
		<-done
		<-done

		segIDs, segFailed := seg.Counts()
		snowIDs, _ := snow.Counts()
		t.Logf("round %d: %d segment IDs, %d snowflake IDs, %d failed requests", round, segIDs, snowIDs, segFailed)
		if segIDs == 0 || snowIDs == 0 {
			t.Fatalf("round %d issued nothing:\n%s", round, n.Logs())
		}
		if round > 0 {
			// segAll holds everything before this round; seg this round.
			first := seg.All()[0]
			if first <= prevMax {
				t.Fatalf("round %d: segment ID %d after restart, not above %d issued before", round, first, prevMax)
			}
		}
		prevMax = seg.Max()
		if round < rounds {
			if err := n.Restart(); err != nil {
				t.Fatal(err)
			}
		}
	}
	for name, l := range map[string]*e2e.Ledger{"segment": segAll, "snowflake": snowAll} {
		if err := l.CheckUnique(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if err := l.CheckIncreasing(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// A second process on a data directory in use is refused with a message
// that says so, whether it is another server or the CLI.
func TestDataDirectoryIsExclusive(t *testing.T) {
	endToEnd(t, alone)
	n := e2e.StartNode(t)
	for _, args := range [][]string{
		{"serve", "--data", n.Data, "--http", "127.0.0.1:0"},
		{"next", "anything", "--data", n.Data},
		{"keys", "list", "--data", n.Data},
	} {
		out, err := exec.Command(e2e.Binary(t), args...).CombinedOutput()
		if err == nil {
			t.Fatalf("%v succeeded on a locked data directory:\n%s", args, out)
		}
		if !strings.Contains(string(out), "locked by another process") || !strings.Contains(string(out), "process ") {
			t.Errorf("%v: message does not explain the lock:\n%s", args, out)
		}
	}
}

// The time fence in the data directory protects a restart from a clock that
// is behind the time the node last issued at.
func TestRestartWithClockBehindFence(t *testing.T) {
	endToEnd(t, alone)
	n := e2e.StartNode(t)
	createKey(t, n, `{"key":"msg","strategy":"snowflake"}`)
	if err := n.Terminate(); err != nil {
		t.Fatal(err)
	}
	fence := filepath.Join(n.Data, "snowflake-time")

	// The fence says this node issued IDs an hour from now: the clock has
	// been set back (or was far ahead before). Refuse, and say why.
	ahead := time.Now().Add(time.Hour).UnixMilli()
	os.WriteFile(fence, []byte(strconv.FormatInt(ahead, 10)+"\n"), 0o640)
	err := n.Restart()
	if err == nil {
		t.Fatal("started with the clock an hour behind the fence")
	}
	if !strings.Contains(err.Error(), "clock moved backwards") {
		t.Fatalf("refusal does not name the cause: %v", err)
	}

	// Slightly behind, as after a crash within the fence window: wait,
	// then issue only above the fence.
	ahead = time.Now().Add(1500 * time.Millisecond).UnixMilli()
	os.WriteFile(fence, []byte(strconv.FormatInt(ahead, 10)+"\n"), 0o640)
	if err := n.Restart(); err != nil {
		t.Fatal(err)
	}
	id, err := e2e.FetchID(context.Background(), n.URL("/api/snowflake/get/msg"))
	if err != nil {
		t.Fatal(err)
	}
	_, body, err := e2e.Get(context.Background(), n.URL(fmt.Sprintf("/v1/explain/%d", id)))
	if err != nil {
		t.Fatal(err)
	}
	ms, err := strconv.ParseInt(between(body, `"unix_ms":`, `,`), 10, 64)
	if err != nil {
		t.Fatalf("explain: %s", body)
	}
	if ms <= ahead {
		t.Fatalf("issued an ID at %d ms, not after the fence at %d ms", ms, ahead)
	}
}

func between(s, from, to string) string {
	i := strings.Index(s, from)
	if i < 0 {
		return ""
	}
	s = s[i+len(from):]
	if j := strings.Index(s, to); j >= 0 {
		return s[:j]
	}
	return s
}

// A graceful stop writes the exact last issued time, so the next start
// needs no wait and segment IDs carry on above the old ones.
func TestGracefulShutdown(t *testing.T) {
	endToEnd(t, alone)
	n := e2e.StartNode(t)
	createKey(t, n, `{"key":"order","step":10,"start":1000}`)
	before, err := e2e.FetchIDs(context.Background(), n.URL("/v1/ids/order?count=25"))
	if err != nil {
		t.Fatal(err)
	}
	if before[0] != 1000 {
		t.Fatalf("first ID %d, want the start 1000", before[0])
	}
	if err := n.Terminate(); err != nil {
		t.Fatalf("SIGTERM: %v\n%s", err, n.Logs())
	}
	if !strings.Contains(n.Logs(), "msg=stopped") {
		t.Fatalf("no clean stop in the logs:\n%s", n.Logs())
	}
	if err := n.Restart(); err != nil {
		t.Fatal(err)
	}
	after, err := e2e.FetchID(context.Background(), n.URL("/api/segment/get/order"))
	if err != nil {
		t.Fatal(err)
	}
	if after <= before[len(before)-1] {
		t.Fatalf("after restart got %d, not above %d", after, before[len(before)-1])
	}
}

// Layouts carry an expiry date: start-up refuses past it and warns within
// a year of it.
func TestLayoutExpiryAtStartup(t *testing.T) {
	endToEnd(t, alone)
	// 25 bits of seconds last 388 days.
	layout := func(epoch time.Time) string {
		return fmt.Sprintf("time:25,worker:10,sequence:28,unit=1s,epoch=%d", epoch.UnixMilli())
	}
	expired := e2e.NewNode(t, "--layout", layout(time.Now().Add(-400*24*time.Hour)))
	err := expired.Start()
	if err == nil || !strings.Contains(err.Error(), "run out of time bits") {
		t.Fatalf("an expired layout was not refused clearly: %v", err)
	}
	soon := e2e.StartNode(t, "--layout", layout(time.Now().Add(-200*24*time.Hour)))
	if logs := soon.Logs(); !strings.Contains(logs, "level=WARN") || !strings.Contains(logs, "expire") {
		t.Fatalf("no warning for a layout expiring within a year:\n%s", logs)
	}
}
