package compose_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/idforge/idforge/internal/e2e"
	"github.com/idforge/idforge/internal/testsvc"
	"github.com/idforge/idforge/sequence/compose"
	_ "github.com/idforge/idforge/sequence/redis" // redis:// sources
)

// sourceURL names counter key on the Redis server at base. The client
// fails fast (no retries of its own, short timeouts), so that the
// Balanced sees a dead server at once instead of after go-redis's
// back-off.
func sourceURL(base, key string) string {
	return base + "?key=" + key + "&max_retries=-1&dial_timeout=500ms&read_timeout=2s&write_timeout=2s"
}

// maxByIndex tracks, per source index, the largest source value issued.
type maxByIndex struct {
	bits uint
	max  []atomic.Int64
	n    []atomic.Int64
}

func newMaxByIndex(bits uint) *maxByIndex {
	return &maxByIndex{bits: bits, max: make([]atomic.Int64, 1<<bits), n: make([]atomic.Int64, 1<<bits)}
}

func (m *maxByIndex) see(id int64) {
	v, i := id>>m.bits, id&(1<<m.bits-1)
	m.n[i].Add(1)
	for {
		cur := m.max[i].Load()
		if v <= cur || m.max[i].CompareAndSwap(cur, v) {
			return
		}
	}
}

// Four counters on two throwaway Redis servers. One server is killed
// (SIGKILL) under load: callers see no error, issuing continues on the
// other two counters. The server comes back empty on the same port: the
// Redis sources refuse the missing keys (sequence.ErrCounterLost, not a
// restart at 1) until the test, as the operator, re-creates each key at
// the largest value issued from it; after RescueAfter the sources are
// admitted again and their values reappear. No ID repeats in the run.
func TestBalancedRedisKillRestart(t *testing.T) {
	a := testsvc.StartRedisServer(t)
	b := testsvc.StartRedisServer(t)
	urls := []string{
		sourceURL(a.URL(), "k0"), sourceURL(a.URL(), "k1"),
		sourceURL(b.URL(), "k0"), sourceURL(b.URL(), "k1"),
	}
	const rescue = 300 * time.Millisecond
	ctx := context.Background()
	bal, err := compose.OpenBalanced(ctx, urls, compose.BalancedOptions{RescueAfter: rescue, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer bal.Close()

	seen := newMaxByIndex(bal.Bits())
	l := startLoad(bal, 8, seen.see)
	waitFor(t, "values from every source", func() bool {
		for i := range seen.n {
			if seen.n[i].Load() < 200 {
				return false
			}
		}
		return true
	})

	b.Kill()
	waitFor(t, "sources 2 and 3 ejected", func() bool {
		st := bal.Stats()
		return st[2].Ejections > 0 && st[3].Ejections > 0
	})
	// Issuing goes on through the sources on server a.
	n0 := seen.n[0].Load() + seen.n[1].Load()
	waitFor(t, "values while b is down", func() bool { return seen.n[0].Load()+seen.n[1].Load() > n0+1000 })

	b.Restart()
	// The keys are gone: after the rescue time the sources are tried and
	// refuse, rather than restart at 1 (sequence/redis checks the key
	// exists before each INCR).
	waitFor(t, "the Redis sources refusing the lost keys", func() bool {
		st := bal.Stats()
		return strings.Contains(st[2].LastError, "counter lost") && strings.Contains(st[3].LastError, "counter lost")
	})
	// The operator's repair, as sequence/redis documents it: re-create
	// each key at (or above) every value ever issued from it. Every value
	// issued is the test's, recorded by the workers; none from these
	// sources since the kill.
	admin := goredis.NewClient(&goredis.Options{Addr: b.Addr()})
	defer admin.Close()
	for i, key := range map[int]string{2: "k0", 3: "k1"} {
		if err := admin.Set(ctx, key, seen.max[i].Load(), 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	n2, n3 := seen.n[2].Load(), seen.n[3].Load()
	waitFor(t, "values from sources 2 and 3 again", func() bool {
		return seen.n[2].Load() > n2+100 && seen.n[3].Load() > n3+100
	})
	ids := l.finish(t)
	unique(t, ids)
	st := bal.Stats()
	for i := range st {
		if st[i].State != compose.Admitted {
			t.Errorf("source %d at the end: %+v", i, st[i])
		}
	}
	t.Logf("%d IDs; sources: %+v", len(ids), st)
}

// A source made slow (through a proxy that delays each request) is
// ejected after SlowCount slow calls within SlowWindow, callers keep
// getting IDs, and the source is admitted again after RescueAfter once it
// is fast again.
func TestBalancedRedisSlowSource(t *testing.T) {
	srv := testsvc.StartRedisServer(t)
	proxy := e2e.StartProxy(t, srv.Addr())
	urls := []string{
		sourceURL(srv.URL(), "k0"), sourceURL(srv.URL(), "k1"),
		sourceURL(srv.URL(), "k2"), sourceURL(fmt.Sprintf("redis://%s/0", proxy.Addr()), "k3"),
	}
	// The threshold is well above what a loaded CI machine takes for a
	// call to a local Redis, so that only the proxied source is slow.
	const (
		threshold = 250 * time.Millisecond
		rescue    = 500 * time.Millisecond
	)
	ctx := context.Background()
	bal, err := compose.OpenBalanced(ctx, urls, compose.BalancedOptions{
		SlowThreshold: threshold, SlowCount: 3, SlowWindow: 10 * time.Second, RescueAfter: rescue, Logger: quiet,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer bal.Close()

	seen := newMaxByIndex(bal.Bits())
	l := startLoad(bal, 4, seen.see)
	waitFor(t, "values from source 3", func() bool { return seen.n[3].Load() > 100 })

	proxy.SetLatency(2 * threshold)
	waitFor(t, "source 3 ejected", func() bool { return bal.Stats()[3].State == compose.Ejected })
	st := bal.Stats()[3]
	if st.SlowCalls < 3 || st.Errors != 0 || !strings.Contains(st.LastError, "3 calls slower than 250ms") {
		t.Errorf("slow source when ejected: %+v", st)
	}
	others := seen.n[0].Load()
	waitFor(t, "values from the other sources", func() bool { return seen.n[0].Load() > others+500 })

	proxy.SetLatency(0)
	n3 := seen.n[3].Load()
	waitFor(t, "values from source 3 again", func() bool { return seen.n[3].Load() > n3+100 })
	unique(t, l.finish(t))
	// While the proxy was slow, a rescue may have let source 3 back for a
	// call that found it slow again and ejected it once more (a late slow
	// call may even do so after the latency went): at least one ejection,
	// and admitted again once its rescue time has passed.
	waitFor(t, "source 3 admitted again", func() bool { return bal.Stats()[3].State == compose.Admitted })
	if st := bal.Stats()[3]; st.Ejections < 1 {
		t.Errorf("source 3 at the end: %+v", st)
	}
}
