package redis_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/e2e"
	"github.com/idforge/idforge/internal/testsvc"
	"github.com/idforge/idforge/worker"
	"github.com/idforge/idforge/worker/redis"
	"github.com/idforge/idforge/worker/workertest"
)

// ttl is the key expiry of the tests: short, so that takeovers happen
// within the test, and long enough for renewals on a loaded machine
// (renewals every ttl/3 may each run a few hundred ms late under -race
// with other packages' tests beside them; 900 ms was not enough).
const ttl = 2 * time.Second

// sentinelWait is how long TestConformanceSentinel's writes wait for the
// replica (wait_timeout): half the lease, so that a renewal still lands
// in time.
const sentinelWait = time.Second

var quiet = slog.New(slog.DiscardHandler)

// redisURL returns a worker URL with a fresh prefix and the test TTL.
func redisURL(t *testing.T) string {
	t.Helper()
	return testsvc.Redis(t) + "&ttl=" + ttl.String()
}

// rawClient returns a client for the server of a worker URL and the
// key base "{prefix}:".
func rawClient(t *testing.T, rawURL string) (*goredis.Client, string) {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	prefix := u.Query().Get("prefix")
	u.RawQuery = ""
	o, err := goredis.ParseURL(u.String())
	if err != nil {
		t.Fatal(err)
	}
	c := goredis.NewClient(o)
	t.Cleanup(func() { c.Close() })
	return c, "{" + prefix + "}:"
}

func TestConformance(t *testing.T) {
	t.Parallel()
	const down = "redis://:s3cret@127.0.0.1:1/0?prefix=down&timeout=300ms"
	workertest.Run(t, workertest.Fixture{
		Namespace: func(t *testing.T) workertest.Namespace {
			u := redisURL(t)
			return namespace(t, u, u)
		},
		TTL:       ttl,
		Exhausted: "0..2",
		Down: func(t *testing.T, opts worker.Options) (worker.Provider, string) {
			u, _ := url.Parse(down)
			return workertest.Open(t, down, opts), u.Redacted()
		},
		Secret: "s3cret",
		Outage: func(t *testing.T) (workertest.Namespace, workertest.Link) {
			target := redisURL(t)
			tu, _ := url.Parse(target)
			link := e2e.StartProxy(t, tu.Host)
			viaProxy := *tu
			viaProxy.Host = link.Addr()
			// A longer TTL: the lease must outlive reconnecting after the
			// outage.
			return namespace(t, viaProxy.String()+"&timeout=300ms&ttl=3s", target), link
		},
	})
}

// namespace gives the suite the providers of a worker URL, and reaches
// into their keys directly through the server of adminURL.
func namespace(t *testing.T, rawURL, adminURL string) workertest.Namespace {
	c, base := rawClient(t, adminURL)
	ctx := context.Background()
	idKey := func(id int64) string { return fmt.Sprintf("%sid:%d", base, id) }
	return workertest.Namespace{
		Open: func(t *testing.T, opts worker.Options) worker.Provider { return workertest.Open(t, rawURL, opts) },
		// A node killed: no release, no renewals.
		Kill:   func(p worker.Provider) { p.(io.Closer).Close() },
		Holder: func(t *testing.T, id int64) string { return c.Get(ctx, idKey(id)).Val() },
		SetHolder: func(t *testing.T, id int64, owner string) {
			if err := c.Set(ctx, idKey(id), owner, time.Minute).Err(); err != nil {
				t.Fatal(err)
			}
		},
		// A key that lapsed, as after a Redis restart without persistence.
		Free: func(t *testing.T, id int64, last time.Time) {
			c.Del(ctx, idKey(id))
			if !last.IsZero() {
				c.Set(ctx, fmt.Sprintf("%slast:%d", base, id), last.UnixMilli(), 0)
			}
		},
	}
}

func TestURLErrors(t *testing.T) {
	workertest.InvalidURLs(t, "pw@",
		"redis://:pw@127.0.0.1:6379/0?ttl=0s",
		"redis://:pw@127.0.0.1:6379/0?ttl=soon",
		"redis://:pw@127.0.0.1:6379/0?prefix={x}",
		"redis://:pw@127.0.0.1:6379/0?timeout=-1s",
		"redis://:pw@127.0.0.1:6379/0?no_such_option=1",
		"redis://:pw@127.0.0.1:6379/zero",
	)
	p := workertest.Open(t, "rediss://:pw@example.com:6380/2?prefix=a:b&ttl=5s", worker.Options{})
	if d := p.Describe(); !strings.Contains(d, "{a:b}:id:N") || !strings.Contains(d, "5s") || strings.Contains(d, "pw") {
		t.Errorf("Describe() = %q", d)
	}
}

func TestNew(t *testing.T) {
	if _, err := redis.New(redis.Config{}, worker.Options{}); !errors.Is(err, idforge.ErrInvalidArgument) {
		t.Fatalf("New without a client: %v", err)
	}
	c := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:6379"})
	defer c.Close()
	p, err := redis.New(redis.Config{Client: c}, worker.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if d := p.Describe(); !strings.Contains(d, "redis://127.0.0.1:6379/0?prefix=idforge:workers") {
		t.Errorf("Describe() = %q", d)
	}
	// Close leaves a client it was given open.
	p.Close()
	if err := c.Ping(context.Background()).Err(); errors.Is(err, goredis.ErrClosed) {
		t.Fatal("Close closed the caller's client")
	}
}

// TestConformanceSentinel runs the suite through Redis Sentinel (a
// primary, one replica, three sentinels started by the test), where every
// acquire and renewal waits for the replica (min_replicas defaults to 1).
// The replica gets sentinelWait to acknowledge rather than the default
// 500 ms: on a CI machine running every suite at once it was once starved
// for longer, and what this suite checks is not how fast WAIT answers.
func TestConformanceSentinel(t *testing.T) {
	testsvc.Slow(t)
	ss, primary := testsvc.StartRedisSentinelSet(t, 1)
	var n atomic.Int64
	workertest.Run(t, workertest.Fixture{
		Namespace: func(t *testing.T) workertest.Namespace {
			q := fmt.Sprintf("prefix=ns%d&ttl=%s&wait_timeout=%s", n.Add(1), ttl, sentinelWait)
			return namespace(t, ss.URL("redis+sentinel", q), primary.URL()+"?"+q)
		},
		TTL:       ttl,
		Exhausted: "0..2",
	})
}
