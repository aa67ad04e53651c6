package redis

import (
	"context"
	"net/url"
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/idforge/idforge/internal/e2e"
	"github.com/idforge/idforge/internal/testsvc"
)

// TestLuaLe checks the scripts' comparison of decimal strings where Lua's
// numbers (doubles) cannot tell the values apart.
func TestLuaLe(t *testing.T) {
	u, err := url.Parse(testsvc.Redis(t))
	if err != nil {
		t.Fatal(err)
	}
	u.RawQuery = "" // the key prefix, unused here
	opts, err := goredis.ParseURL(u.String())
	if err != nil {
		t.Fatal(err)
	}
	rdb := goredis.NewClient(opts)
	defer rdb.Close()
	le := goredis.NewScript(luaHelpers + `return le(ARGV[1], ARGV[2]) and 1 or 0`)
	for _, tt := range []struct {
		a, b string
		want int64
	}{
		{"0", "1", 1},
		{"1", "0", 0},
		{"5", "5", 1},
		{"9", "10", 1},
		{"10", "9", 0},
		{"9223372036854775806", "9223372036854775807", 1},
		{"9223372036854775807", "9223372036854775806", 0},
		{"9223372036854775807", "9223372036854775807", 1},
		{"9007199254740993", "9007199254740992", 0}, // equal as doubles
		{"123456789012345678", "123456789012345679", 1},
	} {
		got, err := le.Run(context.Background(), rdb, []string{"x"}, tt.a, tt.b).Int64()
		if err != nil {
			t.Fatal(err)
		}
		if got != tt.want {
			t.Errorf("le(%s, %s) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

// TestRunOnce checks that a script whose reply is lost is not sent again:
// through a link slower than the client's timeout, each attempt runs on
// Redis after the client gave up on it. Run retries (and so runs the
// script several times); runOnce must run it once.
func TestRunOnce(t *testing.T) {
	u, err := url.Parse(testsvc.Redis(t))
	if err != nil {
		t.Fatal(err)
	}
	prefix := u.Query().Get("prefix")
	proxy := e2e.StartProxy(t, u.Host)
	opts, err := goredis.ParseURL("redis://" + proxy.Addr() + u.Path)
	if err != nil {
		t.Fatal(err)
	}
	opts.ReadTimeout = 50 * time.Millisecond
	opts.MaxRetries = 3
	opts.MinRetryBackoff, opts.MaxRetryBackoff = time.Millisecond, time.Millisecond
	opts.PoolSize = 4
	slow := goredis.NewClient(opts)
	defer slow.Close()
	// slowDown opens four connections while the link is fast, so that
	// each attempt finds one ready and sends the script at once, then
	// slows the link down.
	slowDown := func() {
		proxy.SetLatency(0)
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() { slow.BLPop(context.Background(), 100*time.Millisecond, prefix+"nothing") })
		}
		wg.Wait()
		proxy.SetLatency(150 * time.Millisecond)
	}
	opts, _ = goredis.ParseURL("redis://" + u.Host + u.Path)
	fast := goredis.NewClient(opts)
	defer fast.Close()

	ctx := context.Background()
	incr := newScript(`return redis.call('INCR', KEYS[1])`)
	if err := incr.Load(ctx, fast).Err(); err != nil {
		t.Fatal(err)
	}
	// count waits for the first attempt to reach Redis through the
	// proxy (150 ms after it was sent, later on a loaded machine), then
	// long enough for every retry behind it, and returns the count.
	count := func(key string) int64 {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); fast.Exists(ctx, key).Val() == 0 && time.Now().Before(deadline); {
			time.Sleep(20 * time.Millisecond)
		}
		time.Sleep(600 * time.Millisecond)
		n, err := fast.Get(ctx, key).Int64()
		if err != nil {
			t.Fatalf("%s: %v: the script never reached Redis in 5 s", key, err)
		}
		return n
	}

	slowDown()
	if err := incr.Run(ctx, slow, []string{prefix + "run"}).Err(); err == nil {
		t.Fatal("Run through the slow link succeeded")
	}
	if n := count(prefix + "run"); n < 2 {
		t.Logf("Run ran the script %d times: this go-redis does not retry it", n)
	} else {
		t.Logf("Run ran the script %d times", n)
	}
	slowDown()
	if err := incr.runOnce(ctx, slow, []string{prefix + "once"}).Err(); err == nil {
		t.Fatal("runOnce through the slow link succeeded")
	}
	if n := count(prefix + "once"); n != 1 {
		t.Fatalf("runOnce ran the script %d times, want once", n)
	}
}
