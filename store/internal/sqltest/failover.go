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
	// CatchUp waits until the replica holds all the primary has written;
	// KillPrimary kills the primary; Promote makes the replica a primary.
	CatchUp, KillPrimary, Promote func()
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
	// The schema and the key reach the replica (replication is
	// asynchronous); the claims below may not, which the fence is for.
	db.CatchUp()
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

// testFailoverFence: when idforge_fence names another server than the one
// the store reaches (as on a promoted replica), every claim, also of a
// store opened afterwards, fails with ErrStoreFailedOver and claims
// nothing; so does a fence whose row is gone, and Migrate does not reopen
// it. RepairFailover raises the keys and accepts the server.
func testFailoverFence(t *testing.T, b Backend) {
	b.skipEmbedded(t, "no replica to fail over to")
	ctx := context.Background()
	storeURL := b.NewDatabase(t)
	st := b.Migrated(t, storeURL)
	if err := st.CreateKey(ctx, SegKey("k", 1, 10)); err != nil {
		t.Fatal(err)
	}
	WantSegment(t, MustClaim(t, st, "k", 0), idforge.Segment{Start: 1, End: 11, Step: 10})
	raw := b.RawDB(t, storeURL)
	refused := func(st Store, when string) {
		t.Helper()
		if _, err := st.ClaimSegment(ctx, "k", 0); !errors.Is(err, idforge.ErrStoreFailedOver) {
			t.Fatalf("claim %s: %v, want ErrStoreFailedOver", when, err)
		}
	}

	MustExec(t, raw, "UPDATE idforge_fence SET server = 'the old primary'")
	refused(st, "on another server than the fence names")
	later := b.MustOpen(t, storeURL, false)
	refused(later, "by a store opened after the fail-over")
	r := st.(idforge.FailoverRepairer)
	fs, err := r.FailoverState(ctx)
	if err != nil || !fs.FailedOver() || fs.Recorded != "the old primary" || fs.Current == "" {
		t.Fatalf("FailoverState = %+v, %v", fs, err)
	}
	done, err := r.RepairFailover(ctx, 1000, nil)
	if err != nil {
		t.Fatalf("RepairFailover: %v", err)
	}
	if len(done.Raised) != 1 || done.Raised[0] != (idforge.RaisedKey{Key: "k", From: 11, To: 1000}) || done.Server != fs.Current {
		t.Fatalf("RepairFailover = %+v; want k raised from 11 (nothing claimed while refused) to 1000", done)
	}
	WantSegment(t, MustClaim(t, later, "k", 0), idforge.Segment{Start: 1000, End: 1010, Step: 10})
	if _, err := r.RepairFailover(ctx, 5, []string{"nope"}); !errors.Is(err, idforge.ErrUnknownKey) {
		t.Fatalf("RepairFailover of an unknown key: %v, want ErrUnknownKey", err)
	}

	MustExec(t, raw, "DELETE FROM idforge_fence")
	refused(st, "with the fence's row gone")
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	refused(st, "after Migrate on a fence without its row")
	if _, err := r.RepairFailover(ctx, 1, nil); err != nil {
		t.Fatalf("RepairFailover: %v", err)
	}
	WantSegment(t, MustClaim(t, st, "k", 0), idforge.Segment{Start: 1010, End: 1020, Step: 10})
}
