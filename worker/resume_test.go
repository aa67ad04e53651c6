package worker

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/idforge/idforge"
)

func TestResume(t *testing.T) {
	cause := errors.New("connection refused")
	now := time.Now()
	until := time.UnixMilli(now.Add(time.Minute).UnixMilli())
	last := time.UnixMilli(now.Add(-time.Minute).UnixMilli())
	renewal := func(id int64) RenewalConfig {
		return RenewalConfig{ID: id, TTL: 9 * time.Second,
			Renew: func(context.Context, time.Time) error { return nil }}
	}
	start := func(id int64, last time.Time) (Lease, error) { return fixedLease(id), nil }
	refuse := errors.New("clock behind")

	tests := []struct {
		name string
		// entry is what the cache holds: nothing when id < 0.
		id      int64
		until   time.Time
		noCache bool
		renewal bool
		start   func(int64, time.Time) (Lease, error)
		err     error  // besides ErrUnavailable and cause
		why     string // in the error
		refused bool   // Start's error comes back as it is
	}{
		{name: "no cache", id: -1, noCache: true, renewal: true, why: "no data directory"},
		{name: "no entry", id: -1, renewal: true, err: ErrNoCache, why: "does not exist"},
		{name: "expired", id: 3, until: now.Add(-time.Second), renewal: true, err: ErrNoCache, why: "was valid until"},
		{name: "no limit for a renewal", id: 3, renewal: true, why: "has no validity limit"},
		{name: "a limit for an ID that never expires", id: 3, until: until, start: start, why: "has a validity limit"},
		{name: "too large", id: 8, until: until, renewal: true, why: "does not fit the layout's 0..7"},
		{name: "start refuses", id: 3, start: func(int64, time.Time) (Lease, error) { return nil, refuse }, refused: true},
		{name: "renewal", id: 3, until: until, renewal: true},
		{name: "never expires", id: 3, start: start},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			cache := NewCache(dir, "etcd://h/p", "10.0.0.1:8080")
			if tt.id >= 0 {
				if err := cache.Save(tt.id, tt.until, last); err != nil {
					t.Fatal(err)
				}
			}
			var logs bytes.Buffer
			cfg := ResumeConfig{Coordinator: "etcd", Where: "h:2379", Cause: cause, Cache: cache,
				NoCache: "no data directory for a cache", Max: 7, Then: "it is claimed again once etcd answers",
				Start: tt.start, Logger: slog.New(slog.NewTextHandler(&logs, nil))}
			if tt.noCache {
				cfg.Cache = nil
			}
			if tt.renewal {
				cfg.Renewal = renewal
			}
			l, err := Resume(cfg)
			switch {
			case tt.refused:
				if err != refuse {
					t.Fatalf("Resume = %v, want Start's error as it is", err)
				}
			case tt.why != "":
				if !errors.Is(err, idforge.ErrUnavailable) || !errors.Is(err, cause) || (tt.err != nil && !errors.Is(err, tt.err)) ||
					!strings.Contains(err.Error(), tt.why) || !strings.Contains(err.Error(), "etcd at h:2379 is unreachable") {
					t.Fatalf("Resume = %v, want ErrUnavailable wrapping %v and %v, saying %q", err, cause, tt.err, tt.why)
				}
				if logs.Len() != 0 {
					t.Fatalf("logged %s", logs.String())
				}
			default:
				if err != nil {
					t.Fatal(err)
				}
				defer l.Release(context.Background())
				if l.ID() != 3 || !l.ValidUntil().Equal(tt.until) {
					t.Fatalf("resumed %d valid until %v, want 3 until %v", l.ID(), l.ValidUntil(), tt.until)
				}
				if tt.renewal && !l.LastTime().Equal(last) {
					t.Fatalf("LastTime %v, want %v", l.LastTime(), last)
				}
				want := "etcd is unreachable: resuming the cached worker ID 3"
				if tt.renewal {
					want += ", valid until"
				}
				if out := logs.String(); !strings.Contains(out, "level=WARN") || !strings.Contains(out, want) ||
					!strings.Contains(out, "it is claimed again once etcd answers") {
					t.Fatalf("log %s, want a WARN %q", out, want)
				}
			}
		})
	}
}
