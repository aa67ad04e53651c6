package sqltest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/issuer"
)

// testGapless: a gap-free serial's steps and their errors, and several
// stores reserving at once on one database, as nodes do: the audit
// accounts for every number once.
func testGapless(t *testing.T, b Backend) {
	ctx := context.Background()
	u := b.NewDatabase(t)
	st := b.Migrated(t, u)
	gs := st.(idforge.GaplessStore)
	def := idforge.Serial{Name: "inv", Template: "INV@{seq:n}", Gapless: true, Expiry: time.Minute}
	if err := st.CreateSerial(ctx, def); err != nil {
		t.Fatal(err)
	}
	if got, err := st.Serial(ctx, "inv"); err != nil || !got.Gapless || got.Expiry != time.Minute || got.ReuseExpired {
		t.Fatalf("Serial = %+v, %v", got, err)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	value := func(n int64) (string, error) { return fmt.Sprint("INV", n), nil }
	reserve := func(def idforge.Serial, at time.Time) idforge.Reservation {
		t.Helper()
		r, err := gs.Reserve(ctx, def, at, value)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	wantErr := func(err, want error) {
		t.Helper()
		if !errors.Is(err, want) {
			t.Fatalf("err = %v, want %v", err, want)
		}
	}
	r1, r2, r3 := reserve(def, t0), reserve(def, t0), reserve(def, t0)
	if r1.Number != 1 || r3.Number != 3 || r2.Value != "INV2" || !r1.Expires.Equal(t0.Add(time.Minute)) {
		t.Fatalf("reservations %+v %+v %+v", r1, r2, r3)
	}
	if c, err := gs.Commit(ctx, def, r1.ID, t0); err != nil || c.State != idforge.Committed || c.Value != "INV1" {
		t.Fatalf("Commit = %+v, %v", c, err)
	}
	_, err := gs.Commit(ctx, def, r1.ID, t0)
	wantErr(err, idforge.ErrAlreadyCommitted)
	_, err = gs.Void(ctx, def, r1.ID, "typo", t0)
	wantErr(err, idforge.ErrAlreadyCommitted)
	if v, err := gs.Void(ctx, def, r2.ID, "order cancelled", t0); err != nil || v.State != idforge.Voided || v.Reason != "order cancelled" {
		t.Fatalf("Void = %+v, %v", v, err)
	}
	_, err = gs.Commit(ctx, def, r2.ID, t0)
	wantErr(err, idforge.ErrReservationVoided)
	for _, id := range []string{"9-0123456789abcdef", "1-0123456789abcdef", "x", ""} {
		_, err = gs.Commit(ctx, def, id, t0)
		wantErr(err, idforge.ErrUnknownReservation)
	}
	late := t0.Add(2 * time.Minute)
	_, err = gs.Commit(ctx, def, r3.ID, late)
	wantErr(err, idforge.ErrReservationExpired)
	_, err = gs.Void(ctx, def, r3.ID, "late", late)
	wantErr(err, idforge.ErrReservationExpired)
	r4 := reserve(def, late)
	audit, last, err := gs.Audit(ctx, def, 1, 10, late)
	if err != nil || last != 4 || len(audit) != 4 {
		t.Fatalf("Audit = %+v, %d, %v", audit, last, err)
	}
	for i, want := range []string{"committed/", "voided/order cancelled", "voided/expired", "reserved/"} {
		if got := audit[i].State + "/" + audit[i].Reason; got != want || audit[i].Number != int64(i+1) || audit[i].ID != "" {
			t.Errorf("audit[%d] = %+v, want %s", i, audit[i], want)
		}
	}

	// reuse_expired: an expired reservation's number goes to the next.
	reuse := idforge.Serial{Name: "rct", Template: "R@{seq:n}", Gapless: true, ReuseExpired: true, Expiry: time.Minute}
	a := reserve(reuse, t0)
	b2 := reserve(reuse, late)
	if a.Number != 1 || b2.Number != 1 || b2.ID == a.ID {
		t.Fatalf("reuse: %+v then %+v", a, b2)
	}
	_, err = gs.Commit(ctx, reuse, a.ID, late)
	wantErr(err, idforge.ErrReservationExpired)
	if _, err := gs.Commit(ctx, reuse, b2.ID, late); err != nil {
		t.Fatal(err)
	}
	if c := reserve(reuse, late); c.Number != 2 {
		t.Fatalf("after reuse: %+v", c)
	}
	_ = r4

	// Several stores at once: every number once, all committed.
	shared := idforge.Serial{Name: "many", Template: "M@{seq:n}", Gapless: true}
	const stores, workers, each = 3, 4, 5
	var wg sync.WaitGroup
	errs := make(chan error, stores*workers)
	for range stores {
		s := b.MustOpen(t, u, false).(idforge.GaplessStore)
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range each {
					r, err := s.Reserve(ctx, shared, time.Now(), value)
					if err == nil {
						_, err = s.Commit(ctx, shared, r.ID, time.Now())
					}
					if err != nil {
						errs <- err
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	audit, last, err = gs.Audit(ctx, shared, 1, 1000, time.Now())
	if err != nil || last != stores*workers*each || len(audit) != int(last) {
		t.Fatalf("Audit: %d rows, last %d, %v", len(audit), last, err)
	}
	for i, r := range audit {
		if r.Number != int64(i+1) || r.State != idforge.Committed {
			t.Fatalf("audit[%d] = %+v", i, r)
		}
	}
}

// BenchGapless measures, in one run on one database, a gapless serial's
// reserve-then-commit (two transactions) beside a segment key in node
// order issuing through the same issuer, each from parallel goroutines.
func BenchGapless(b *testing.B, be Backend) {
	ctx := context.Background()
	st := be.Migrated(b, be.NewDatabase(b))
	if err := st.CreateKey(ctx, idforge.Key{Name: "order", Strategy: idforge.StrategySegment, Step: 1000, MaxID: 1}); err != nil {
		b.Fatal(err)
	}
	iss := issuer.New(st, nil, issuer.Settings{Logger: Quiet,
		Serials: []idforge.Serial{{Name: "inv", Template: "INV@{seq:n,width=8}", Gapless: true}}})
	b.Cleanup(func() { iss.Close() })
	b.Run("segment-node-order/Next", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := iss.Next(ctx, "order"); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
	b.Run("gapless/Reserve+Commit", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				r, err := iss.Reserve(ctx, "inv", nil)
				if err == nil {
					_, err = iss.Commit(ctx, "inv", r.ID)
				}
				if err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}
