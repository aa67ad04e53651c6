package sqltest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/idforge/idforge"
)

// Replicated is a primary and a replica of a backend's own, started by
// the backend's test (testsvc.StartMariaDB, testsvc.StartStandby).
type Replicated struct {
	// URL is a store URL of a database both servers hold, listing both
	// hosts in the driver's fail-over form, primary first.
	URL string
	// KillPrimary kills the primary; Promote makes the replica a primary.
	KillPrimary, Promote func()
}

// FollowsPromotedReplica runs on one Store, never reopened, across a
// fail-over: the primary is killed and the replica promoted. The store
// reaches the new primary by itself (its URL lists both hosts), refuses
// to claim there with ErrStoreFailedOver, since the replica may lack the
// last claims, and after RepairFailover claims above the floor.
func FollowsPromotedReplica(t *testing.T, b Backend, db Replicated) {
	ctx := context.Background()
	st := b.MustOpen(t, db.URL, true)
	if err := st.Migrate(ctx); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	if err := st.CreateKey(ctx, SegKey("k", 1, 10)); err != nil {
		t.Fatalf("CreateKey: %v", err)
	}
	var last idforge.Segment
	for range 5 {
		last = MustClaim(t, st, "k", 0)
	}
	if fs, err := st.(idforge.FailoverRepairer).FailoverState(ctx); err != nil || fs.FailedOver() {
		t.Fatalf("FailoverState before the fail-over = %+v, %v; want the primary accepted", fs, err)
	}

	db.KillPrimary()
	db.Promote()
	began := time.Now()
	deadline := began.Add(60 * time.Second)
	var err error
	for {
		_, err = st.ClaimSegment(ctx, "k", 0)
		if errors.Is(err, idforge.ErrStoreFailedOver) {
			break
		}
		if err == nil {
			t.Fatal("a claim succeeded on the promoted replica before any repair")
		}
		if time.Now().After(deadline) {
			t.Fatalf("the store does not reach the promoted replica 60s after the fail-over: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("the store reached the promoted replica and refused after %s: %v", time.Since(began).Round(time.Millisecond), err)
	if idforge.ErrorCode(err) != idforge.CodeStoreFailedOver {
		t.Fatalf("code of %v = %s", err, idforge.ErrorCode(err))
	}

	r := st.(idforge.FailoverRepairer)
	fs, err := r.FailoverState(ctx)
	if err != nil || !fs.FailedOver() {
		t.Fatalf("FailoverState after the fail-over = %+v, %v; want it failed over", fs, err)
	}
	floor := last.End + 1000
	done, err := r.RepairFailover(ctx, floor, nil)
	if err != nil {
		t.Fatalf("RepairFailover: %v", err)
	}
	if done.Server != fs.Current || len(done.Raised) != 1 || done.Raised[0].To != floor {
		t.Fatalf("RepairFailover = %+v; want key k raised to %d on %s", done, floor, fs.Current)
	}
	seg := MustClaim(t, st, "k", 0)
	if seg.Start < floor {
		t.Fatalf("claim after the repair = %+v, want it at or above %d", seg, floor)
	}
}
