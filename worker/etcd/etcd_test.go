package etcd_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/e2e"
	"github.com/idforge/idforge/internal/testsvc"
	"github.com/idforge/idforge/worker"
	"github.com/idforge/idforge/worker/etcd"
	"github.com/idforge/idforge/worker/workertest"
)

// open returns the provider of rawURL, with a quiet logger unless opts
// has one.
func open(t *testing.T, rawURL string, opts worker.Options) *etcd.Provider {
	t.Helper()
	return workertest.Open(t, rawURL, opts).(*etcd.Provider)
}

// key reads one key of the provider's prefix raw.
func key(t *testing.T, p *etcd.Provider, suffix string) (string, clientv3.LeaseID, bool) {
	t.Helper()
	return rawKey(t, p.Prefix()+suffix)
}

// rawKey reads a key, its value and lease.
func rawKey(t *testing.T, k string) (string, clientv3.LeaseID, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r, err := testsvc.EtcdClient(t).Get(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Kvs) == 0 {
		return "", 0, false
	}
	return string(r.Kvs[0].Value), clientv3.LeaseID(r.Kvs[0].Lease), true
}

func TestOpen(t *testing.T) {
	tests := []struct {
		name   string
		url    string
		ttl    time.Duration
		prefix string
		err    bool
	}{
		{"defaults", "etcd://127.0.0.1:2379", etcd.DefaultTTL, etcd.DefaultPrefix, false},
		{"prefix", "etcd://127.0.0.1:2379/svc/workers/", etcd.DefaultTTL, "/svc/workers", false},
		{"ttl duration", "etcd://h1:2379,h2:2379/p?ttl=30s", 30 * time.Second, "/p", false},
		{"ttl minutes", "etcd://h1/p?ttl=2m", 2 * time.Minute, "/p", false},
		{"ttl seconds", "etcd://h1/p?ttl=7", 7 * time.Second, "/p", false},
		{"tls", "etcds://h1:2379/p?dial_timeout=500ms", etcd.DefaultTTL, "/p", false},
		{"ttl fraction", "etcd://h1/p?ttl=1500ms", 0, "", true},
		{"ttl too small", "etcd://h1/p?ttl=500ms", 0, "", true},
		{"ttl zero", "etcd://h1/p?ttl=0", 0, "", true},
		{"ttl garbage", "etcd://h1/p?ttl=soon", 0, "", true},
		{"dial_timeout garbage", "etcd://h1/p?dial_timeout=-1s", 0, "", true},
		{"unknown parameter", "etcd://h1/p?tll=10s", 0, "", true},
		{"no host", "etcd:///p", 0, "", true},
		{"empty host", "etcd://h1,,h2/p", 0, "", true},
		{"opaque", "etcd:h1", 0, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, err := url.Parse(tt.url)
			if err != nil {
				t.Fatal(err)
			}
			p, err := etcd.Open(u, worker.Options{Owner: "10.0.0.1:8080"})
			if tt.err {
				if !errors.Is(err, idforge.ErrInvalidArgument) {
					t.Fatalf("Open = %v, want ErrInvalidArgument", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.TTL() != tt.ttl || p.Prefix() != tt.prefix {
				t.Fatalf("ttl %v prefix %q, want %v %q", p.TTL(), p.Prefix(), tt.ttl, tt.prefix)
			}
		})
	}
}

// The worker registry finds the provider by scheme and never shows the
// password.
func TestRegistryAndRedaction(t *testing.T) {
	p, err := worker.Open(context.Background(), "etcd://root:s3cret@127.0.0.1:1/p?dial_timeout=100ms", worker.Options{Owner: "h:1"})
	if err != nil {
		t.Fatal(err)
	}
	if d := p.Describe(); strings.Contains(d, "s3cret") || !strings.HasPrefix(d, "etcd://root:") {
		t.Fatalf("Describe = %q", d)
	}
	_, err = p.Acquire(context.Background(), 3)
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("Acquire error %v", err)
	}
	if _, err := worker.Open(context.Background(), "etcd://root:s3cret@h/p?ttl=x", worker.Options{}); err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("Open error %v", err)
	}
}

// The ttl of the URL is the TTL of the etcd lease the ID key is bound to.
func TestTTLGranted(t *testing.T) {
	p := open(t, testsvc.Etcd(t)+"?ttl=7s", worker.Options{Owner: "10.0.0.1:8080"})
	l := workertest.Acquire(t, p, 3)
	_, lease, ok := key(t, p, "/id/"+strconv.FormatInt(l.ID(), 10))
	if !ok {
		t.Fatal("no ID key")
	}
	r, err := testsvc.EtcdClient(t).TimeToLive(context.Background(), lease)
	if err != nil {
		t.Fatal(err)
	}
	if r.GrantedTTL != 7 {
		t.Fatalf("lease granted %d s, want 7", r.GrantedTTL)
	}
	if left := time.Until(l.ValidUntil()); left <= 0 || left > 7*time.Second*2/3 {
		t.Fatalf("ValidUntil is %v from now, want within ttl−ttl/3", left)
	}
}

func TestConformance(t *testing.T) {
	t.Parallel()
	workertest.Run(t, workertest.Fixture{
		Namespace: func(t *testing.T) workertest.Namespace {
			return namespace(t, testsvc.Etcd(t)+"?ttl=2s&dial_timeout=1s")
		},
		TTL:        2 * time.Second,
		ClockSlack: 2 * time.Second,
		Exhausted:  "all 3 worker IDs under etcd prefix",
		Down: func(t *testing.T, opts worker.Options) (worker.Provider, string) {
			p := open(t, "etcd://127.0.0.1:1/idforge?dial_timeout=200ms", opts)
			return p, p.Describe()
		},
	})
}

// namespace gives the suite the providers of rawURL, each reaching etcd
// through a proxy of its own, so that Kill can cut one off as a crash
// would, and reaches into their keys directly.
func namespace(t *testing.T, rawURL string) workertest.Namespace {
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	proxies := map[worker.Provider]*e2e.Proxy{}
	idKey := func(id int64) string { return u.Path + "/id/" + strconv.FormatInt(id, 10) }
	return workertest.Namespace{
		Open: func(t *testing.T, opts worker.Options) worker.Provider {
			px := e2e.StartProxy(t, u.Host)
			via := *u
			via.Host = px.Addr()
			p := open(t, via.String(), opts)
			mu.Lock()
			proxies[p] = px
			mu.Unlock()
			return p
		},
		Kill: func(p worker.Provider) {
			mu.Lock()
			defer mu.Unlock()
			proxies[p].Cut()
		},
		Holder: func(t *testing.T, id int64) string {
			v, _, ok := rawKey(t, idKey(id))
			if !ok {
				return ""
			}
			var o struct{ Owner string }
			if err := json.Unmarshal([]byte(v), &o); err != nil {
				t.Fatalf("%s holds %q: %v", idKey(id), v, err)
			}
			return o.Owner
		},
		SetHolder: func(t *testing.T, id int64, owner string) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if _, err := testsvc.EtcdClient(t).Put(ctx, idKey(id), `{"owner":"`+owner+`"}`); err != nil {
				t.Fatal(err)
			}
		},
	}
}

// Release deletes the ID key and ends the lease.
func TestReleaseDeletesKey(t *testing.T) {
	p := open(t, testsvc.Etcd(t), worker.Options{Owner: "10.0.0.1:8080"})
	l := workertest.Acquire(t, p, 7)
	if err := l.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := key(t, p, "/id/"+strconv.FormatInt(l.ID(), 10)); ok {
		t.Fatal("the ID key survived Release")
	}
}

// A node restarting with the same Owner takes its ID back at once, even
// while its earlier process's lease is still alive.
func TestSameOwnerTakesIDBack(t *testing.T) {
	p := open(t, testsvc.Etcd(t), worker.Options{Owner: "10.0.0.9:8080"})
	cli := testsvc.EtcdClient(t)
	ctx := context.Background()
	// The dead process held ID 3 under a lease that lives another minute.
	g, err := cli.Grant(ctx, 60)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Put(ctx, p.Prefix()+"/id/3", `{"owner":"10.0.0.9:8080"}`, clientv3.WithLease(g.ID)); err != nil {
		t.Fatal(err)
	}
	l := workertest.Acquire(t, p, 7)
	if l.ID() != 3 {
		t.Fatalf("got ID %d, want the owner's 3", l.ID())
	}
	if _, lease, _ := key(t, p, "/id/3"); lease == g.ID {
		t.Fatal("the key is still bound to the dead process's lease")
	}
	if r, err := cli.TimeToLive(ctx, g.ID); err != nil || r.TTL > 0 {
		t.Fatalf("old lease not revoked: %+v %v", r, err)
	}
}

// A lease revoked behind the Renewal's back is bound to a new lease as
// long as nobody took the ID; when another owner took it, the lease ends.
func TestRevokedLease(t *testing.T) {
	t.Parallel()
	t.Run("claimed again", func(t *testing.T) {
		p := open(t, testsvc.Etcd(t)+"?ttl=3s", worker.Options{Owner: "10.0.0.1:8080"})
		l := workertest.Acquire(t, p, 0)
		_, old, _ := key(t, p, "/id/0")
		if _, err := testsvc.EtcdClient(t).Revoke(context.Background(), old); err != nil {
			t.Fatal(err)
		}
		workertest.WaitFor(t, "the ID key is bound again", 5*time.Second, func() bool {
			v, lease, ok := key(t, p, "/id/0")
			return ok && lease != old && strings.Contains(v, "10.0.0.1:8080")
		})
		select {
		case <-l.Done():
			t.Fatal("lease ended although the ID was free to claim again")
		default:
		}
	})
	t.Run("taken meanwhile", func(t *testing.T) {
		u := testsvc.Etcd(t) + "?ttl=3s"
		p := open(t, u, worker.Options{Owner: "10.0.0.1:8080"})
		l := workertest.Acquire(t, p, 0)
		other := open(t, u, worker.Options{Owner: "10.0.0.2:8080"})
		var taken worker.Lease
		for range 20 {
			_, lease, _ := key(t, p, "/id/0")
			testsvc.EtcdClient(t).Revoke(context.Background(), lease)
			var err error
			if taken, err = other.Acquire(context.Background(), 0); err == nil {
				break
			}
		}
		if taken == nil {
			t.Fatal("the other owner never got the revoked ID")
		}
		t.Cleanup(func() { taken.Release(context.Background()) })
		select {
		case <-l.Done():
		case <-time.After(5 * time.Second):
			t.Fatal("lease still alive 5 s after another owner took its ID")
		}
		if v, _, _ := key(t, p, "/id/0"); !strings.Contains(v, "10.0.0.2:8080") {
			t.Fatalf("ID key %s, want the other owner's", v)
		}
	})
}

// Release records the newest reported time under last/{n}, where an
// older report never lowers it.
func TestLastKey(t *testing.T) {
	u := testsvc.Etcd(t)
	a := open(t, u, worker.Options{Owner: "10.0.0.1:8080"})
	la := workertest.Acquire(t, a, 0)
	reported := time.UnixMilli(time.Now().Add(time.Second).UnixMilli())
	la.Report(reported.Add(-time.Second))
	la.Report(reported)
	if err := la.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	if v, _, _ := key(t, a, "/last/0"); v != strconv.FormatInt(reported.UnixMilli(), 10) {
		t.Fatalf("last/0 = %q, want %d", v, reported.UnixMilli())
	}
	lb := workertest.Acquire(t, open(t, u, worker.Options{Owner: "10.0.0.2:8080"}), 0)
	lb.Report(reported.Add(-time.Hour))
	if err := lb.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	if v, _, _ := key(t, a, "/last/0"); v != strconv.FormatInt(reported.UnixMilli(), 10) {
		t.Fatalf("last/0 = %q after an older report, want %d", v, reported.UnixMilli())
	}
}

// A node restarting while etcd is down resumes the cached ID, and takes
// it over from its dead earlier process once etcd answers again.
func TestResumeThenClaimAgain(t *testing.T) {
	t.Parallel()
	u := testsvc.Etcd(t)
	parsed, _ := url.Parse(u)
	proxy := e2e.StartProxy(t, parsed.Host)
	viaProxy := "etcd://" + proxy.Addr() + parsed.Path + "?dial_timeout=300ms"
	const owner = "10.0.0.7:8080"
	dir := t.TempDir()
	p := open(t, viaProxy, worker.Options{Owner: owner, DataDir: dir})

	// The earlier process held ID 3 under a lease that lives another
	// minute, and its cache says so.
	cli := testsvc.EtcdClient(t)
	ctx := context.Background()
	g, err := cli.Grant(ctx, 60)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Put(ctx, p.Prefix()+"/id/3", `{"owner":"`+owner+`"}`, clientv3.WithLease(g.ID)); err != nil {
		t.Fatal(err)
	}
	cachedUntil := time.UnixMilli(time.Now().Add(5 * time.Second).UnixMilli())
	if err := worker.NewCache(dir, p.Describe(), owner).Save(3, cachedUntil, time.Time{}); err != nil {
		t.Fatal(err)
	}

	proxy.Cut()
	l := workertest.Acquire(t, p, 7)
	if l.ID() != 3 || !l.ValidUntil().Equal(cachedUntil) {
		t.Fatalf("resumed %d until %v, cached 3 until %v", l.ID(), l.ValidUntil(), cachedUntil)
	}
	proxy.Restore()
	workertest.WaitFor(t, "the resumed ID is claimed again in etcd", 10*time.Second, func() bool {
		v, lease, ok := key(t, p, "/id/3")
		return ok && lease != g.ID && strings.Contains(v, owner) && l.ValidUntil().After(cachedUntil)
	})
	if r, err := cli.TimeToLive(ctx, g.ID); err != nil || r.TTL > 0 {
		t.Fatalf("the earlier process's lease is still alive: %+v %v", r, err)
	}
	if _, err := os.Stat(filepath.Join(dir, worker.CacheFile)); err != nil {
		t.Fatalf("cache: %v", err)
	}
}
