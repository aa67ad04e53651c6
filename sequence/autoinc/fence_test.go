package autoinc_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/testsvc"
	"github.com/idforge/idforge/sequence/autoinc"
	"github.com/idforge/idforge/sequence/internal/seqtest"
)

// TestFailoverFence: when idforge_fence names another server (a replica
// promoted after a fail-over that lost inserts), the source inserts
// nothing and answers ErrStoreFailedOver; RepairFailover raises the table
// and accepts the server, and ids resume above the floor.
func TestFailoverFence(t *testing.T) {
	for _, be := range []struct {
		name  string
		fresh func(testing.TB) string
		raw   func(testing.TB, string) *sql.DB
	}{
		{"mysql", testsvc.MySQL, testsvc.MySQLDB},
		{"postgres", testsvc.Postgres, testsvc.PostgresDB},
	} {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			a := be.fresh(t)
			s := open(t, withParams("autoinc+"+a, "tables=1"))
			raw := be.raw(t, a)
			for want := int64(1); want <= 3; want++ {
				if v, err := s.Next(ctx); err != nil || v != want {
					t.Fatalf("Next = %d, %v; want %d", v, err, want)
				}
			}
			if _, err := raw.ExecContext(ctx, "UPDATE idforge_fence SET server = 'the old primary'"); err != nil {
				t.Fatal(err)
			}
			later := open(t, withParams("autoinc+"+a, "tables=1"))
			for _, src := range []*autoinc.Source{s, later} {
				if v, err := src.Next(ctx); !errors.Is(err, idforge.ErrStoreFailedOver) {
					t.Fatalf("Next after the fail-over = %d, %v; want ErrStoreFailedOver", v, err)
				}
			}
			var rows int64
			if err := raw.QueryRowContext(ctx, "SELECT COUNT(*) FROM idforge_autoinc_0").Scan(&rows); err != nil || rows != 3 {
				t.Fatalf("rows after refused Next = %d, %v; want 3 (nothing inserted)", rows, err)
			}
			before, err := autoinc.RepairFailover(ctx, raw, "idforge_autoinc_0", autoinc.Repair{Floor: 100})
			if err != nil || before.Recorded != "the old primary" {
				t.Fatalf("RepairFailover = %+v, %v", before, err)
			}
			// A table that failed is left aside for the rescue time: a new
			// source takes it at once.
			again := open(t, withParams("autoinc+"+a, "tables=1"))
			if v, err := again.Next(ctx); err != nil || v <= 100 {
				t.Fatalf("Next after the repair = %d, %v; want above 100", v, err)
			}
		})
	}
}

// BenchmarkFence: what the failover fence costs a value (the INSERT …
// SELECT … WHERE EXISTS on idforge_fence instead of a plain INSERT), next
// to a source on a database whose fence was dropped. One table.
// postgres-async commits without waiting for the WAL flush
// (synchronous_commit=off), so that the fence's own cost shows beside
// a commit's fsync, which dominates on a busy disk.
func BenchmarkFence(b *testing.B) {
	for _, be := range []struct {
		name  string
		fresh func(testing.TB) string
		raw   func(testing.TB, string) *sql.DB
	}{
		{"mysql", testsvc.MySQL, testsvc.MySQLDB},
		{"postgres", testsvc.Postgres, testsvc.PostgresDB},
		{"postgres-async", func(tb testing.TB) string { return withParams(testsvc.Postgres(tb), "synchronous_commit=off") }, testsvc.PostgresDB},
	} {
		b.Run(be.name, func(b *testing.B) {
			fenced, unfenced := be.fresh(b), be.fresh(b)
			open(b, withParams("autoinc+"+unfenced, "tables=1")).Close()
			if _, err := be.raw(b, unfenced).ExecContext(context.Background(), "DROP TABLE idforge_fence"); err != nil {
				b.Fatal(err)
			}
			seqtest.BenchFence(b, open(b, withParams("autoinc+"+fenced, "tables=1")), open(b, withParams("autoinc+"+unfenced, "tables=1&create=false")))
		})
	}
}
