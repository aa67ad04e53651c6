package worker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idforge/idforge"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func TestRenewalExtendsWhileRenewing(t *testing.T) {
	var renewals atomic.Int32
	var lastSeen atomic.Int64
	// A TTL far above the interval: a renewal that runs late on a loaded
	// machine must not end the lease this test watches being extended.
	r := StartRenewal(RenewalConfig{
		ID: 3, TTL: 3 * time.Second, Interval: 50 * time.Millisecond, Acquired: time.Now(), Logger: quiet,
		Renew: func(ctx context.Context, last time.Time) error {
			renewals.Add(1)
			lastSeen.Store(last.UnixMilli())
			return nil
		},
	})
	defer r.Release(context.Background())
	first := r.ValidUntil()
	r.Report(time.UnixMilli(123456))
	deadline := time.Now().Add(5 * time.Second)
	for renewals.Load() < 3 || lastSeen.Load() != 123456 {
		if time.Now().After(deadline) {
			t.Fatalf("%d renewals in 5 s (every 50 ms wanted), last recorded %d", renewals.Load(), lastSeen.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !r.ValidUntil().After(first) {
		t.Fatal("ValidUntil did not move forward")
	}
	if lastSeen.Load() != 123456 {
		t.Fatalf("renewal recorded last %d, want the reported 123456", lastSeen.Load())
	}
	select {
	case <-r.Done():
		t.Fatal("lease ended while renewals succeed")
	default:
	}
}

// An acquire that took long (a write waiting for a replica) hands over a
// lease with less than an interval left. The first renewal must come in
// time to extend it, not wake at ValidUntil and give the lease up without
// trying.
func TestRenewalOfALeaseThatStartsShort(t *testing.T) {
	var renewals atomic.Int32
	ttl, interval := 3*time.Second, time.Second
	// ValidUntil is Acquired+TTL−Margin = Acquired+2 s: 400 ms are left.
	acquired := time.Now().Add(-1600 * time.Millisecond)
	r := StartRenewal(RenewalConfig{
		ID: 2, TTL: ttl, Interval: interval, Acquired: acquired, Logger: quiet,
		Renew: func(ctx context.Context, last time.Time) error {
			renewals.Add(1)
			return nil
		},
	})
	defer r.Release(context.Background())
	select {
	case <-r.Done():
		t.Fatal("lease given up without a renewal being tried")
	case <-time.After(time.Second):
	}
	if renewals.Load() == 0 {
		t.Fatal("no renewal in the second after the lease started")
	}
	if !r.ValidUntil().After(acquired.Add(ttl - ttl/3)) {
		t.Fatal("ValidUntil did not move forward")
	}
}

func TestNextRenewal(t *testing.T) {
	cfg := RenewalConfig{TTL: 3 * time.Second}.withDefaults()
	for _, c := range []struct{ left, want time.Duration }{
		{5 * time.Second, time.Second},                   // plenty left: every Interval
		{2 * time.Second, time.Second},                   // two intervals left: still Interval
		{time.Second, 500 * time.Millisecond},            // less: halfway through what is left
		{200 * time.Millisecond, 125 * time.Millisecond}, // never sooner than Interval/8
		{0, 0},
		{-time.Second, 0},
	} {
		if got := cfg.nextRenewal(c.left); got != c.want {
			t.Errorf("nextRenewal(%v) = %v, want %v", c.left, got, c.want)
		}
	}
}

// When renewals fail, the lease ends before the coordinator could hand
// the ID to anyone: ValidUntil never passes Acquired+TTL.
func TestRenewalLostBeforeCoordinatorExpiry(t *testing.T) {
	for name, renew := range map[string]func(ctx context.Context, last time.Time) error{
		"failing": func(ctx context.Context, last time.Time) error { return errors.New("connection refused") },
		"hanging": func(ctx context.Context, last time.Time) error { <-ctx.Done(); return ctx.Err() },
	} {
		t.Run(name, func(t *testing.T) {
			acquired := time.Now()
			ttl := 300 * time.Millisecond
			r := StartRenewal(RenewalConfig{ID: 1, TTL: ttl, Acquired: acquired, Renew: renew, Logger: quiet})
			defer r.Release(context.Background())
			select {
			case <-r.Done():
			case <-time.After(2 * time.Second):
				t.Fatal("lease not lost 2 s after renewals stopped working")
			}
			if coordinatorExpiry := acquired.Add(ttl); !r.ValidUntil().Before(coordinatorExpiry) {
				t.Fatalf("ValidUntil %v is not before the coordinator's expiry %v", r.ValidUntil(), coordinatorExpiry)
			}
			if time.Now().Before(r.ValidUntil()) {
				t.Fatal("Done closed before ValidUntil passed")
			}
		})
	}
}

// A renewal answering ErrLeaseLost (another node holds the ID now) ends
// the lease at once: ValidUntil falls into the past with Done, though the
// last renewal had granted more time.
func TestRenewalLostToAnotherNode(t *testing.T) {
	var lost atomic.Bool
	r := StartRenewal(RenewalConfig{
		ID: 2, TTL: time.Hour, Interval: 10 * time.Millisecond, Acquired: time.Now(), Logger: quiet,
		Renew: func(ctx context.Context, last time.Time) error {
			if lost.Load() {
				return fmt.Errorf("%w: worker ID 2 is held by 10.0.0.9:8080", idforge.ErrLeaseLost)
			}
			return nil
		},
	})
	defer r.Release(context.Background())
	if !r.ValidUntil().After(time.Now().Add(30 * time.Minute)) {
		t.Fatalf("ValidUntil %v, want about an hour ahead", r.ValidUntil())
	}
	lost.Store(true)
	select {
	case <-r.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("lease not lost 5 s after the coordinator said another node holds it")
	}
	if until := r.ValidUntil(); until.IsZero() || until.After(time.Now()) {
		t.Fatalf("ValidUntil %v once the lease was lost; want a time already past (and not the zero Time, which means no limit)", until)
	}
}

func TestRenewalRelease(t *testing.T) {
	var released atomic.Int64
	r := StartRenewal(RenewalConfig{
		ID: 1, TTL: time.Minute, Acquired: time.Now(), Logger: quiet,
		Renew:   func(ctx context.Context, last time.Time) error { return nil },
		Release: func(ctx context.Context, last time.Time) error { released.Store(last.UnixMilli()); return nil },
	})
	r.Report(time.UnixMilli(999))
	if err := r.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := r.Release(context.Background()); err != nil {
		t.Fatalf("second Release: %v", err)
	}
	if released.Load() != 999 {
		t.Fatalf("Release recorded %d, want 999", released.Load())
	}
	<-r.Done()
	if time.Now().Before(r.ValidUntil()) {
		t.Fatal("still valid after Release")
	}
}

func TestCache(t *testing.T) {
	dir := t.TempDir()
	c := NewCache(dir, "etcd://127.0.0.1:2379/idforge", "host:8080")
	now := time.Now()
	if _, _, _, err := c.Load(now); !errors.Is(err, ErrNoCache) {
		t.Fatalf("empty cache: %v", err)
	}
	if err := c.Save(7, now.Add(5*time.Second), now); err != nil {
		t.Fatal(err)
	}
	id, until, last, err := c.Load(now)
	if err != nil || id != 7 || until.UnixMilli() != now.Add(5*time.Second).UnixMilli() || last.UnixMilli() != now.UnixMilli() {
		t.Fatalf("Load = %d %v %v %v", id, until, last, err)
	}
	if _, _, _, err := c.Load(now.Add(6 * time.Second)); !errors.Is(err, ErrNoCache) {
		t.Fatalf("expired cache: %v", err)
	}
	if _, _, _, err := NewCache(dir, "etcd://127.0.0.1:2379/idforge", "host:9090").Load(now); !errors.Is(err, ErrNoCache) {
		t.Fatalf("another owner's cache: %v", err)
	}
	// No limit (ZooKeeper-style permanent IDs).
	if err := c.Save(9, time.Time{}, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if id, _, _, err := c.Load(now.Add(24 * time.Hour)); err != nil || id != 9 {
		t.Fatalf("permanent cache: %d %v", id, err)
	}
	c.Clear()
	if _, _, _, err := c.Load(now); !errors.Is(err, ErrNoCache) {
		t.Fatalf("cleared cache: %v", err)
	}
}
