package testsvc

import (
	"os"
	"sync"
	"testing"

	"github.com/bradfitz/gomemcache/memcache"
)

// MemcachedEnv names the environment variable that overrides the
// memcached address (host:port).
const MemcachedEnv = "IDFORGE_TEST_MEMCACHED"

// DefaultMemcached is the memcached address used when the environment
// sets none.
const DefaultMemcached = "127.0.0.1:11211"

const startMemcached = "memcached -d -u memcache -l 127.0.0.1 -p 11211"

// memcachedDown remembers, per address, why memcached could not be
// reached, so that later tests skip at once.
var memcachedDown sync.Map // string → error

// Memcached returns the address of the memcached server and a fresh key
// prefix ("idforge-t-<16 hex digits>:") for tb's keys. memcached cannot
// list keys, so nothing is deleted afterwards: give test keys the prefix
// and, if they should not linger, an expiry. When the server cannot be
// reached the test is skipped with a message saying how to start it, or
// fails under CI (CI=true).
func Memcached(tb testing.TB) (addr, prefix string) {
	tb.Helper()
	addr = os.Getenv(MemcachedEnv)
	if addr == "" {
		addr = DefaultMemcached
	}
	if err, ok := memcachedDown.Load(addr); ok {
		serviceUnreachable(tb, "memcached", addr, err.(error), startMemcached, MemcachedEnv)
	}
	c := memcache.New(addr)
	defer c.Close()
	if err := c.Ping(); err != nil {
		memcachedDown.Store(addr, err)
		serviceUnreachable(tb, "memcached", addr, err, startMemcached, MemcachedEnv)
	}
	return addr, "idforge-t-" + randomHex() + ":"
}
