package zookeeper_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/e2e"
	"github.com/idforge/idforge/internal/testsvc"
	"github.com/idforge/idforge/worker"
	"github.com/idforge/idforge/worker/workertest"
	"github.com/idforge/idforge/worker/zookeeper"
)

// shiftedClock is the system clock moved by an offset.
type shiftedClock time.Duration

func (c shiftedClock) Now() time.Time        { return time.Now().Add(time.Duration(c)) }
func (c shiftedClock) Sleep(d time.Duration) { time.Sleep(d) }

// open returns the provider of rawURL, with a quiet logger unless opts
// has one.
func open(t *testing.T, rawURL string, opts worker.Options) *zookeeper.Provider {
	t.Helper()
	return workertest.Open(t, rawURL, opts).(*zookeeper.Provider)
}

// children lists a directory of the provider's tree, sorted; nil when
// it does not exist.
func children(t *testing.T, p *zookeeper.Provider, dir string) []string {
	t.Helper()
	c, _, err := testsvc.ZooKeeperConn(t).Children(p.Base() + dir)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(c)
	return c
}

func get(t *testing.T, path string) ([]byte, *zk.Stat) {
	t.Helper()
	b, st, err := testsvc.ZooKeeperConn(t).Get(path)
	if err != nil {
		t.Fatalf("get %s: %v", path, err)
	}
	return b, st
}

func leafJSON(ip, port string, ms int64) []byte {
	return fmt.Appendf(nil, `{"ip":%q,"port":%q,"timestamp":%d}`, ip, port, ms)
}

func TestOpen(t *testing.T) {
	tests := []struct {
		name  string
		url   string
		owner string
		base  string
		err   bool
	}{
		{"defaults", "zk://127.0.0.1:2181", "10.0.0.1:8080", "/snowflake/idforge", false},
		{"name and parameters", "zookeeper://h1:2181,h2:2182/leaf?session_timeout=6s&max_drift=1s&dial_timeout=1s", "10.0.0.1:8080", "/snowflake/leaf", false},
		{"ipv6 owner", "zk://h1/leaf", "[fd00::1]:8080", "/snowflake/leaf", false},
		{"no owner", "zk://h1/leaf", "", "", true},
		{"owner without port", "zk://h1/leaf", "10.0.0.1", "", true},
		{"nested name", "zk://h1/a/b", "10.0.0.1:8080", "", true},
		{"bad duration", "zk://h1/leaf?max_drift=5", "10.0.0.1:8080", "", true},
		{"unknown parameter", "zk://h1/leaf?sesion_timeout=5s", "10.0.0.1:8080", "", true},
		{"no host", "zk:///leaf", "10.0.0.1:8080", "", true},
		{"empty host", "zk://h1,,h2/leaf", "10.0.0.1:8080", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, err := url.Parse(tt.url)
			if err != nil {
				t.Fatal(err)
			}
			p, err := zookeeper.Open(u, worker.Options{Owner: tt.owner})
			if tt.err {
				if !errors.Is(err, idforge.ErrInvalidArgument) {
					t.Fatalf("Open = %v, want ErrInvalidArgument", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Base() != tt.base {
				t.Fatalf("Base %q, want %q", p.Base(), tt.base)
			}
		})
	}
}

// Both schemes are registered, and the password never shows.
func TestRegistryAndRedaction(t *testing.T) {
	for _, scheme := range []string{"zk", "zookeeper"} {
		p, err := worker.Open(context.Background(), scheme+"://leaf:s3cret@127.0.0.1:1/x?dial_timeout=100ms", worker.Options{Owner: "10.0.0.1:8080"})
		if err != nil {
			t.Fatal(err)
		}
		if d := p.Describe(); strings.Contains(d, "s3cret") || !strings.HasPrefix(d, scheme+"://leaf:") {
			t.Fatalf("Describe = %q", d)
		}
		if _, err := p.Acquire(context.Background(), 3); err == nil || strings.Contains(err.Error(), "s3cret") {
			t.Fatalf("Acquire error %v", err)
		}
	}
}

func TestConformance(t *testing.T) {
	t.Parallel()
	workertest.Run(t, workertest.Fixture{
		Namespace: func(t *testing.T) workertest.Namespace {
			u := testsvc.ZooKeeper(t)
			return workertest.Namespace{Open: func(t *testing.T, opts worker.Options) worker.Provider {
				return open(t, u, opts)
			}}
		},
		Exhausted: "never reused",
		Down: func(t *testing.T, opts worker.Options) (worker.Provider, string) {
			p := open(t, down, opts)
			return p, p.Describe()
		},
	})
}

// down is a ZooKeeper URL nobody answers at.
const down = "zk://127.0.0.1:1/idforge?dial_timeout=200ms"

// Release writes the newest reported time into the forever node and
// deletes the temporary node; the worker ID stays bound to the owner.
func TestRelease(t *testing.T) {
	t.Parallel()
	u := testsvc.ZooKeeper(t)
	a := open(t, u, worker.Options{Owner: "10.0.0.1:8080"})
	workertest.Acquire(t, open(t, u, worker.Options{Owner: "10.0.0.2:8080"}), 31)
	l := workertest.Acquire(t, a, 31)
	reported := time.Now().Add(300 * time.Millisecond).UnixMilli()
	l.Report(time.UnixMilli(reported - 100))
	l.Report(time.UnixMilli(reported))
	if err := l.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := children(t, a, "/temporary"); len(got) != 1 || got[0] != "10.0.0.2:8080" {
		t.Fatalf("temporary nodes after a's Release: %v", got)
	}
	b, _ := get(t, fmt.Sprintf("%s/forever/10.0.0.1:8080-%010d", a.Base(), l.ID()))
	if want := leafJSON("10.0.0.1", "8080", reported); !bytes.Equal(b, want) {
		t.Fatalf("forever node %s, want %s", b, want)
	}
}

// An owner refused for exhaustion leaves no nodes behind.
func TestExhaustionLeavesNoNodes(t *testing.T) {
	t.Parallel()
	u := testsvc.ZooKeeper(t)
	workertest.Acquire(t, open(t, u, worker.Options{Owner: "10.0.0.1:8080"}), 0)
	p := open(t, u, worker.Options{Owner: "10.0.0.3:8080"})
	if _, err := p.Acquire(context.Background(), 0); !errors.Is(err, idforge.ErrWorkersExhausted) {
		t.Fatalf("second owner: %v, want ErrWorkersExhausted", err)
	}
	for _, dir := range []string{"/forever", "/temporary"} {
		for _, c := range children(t, p, dir) {
			if strings.HasPrefix(c, "10.0.0.3:8080") {
				t.Errorf("the refused owner left %s%s/%s behind", p.Base(), dir, c)
			}
		}
	}
}

// The nodes are named and filled as Leaf names and fills them, and a host
// that Leaf registered keeps its worker ID.
func TestLeafLayout(t *testing.T) {
	t.Parallel()
	u := testsvc.ZooKeeper(t)
	p := open(t, u, worker.Options{Owner: "10.0.0.5:8080"})
	before := time.Now().UnixMilli()
	l := workertest.Acquire(t, p, 1023)
	if l.ID() != 0 {
		t.Fatalf("first ID %d", l.ID())
	}
	if got := children(t, p, "/forever"); len(got) != 1 || got[0] != "10.0.0.5:8080-0000000000" {
		t.Fatalf("forever nodes %v", got)
	}
	if got := children(t, p, "/temporary"); len(got) != 1 || got[0] != "10.0.0.5:8080" {
		t.Fatalf("temporary nodes %v", got)
	}
	for _, path := range []string{p.Base() + "/forever/10.0.0.5:8080-0000000000", p.Base() + "/temporary/10.0.0.5:8080"} {
		b, st := get(t, path)
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s: %q: %v", path, b, err)
		}
		ts, ok := m["timestamp"].(float64)
		if len(m) != 3 || m["ip"] != "10.0.0.5" || m["port"] != "8080" || !ok || int64(ts) < before || int64(ts) > time.Now().UnixMilli() {
			t.Fatalf("%s holds %s, want Leaf's {ip, port, timestamp}", path, b)
		}
		if ephemeral := st.EphemeralOwner != 0; ephemeral != strings.Contains(path, "/temporary/") {
			t.Fatalf("%s: ephemeral %v", path, ephemeral)
		}
	}

	// Leaf registered 10.0.0.6:8081 as 1 and wrote its time.
	conn := testsvc.ZooKeeperConn(t)
	leafTime := time.Now().Add(-time.Minute).UnixMilli()
	path, err := conn.Create(p.Base()+"/forever/10.0.0.6:8081-", leafJSON("10.0.0.6", "8081", leafTime), zk.FlagSequence, zk.WorldACL(zk.PermAll))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(path, "-0000000001") {
		t.Fatalf("created %s", path)
	}
	leaf := workertest.Acquire(t, open(t, u, worker.Options{Owner: "10.0.0.6:8081"}), 1023)
	if leaf.ID() != 1 || leaf.LastTime().UnixMilli() != leafTime {
		t.Fatalf("Leaf's host got %d with LastTime %v, want 1 and its %d", leaf.ID(), leaf.LastTime(), leafTime)
	}
}

// Leaf's first check: a clock behind the time this node last reported.
func TestOwnReportClockCheck(t *testing.T) {
	t.Parallel()
	u := testsvc.ZooKeeper(t)
	p := open(t, u, worker.Options{Owner: "10.0.0.1:8080"})
	l := workertest.Acquire(t, p, 31)
	l.Release(context.Background())
	future := time.Now().Add(time.Hour).UnixMilli()
	node := fmt.Sprintf("%s/forever/10.0.0.1:8080-%010d", p.Base(), l.ID())
	if _, err := testsvc.ZooKeeperConn(t).Set(node, leafJSON("10.0.0.1", "8080", future), -1); err != nil {
		t.Fatal(err)
	}
	_, err := p.Acquire(context.Background(), 31)
	if !errors.Is(err, idforge.ErrClockMovedBackwards) || !strings.Contains(err.Error(), "behind the time this node last reported") {
		t.Fatalf("Acquire = %v, want ErrClockMovedBackwards", err)
	}
	if got := children(t, p, "/temporary"); len(got) != 0 {
		t.Fatalf("refused node left temporary nodes %v", got)
	}
	// Once the clock has passed the reported time, the node starts.
	ok := workertest.Acquire(t, open(t, u, worker.Options{Owner: "10.0.0.1:8080", Clock: shiftedClock(2 * time.Hour)}), 31)
	if ok.ID() != l.ID() || ok.LastTime().UnixMilli() != future {
		t.Fatalf("got %d last %v", ok.ID(), ok.LastTime())
	}
}

// Leaf's second check: the clock against the average of the live peers.
func TestPeersClockCheck(t *testing.T) {
	t.Parallel()
	u := testsvc.ZooKeeper(t)
	conn := testsvc.ZooKeeperConn(t)
	peer := workertest.Acquire(t, open(t, u, worker.Options{Owner: "10.0.0.1:8080"}), 31)
	_ = peer

	p := open(t, u+"?max_drift=2s", worker.Options{Owner: "10.0.0.2:8080", Clock: shiftedClock(time.Minute)})
	_, err := p.Acquire(context.Background(), 31)
	if !errors.Is(err, idforge.ErrClockMovedBackwards) || !strings.Contains(err.Error(), "ahead of the average clock of 1 live peers") {
		t.Fatalf("clock a minute ahead: %v", err)
	}
	if got := children(t, p, "/forever"); len(got) != 1 {
		t.Fatalf("the refused node took an ID: %v", got)
	}

	// A fake peer reports a time an hour behind: the average (of the
	// real peer and it) is half an hour behind this node's clock.
	fake := p.Base() + "/temporary/10.0.0.9:8080"
	if _, err := conn.Create(fake, leafJSON("10.0.0.9", "8080", time.Now().Add(-time.Hour).UnixMilli()), zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Delete(fake, -1) })
	q := open(t, u, worker.Options{Owner: "10.0.0.3:8080"})
	_, err = q.Acquire(context.Background(), 31)
	if !errors.Is(err, idforge.ErrClockMovedBackwards) || !strings.Contains(err.Error(), "ahead of the average clock of 2 live peers") {
		t.Fatalf("peer an hour behind: %v", err)
	}
	if got := children(t, p, "/temporary"); len(got) != 2 {
		t.Fatalf("temporary nodes %v, want the two peers' only", got)
	}
	conn.Delete(fake, -1)
	// Within max_drift of the live peers, the node starts.
	workertest.Acquire(t, q, 31)
}

// Leaf's first check also holds for a node resuming from the cache: a
// clock behind the time it last recorded refuses to start.
func TestResumeClockCheck(t *testing.T) {
	t.Parallel()
	const owner = "10.0.0.1:8080"
	dir := t.TempDir()
	p := open(t, down, worker.Options{Owner: owner, DataDir: dir})
	worker.NewCache(dir, p.Describe(), owner).Save(4, time.Time{}, time.Now().Add(time.Minute))
	_, err := p.Acquire(context.Background(), 7)
	if !errors.Is(err, idforge.ErrClockMovedBackwards) {
		t.Fatalf("Acquire = %v, want ErrClockMovedBackwards", err)
	}
}

// A node restarting while ZooKeeper is down resumes its cached ID, and
// its reports reach ZooKeeper once it is back.
func TestResumeThenReport(t *testing.T) {
	t.Parallel()
	u := testsvc.ZooKeeper(t)
	parsed, _ := url.Parse(u)
	proxy := e2e.StartProxy(t, parsed.Host)
	viaProxy := "zk://" + proxy.Addr() + parsed.Path + "?dial_timeout=300ms"
	const owner = "10.0.0.7:8080"
	dir := t.TempDir()

	first := workertest.Acquire(t, open(t, viaProxy, worker.Options{Owner: owner, DataDir: dir}), 31)
	if err := first.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, worker.CacheFile)); err != nil {
		t.Fatalf("the cache is gone after Release: %v", err)
	}

	proxy.Cut()
	var logs workertest.LogBuffer
	p := open(t, viaProxy, worker.Options{Owner: owner, DataDir: dir, Logger: logs.Logger()})
	l := workertest.Acquire(t, p, 31)
	if l.ID() != first.ID() {
		t.Fatalf("resumed %d, cached %d", l.ID(), first.ID())
	}
	if !strings.Contains(logs.String(), "resuming the cached worker ID") {
		t.Fatalf("log:\n%s", logs.String())
	}
	if got := children(t, p, "/temporary"); len(got) != 0 {
		t.Fatalf("temporary nodes while cut off: %v", got)
	}
	proxy.Restore()
	reported := time.Now().UnixMilli()
	l.Report(time.UnixMilli(reported))
	workertest.WaitFor(t, "the resumed node reports to ZooKeeper", 3*zookeeper.ReportInterval, func() bool {
		got := children(t, p, "/temporary")
		return len(got) == 1 && got[0] == owner
	})
	var s struct{ Timestamp int64 }
	b, _ := get(t, fmt.Sprintf("%s/forever/%s-%010d", p.Base(), owner, l.ID()))
	if err := json.Unmarshal(b, &s); err != nil || s.Timestamp < reported {
		t.Fatalf("forever node %s, want a timestamp from %d on", b, reported)
	}
}
