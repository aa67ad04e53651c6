package testsvc

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// RedisEnv names the Redis server tests use, as a URL
// (redis://[:password@]host:port/db); DefaultRedis when unset.
const RedisEnv = "IDFORGE_TEST_REDIS"

// DefaultRedis is the Redis server used when RedisEnv is unset.
const DefaultRedis = "redis://127.0.0.1:6379/0"

const startRedis = `redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no --dir /var/lib/redis --logfile /var/log/redis/ci.log`

// redisDown remembers, per server URL, why it could not be reached, so
// that later tests skip at once.
var redisDown sync.Map // string → error

// Redis returns a worker URL for the Redis server with a key prefix of its
// own, e.g. "redis://127.0.0.1:6379/0?prefix=idforge-t-1f2e3d4c5b6a7988",
// and deletes every key containing the prefix when tb ends. When the
// server cannot be reached the test is skipped with a message saying how
// to start it, or fails under CI (CI=true).
func Redis(tb testing.TB) string {
	tb.Helper()
	raw := os.Getenv(RedisEnv)
	if raw == "" {
		raw = DefaultRedis
	}
	u, err := url.Parse(raw)
	if err != nil {
		tb.Fatalf("testsvc: %s: bad URL: %v", RedisEnv, err)
	}
	unreachable := func(err error) {
		tb.Helper()
		msg := fmt.Sprintf("testsvc: Redis at %s is unreachable (%v); start it with\n\t%s\nor point %s at another server",
			u.Redacted(), err, startRedis, RedisEnv)
		if os.Getenv("CI") == "true" {
			tb.Fatal(msg)
		}
		tb.Skip(msg)
	}
	if err, ok := redisDown.Load(raw); ok {
		unreachable(err.(error))
	}
	opts, err := goredis.ParseURL(raw)
	if err != nil {
		tb.Fatalf("testsvc: %s=%s: %v", RedisEnv, u.Redacted(), err)
	}
	opts.PoolSize = 1
	client := goredis.NewClient(opts)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := client.Ping(ctx).Err(); err != nil {
		client.Close()
		redisDown.Store(raw, err)
		unreachable(err)
	}

	var b [8]byte
	rand.Read(b[:])
	prefix := "idforge-t-" + hex.EncodeToString(b[:])
	tb.Cleanup(func() {
		defer client.Close()
		ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
		defer cancel()
		var keys []string
		iter := client.Scan(ctx, 0, "*"+prefix+"*", 1000).Iterator()
		for iter.Next(ctx) {
			keys = append(keys, iter.Val())
		}
		if err := iter.Err(); err != nil {
			tb.Errorf("testsvc: Redis: list keys of %s: %v", prefix, err)
			return
		}
		for len(keys) > 0 {
			n := min(len(keys), 500)
			if err := client.Del(ctx, keys[:n]...).Err(); err != nil {
				tb.Errorf("testsvc: Redis: delete keys of %s: %v", prefix, err)
				return
			}
			keys = keys[n:]
		}
	})

	w := *u
	q := w.Query()
	q.Set("prefix", prefix)
	w.RawQuery = q.Encode()
	return w.String()
}
