package memcache_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	gomemcache "github.com/bradfitz/gomemcache/memcache"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/testsvc"
	"github.com/idforge/idforge/sequence"
	"github.com/idforge/idforge/sequence/internal/seqtest"
	"github.com/idforge/idforge/sequence/memcache"
)

func client(tb testing.TB, addr string) *gomemcache.Client {
	tb.Helper()
	c := gomemcache.New(addr)
	c.MaxIdleConns = 16
	tb.Cleanup(func() { c.Close() })
	return c
}

func TestSourceConcurrent(t *testing.T) {
	addr, prefix := testsvc.Memcached(t)
	key := prefix + "orders"
	t.Cleanup(func() { client(t, addr).Delete(key) })
	got := seqtest.Collect(t, func(tb testing.TB) idforge.Generator {
		s, err := sequence.Open(context.Background(), "memcache://"+addr+"?create=true&key="+key)
		if err != nil {
			tb.Fatal(err)
		}
		return s
	}, 4, 8, 150)
	seqtest.Unique(t, got)
	if len(got) != 4*8*150 {
		t.Fatalf("%d values", len(got))
	}
}

// TestEvictionGuard: a counter memcached lost is never restarted low.
func TestEvictionGuard(t *testing.T) {
	addr, prefix := testsvc.Memcached(t)
	ctx := context.Background()
	c := client(t, addr)
	key := prefix + "evicted"
	t.Cleanup(func() { c.Delete(key) })

	// Not a counter.
	c.Set(&gomemcache.Item{Key: key, Value: []byte("text")})
	if _, err := memcache.NewSource(ctx, c, memcache.SourceConfig{Key: key}); !errors.Is(err, idforge.ErrInvalidArgument) {
		t.Fatalf("a key holding text: %v, want ErrInvalidArgument", err)
	}
	c.Delete(key)

	// Missing at start, creation not allowed: refused.
	if _, err := memcache.NewSource(ctx, c, memcache.SourceConfig{Key: key}); !errors.Is(err, sequence.ErrCounterLost) {
		t.Fatalf("missing key, no creation: %v, want ErrCounterLost", err)
	}
	s, err := memcache.NewSource(ctx, c, memcache.SourceConfig{Key: key, Create: true, Start: 50})
	if err != nil {
		t.Fatal(err)
	}
	for want := int64(50); want < 60; want++ {
		if v, err := s.Next(ctx); err != nil || v != want {
			t.Fatalf("Next = %d, %v; want %d", v, err, want)
		}
	}
	c.Delete(key) // evicted
	if _, err := s.Next(ctx); !errors.Is(err, sequence.ErrCounterLost) || !errors.Is(err, idforge.ErrUnavailable) {
		t.Fatalf("after eviction: %v, want ErrCounterLost", err)
	}
	if _, err := c.Get(key); !errors.Is(err, gomemcache.ErrCacheMiss) {
		t.Fatalf("Next re-created the evicted key (%v)", err)
	}
	// Another node, configured for a first start, re-creates it low: the
	// source that saw more refuses rather than repeat.
	c.Add(&gomemcache.Item{Key: key, Value: []byte("0")})
	if _, err := s.Next(ctx); !errors.Is(err, sequence.ErrCounterLost) {
		t.Fatalf("after a low re-creation: %v, want ErrCounterLost", err)
	}
	c.Delete(key)

	// With a floor kept elsewhere, the source re-creates the key above
	// both the floor and what it has seen.
	floor := int64(1000)
	fs, err := memcache.NewSource(ctx, c, memcache.SourceConfig{Key: key,
		Floor: func(context.Context) (int64, error) { return floor, nil }})
	if err != nil {
		t.Fatal(err)
	}
	if v, err := fs.Next(ctx); err != nil || v != 1001 {
		t.Fatalf("created above the floor: %d, %v; want 1001", v, err)
	}
	c.Delete(key)
	floor = 10 // a stale floor: the source's own high-water mark wins
	if v, err := fs.Next(ctx); err != nil || v != 1002 {
		t.Fatalf("re-created after eviction: %d, %v; want 1002", v, err)
	}
}

func TestOpenURL(t *testing.T) {
	addr, prefix := testsvc.Memcached(t)
	ctx := context.Background()
	for _, bad := range []string{
		"memcache://" + addr,                          // no key
		"memcache://" + addr + "?key=a b",             // bad key
		"memcache://" + addr + "?key=k&bogus=1",       // unknown parameter
		"memcache://u:secret@" + addr + "?key=k",      // user information
		"memcache://" + addr + "?key=k&timeout=never", // bad duration
	} {
		_, err := sequence.Open(ctx, bad)
		if !errors.Is(err, idforge.ErrInvalidArgument) {
			t.Errorf("Open(%s): %v, want ErrInvalidArgument", bad, err)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("error shows the password: %v", err)
		}
	}
	s, err := sequence.Open(ctx, "memcache://"+addr+"?create=true&start=7&key="+prefix+"url")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if v, err := s.Next(ctx); err != nil || v != 7 {
		t.Fatalf("%d, %v", v, err)
	}
}

func BenchmarkSourceNext(b *testing.B) {
	addr, prefix := testsvc.Memcached(b)
	ctx := context.Background()
	c := client(b, addr)
	s, err := memcache.NewSource(ctx, c, memcache.SourceConfig{Key: prefix + "bench", Create: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Delete(prefix + "bench") })
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Next(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
