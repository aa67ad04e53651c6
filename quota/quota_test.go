package quota_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/fakeclock"
	"github.com/idforge/idforge/internal/testsvc"
	"github.com/idforge/idforge/issuer"
	"github.com/idforge/idforge/plugin"
	"github.com/idforge/idforge/quota"
	"github.com/idforge/idforge/store/memstore"

	_ "github.com/idforge/idforge/sequence/redis"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// Bad quotas are refused with a specific invalid_argument, naming what
// is wrong.
func TestValidateRefuses(t *testing.T) {
	for _, tc := range []struct {
		spec quota.Spec
		want string
	}{
		{quota.Spec{Name: "q", Limit: 0, Per: "day"}, "limit 0 per day"},
		{quota.Spec{Name: "q", Limit: -5, Per: "day"}, "limit -5"},
		{quota.Spec{Name: "q", Limit: 5, Per: "fortnight"}, `unknown period "fortnight"`},
		{quota.Spec{Name: "q", Limit: 5}, "needs per"},
		{quota.Spec{Name: "q", Limit: 5, Per: "day", Keys: []string{"or*der"}}, `key pattern "or*der"`},
		{quota.Spec{Name: "q", Limit: 5, Per: "day", Keys: []string{"a b"}}, `key pattern "a b"`},
		{quota.Spec{Name: "q", Formats: []string{"base64"}}, `unknown format "base64"`},
		{quota.Spec{Name: "q"}, "refuses nothing"},
		{quota.Spec{Name: "q", Closed: true, Limit: 3, Per: "day"}, "closed"},
	} {
		err := tc.spec.Validate()
		if !errors.Is(err, idforge.ErrInvalidArgument) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v; want invalid argument with %q", tc.spec, err, tc.want)
		}
	}
	if err := (quota.Spec{Name: "bad name"}).Validate(); !errors.Is(err, idforge.ErrInvalidKey) {
		t.Errorf("bad name: %v", err)
	}
}

// A refused call consumes nothing: over the quota, a call for several IDs
// is refused whole, with the documented rejection naming the quota and
// when it resets, and the next allowed ID follows the last one issued.
func TestRefusedCallConsumesNothing(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 11, 24, 12, 0, 30, 0, time.UTC)
	clock := fakeclock.New(t0)
	st := memstore.New()
	st.CreateKey(ctx, idforge.Key{Name: "order", Strategy: idforge.StrategySegment, Step: 100, MaxID: 1})
	lim := quota.NewLimiter(clock)
	m, err := quota.NewManager(ctx, lim, st, nil, nil, quiet)
	if err != nil {
		t.Fatal(err)
	}
	iss := issuer.New(st, nil, issuer.Settings{Logger: quiet, Plugins: plugin.NewChain(nil, lim)})
	defer iss.Close()
	if err := m.Define(ctx, quota.Spec{Name: "orders-per-minute", Keys: []string{"ord*"}, Limit: 5, Per: "minute"}); err != nil {
		t.Fatal(err)
	}
	ids, err := iss.NextN(ctx, "order", 3)
	if err != nil || ids[2] != 3 {
		t.Fatalf("NextN = %v, %v", ids, err)
	}
	_, err = iss.NextN(ctx, "order", 3)
	if !errors.Is(err, idforge.ErrRejected) || idforge.ErrorCode(err) != idforge.CodeRejected {
		t.Fatalf("over the quota: %v", err)
	}
	for _, want := range []string{"orders-per-minute", "5 IDs per minute", "resets at 2026-11-24T12:01:00Z"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q does not say %q", err, want)
		}
	}
	ids, err = iss.NextN(ctx, "order", 2)
	if err != nil || ids[0] != 4 || ids[1] != 5 {
		t.Fatalf("the rest of the quota: %v, %v (want 4 5: the refused call took nothing)", ids, err)
	}
	if _, err := iss.Next(ctx, "order"); !errors.Is(err, idforge.ErrRejected) {
		t.Fatalf("quota used up: %v", err)
	}
	clock.Add(30 * time.Second)
	if id, err := iss.Next(ctx, "order"); err != nil || id != 6 {
		t.Fatalf("next minute: %d, %v; want 6", id, err)
	}
	// Retired, it refuses nothing.
	if err := m.Retire(ctx, "orders-per-minute"); err != nil {
		t.Fatal(err)
	}
	if _, err := iss.NextN(ctx, "order", 100); err != nil {
		t.Fatal(err)
	}
	if err := m.Define(ctx, quota.Spec{Name: "orders-per-minute", Closed: true}); !errors.Is(err, idforge.ErrKeyExists) {
		t.Fatalf("a retired quota's name again: %v", err)
	}
}

// Closed keys and allowed formats refuse before drawing.
func TestClosedAndFormats(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	st.CreateKey(ctx, idforge.Key{Name: "order", Strategy: idforge.StrategySegment, Step: 100, MaxID: 1})
	st.CreateKey(ctx, idforge.Key{Name: "legacy", Strategy: idforge.StrategySegment, Step: 100, MaxID: 1})
	lim := quota.NewLimiter(nil)
	_, err := quota.NewManager(ctx, lim, st, []quota.Spec{
		{Name: "legacy-closed", Keys: []string{"legacy"}, Closed: true},
		{Name: "order-formats", Keys: []string{"order"}, Formats: []string{"default", "base62"}},
	}, nil, quiet)
	if err != nil {
		t.Fatal(err)
	}
	iss := issuer.New(st, nil, issuer.Settings{Logger: quiet, Plugins: plugin.NewChain(nil, lim)})
	defer iss.Close()
	if _, err := iss.Next(ctx, "legacy"); !errors.Is(err, idforge.ErrRejected) || !strings.Contains(err.Error(), "closed") {
		t.Fatalf("closed key: %v", err)
	}
	if _, err := iss.NextStrings(ctx, "order", 1, "hex"); !errors.Is(err, idforge.ErrRejected) || !strings.Contains(err.Error(), `format "hex"`) {
		t.Fatalf("hex: %v", err)
	}
	if _, err := iss.NextStrings(ctx, "order", 1, "base62:min=4"); err != nil {
		t.Fatalf("base62: %v", err)
	}
	if id, err := iss.Next(ctx, "order"); err != nil || id != 2 {
		t.Fatalf("default format: %d, %v (want 2: the refused hex call took nothing)", id, err)
	}
}

// Concurrent callers on two nodes sharing a counter store never exceed
// the quota, asking for one to three IDs at a time, and together they
// take all of it but what a refused call could not use.
func TestTwoNodesShareTheQuota(t *testing.T) {
	ctx := context.Background()
	counter := testsvc.Redis(t)
	clock := fakeclock.New(time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC))
	for _, limit := range []int64{50, 1000} {
		spec := quota.Spec{Name: "shared", Limit: limit, Per: "day", Counter: counter}
		var granted atomic.Int64
		var wg sync.WaitGroup
		for node := range 2 {
			lim := quota.NewLimiter(clock)
			defer lim.Close()
			spec.Name = "shared-" + strconv.FormatInt(limit, 10)
			if err := lim.Set(ctx, []quota.Spec{spec}); err != nil {
				t.Fatal(err)
			}
			for g := range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; ; i++ {
						n := 1 + (node+g+i)%3
						err := lim.Before(ctx, plugin.Call{Key: "order", Count: n})
						if err == nil {
							granted.Add(int64(n))
							continue
						}
						if !strings.Contains(err.Error(), "used up") {
							t.Error(err)
						}
						return
					}
				}()
			}
		}
		wg.Wait()
		lease := quota.Spec{Limit: limit}.Lease()
		if g := granted.Load(); g > limit || g < limit-2*4*(lease+2) {
			t.Errorf("limit %d: granted %d", limit, g)
		}
	}
}

// A quota whose counter store cannot be opened is in force all the
// same: its calls fail (unavailable) rather than pass unlimited.
func TestBrokenCounterFailsClosed(t *testing.T) {
	ctx := context.Background()
	lim := quota.NewLimiter(nil)
	err := lim.Set(ctx, []quota.Spec{{Name: "q", Limit: 5, Per: "day", Counter: "nosuch://x"}})
	if err == nil {
		t.Fatal("Set opened an unknown scheme")
	}
	if err := lim.Before(ctx, plugin.Call{Key: "order", Count: 1}); !errors.Is(err, idforge.ErrUnavailable) {
		t.Fatalf("Before: %v", err)
	}
}

// TestFromRequest reads the gRPC API's spec form and writes it back.
func TestFromRequest(t *testing.T) {
	s, err := quota.FromRequest("orders", `{"keys":["order-*"],"limit":5,"per":"minute"}`, "five a minute")
	if err != nil || s.Name != "orders" || s.Description != "five a minute" || s.Origin != idforge.OriginAPI ||
		s.Limit != 5 || s.Per != "minute" || len(s.Keys) != 1 {
		t.Fatalf("FromRequest = %+v, %v", s, err)
	}
	s.Retired = true
	if got, want := s.RequestSpec(), `{"keys":["order-*"],"limit":5,"per":"minute"}`; got != want {
		t.Errorf("RequestSpec = %s, want %s", got, want)
	}
	for spec, want := range map[string]string{
		`{"name":"x","limit":1,"per":"day"}`: `"name" is not a field of the spec`,
		`{"Retired":true,"closed":true}`:     `"Retired" is not a field of the spec`,
		`{"limit":1,"per":"day","bogus":1}`:  `bogus`,
		`{"limit":1,"limit":2,"per":"day"}`:  `limit`,
		`[1]`:                                `spec`,
	} {
		if _, err := quota.FromRequest("q", spec, ""); !errors.Is(err, idforge.ErrInvalidArgument) || !strings.Contains(err.Error(), want) {
			t.Errorf("FromRequest(%s) = %v; want invalid_argument mentioning %q", spec, err, want)
		}
	}
}

// The API shows a quota's counter URL without its password.
func TestRedactedHidesTheCounterPassword(t *testing.T) {
	s := quota.Spec{Name: "q", Limit: 1, Per: "day", Counter: "redis://:hunter2@10.0.0.1:6379/0"}
	r := s.Redacted()
	if strings.Contains(r.Counter, "hunter2") || !strings.Contains(r.Counter, "10.0.0.1") || s.Counter != "redis://:hunter2@10.0.0.1:6379/0" {
		t.Fatalf("Redacted: %q (from %q)", r.Counter, s.Counter)
	}
}
