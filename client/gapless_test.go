package client

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/store/sqlite"
)

// A gapless serial's steps through every mode of the client, on SQLite:
// the answers, and each error as its sentinel.
func TestGapless(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			ctx := testCtx(t)
			st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "idforge.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			n := newNode(t, st, 1, 1000)
			if err := n.iss.CreateSerial(ctx, idforge.Serial{Name: "inv", Template: "INV@{seq:n,width=4}", Gapless: true}); err != nil {
				t.Fatal(err)
			}
			c := m.new(t, []*node{n})
			defer c.Close()
			wantErr := func(err, want error) {
				t.Helper()
				if !errors.Is(err, want) {
					t.Fatalf("err = %v, want %v", err, want)
				}
			}
			r1, err := c.Reserve(ctx, "inv", nil)
			if err != nil || r1.Number != 1 || r1.Value != "INV0001" || r1.State != idforge.Reserved || r1.Expires.IsZero() {
				t.Fatalf("Reserve = %+v, %v", r1, err)
			}
			if r, err := c.Commit(ctx, "inv", r1.ID); err != nil || r.State != idforge.Committed || r.Number != 1 {
				t.Fatalf("Commit = %+v, %v", r, err)
			}
			_, err = c.Commit(ctx, "inv", r1.ID)
			wantErr(err, idforge.ErrAlreadyCommitted)
			r2, err := c.Reserve(ctx, "inv", nil)
			if err != nil {
				t.Fatal(err)
			}
			if r, err := c.Void(ctx, "inv", r2.ID, "cancelled"); err != nil || r.State != idforge.Voided || r.Reason != "cancelled" {
				t.Fatalf("Void = %+v, %v", r, err)
			}
			_, err = c.Commit(ctx, "inv", r2.ID)
			wantErr(err, idforge.ErrReservationVoided)
			_, err = c.Commit(ctx, "inv", "5-0123456789abcdef")
			wantErr(err, idforge.ErrUnknownReservation)
			_, err = c.NextSerial(ctx, "inv", 1, nil)
			wantErr(err, idforge.ErrWrongStrategy)
			rs, last, err := c.Audit(ctx, "inv", 1, 0)
			if err != nil || last != 2 || len(rs) != 2 || rs[0].State != idforge.Committed || rs[1].Reason != "cancelled" {
				t.Fatalf("Audit = %+v, %d, %v", rs, last, err)
			}
		})
	}
}
