package sqlrow_test

import (
	"context"
	"errors"
	"testing"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/testsvc"
	"github.com/idforge/idforge/sequence"
	"github.com/idforge/idforge/sequence/internal/seqtest"
	"github.com/idforge/idforge/sequence/sqlrow"
)

// TestFailoverFence: when idforge_fence names another server than the
// one the database runs on (as on a replica promoted after a fail-over
// that lost the last increments), a source and a counter store, also ones
// opened afterwards, refuse with ErrStoreFailedOver and change no row;
// RepairFailover raises the rows and accepts the server, and they resume
// above the floor.
func TestFailoverFence(t *testing.T) {
	for _, be := range backends[:2] { // SQLite has no replica to fail over to
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db := be.fresh(t)
			raw := be.pool(t, db)
			exec := func(q string, args ...any) {
				t.Helper()
				if _, err := raw.ExecContext(ctx, rebind(be.name, q), args...); err != nil {
					t.Fatal(err)
				}
			}
			src, err := sequence.Open(ctx, "sqlrow+"+withParams(db, "name=orders"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { src.Close() })
			next := func(s sequence.Source, want int64) {
				t.Helper()
				if v, err := s.Next(ctx); err != nil || v != want {
					t.Fatalf("Next = %d, %v; want %d", v, err, want)
				}
			}
			for want := int64(1); want <= 3; want++ {
				next(src, want)
			}
			cs, err := sqlrow.NewCounterStore(be.pool(t, db), sqlrow.CounterStoreConfig{})
			if err != nil {
				t.Fatal(err)
			}
			count := func(cs *sqlrow.CounterStore, name string, stamp int64, want sequence.CountResult) {
				t.Helper()
				if got, err := cs.Count(ctx, sequence.CountRequest{Name: name, Stamp: stamp}); err != nil || got != want {
					t.Fatalf("Count(%s, %d) = %+v, %v; want %+v", name, stamp, got, err, want)
				}
			}
			count(cs, "now", 5, sequence.CountResult{Stamp: 5, N: 1})
			count(cs, "now", 5, sequence.CountResult{Stamp: 5, N: 2})
			count(cs, "behind", 4, sequence.CountResult{Stamp: 4, N: 1}) // a row that lost the roll-over to period 5
			count(cs, "ahead", 6, sequence.CountResult{Stamp: 6, N: 1})

			exec("UPDATE idforge_fence SET server = 'the old primary'")
			later, err := sequence.Open(ctx, "sqlrow+"+withParams(db, "name=orders"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { later.Close() })
			laterCS, err := sqlrow.NewCounterStore(be.pool(t, db), sqlrow.CounterStoreConfig{})
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range []sequence.Source{src, later} {
				if v, err := s.Next(ctx); !errors.Is(err, idforge.ErrStoreFailedOver) {
					t.Fatalf("Next after the fail-over = %d, %v; want ErrStoreFailedOver", v, err)
				}
			}
			for _, c := range []*sqlrow.CounterStore{cs, laterCS} {
				if got, err := c.Count(ctx, sequence.CountRequest{Name: "now", Stamp: 5}); !errors.Is(err, idforge.ErrStoreFailedOver) {
					t.Fatalf("Count after the fail-over = %+v, %v; want ErrStoreFailedOver", got, err)
				}
			}
			var v, n int64
			if err := raw.QueryRowContext(ctx, rebind(be.name, "SELECT current_value FROM idforge_sequence WHERE name = ?"), "orders").Scan(&v); err != nil || v != 3 {
				t.Fatalf("row after refused Next = %d, %v; want 3 (nothing handed out)", v, err)
			}
			if err := raw.QueryRowContext(ctx, rebind(be.name, "SELECT n FROM idforge_counter WHERE name = ?"), "now").Scan(&n); err != nil || n != 2 {
				t.Fatalf("counter after refused Count = %d, %v; want 2", n, err)
			}

			if _, err := sqlrow.RepairFailover(ctx, raw, sqlrow.Repair{}); !errors.Is(err, idforge.ErrInvalidArgument) {
				t.Fatalf("RepairFailover without a floor: %v, want ErrInvalidArgument", err)
			}
			if _, err := sqlrow.RepairFailover(ctx, raw, sqlrow.Repair{Floor: 100}); !errors.Is(err, idforge.ErrInvalidArgument) {
				t.Fatalf("RepairFailover without a counter floor: %v, want ErrInvalidArgument", err)
			}
			if _, err := sqlrow.RepairFailover(ctx, raw, sqlrow.Repair{Floor: 90, CounterFloor: sequence.Mark{N: 1}, NoAccept: true}); err != nil {
				t.Fatal(err)
			}
			if v, err := src.Next(ctx); !errors.Is(err, idforge.ErrStoreFailedOver) {
				t.Fatalf("Next after a repair that did not accept = %d, %v; want ErrStoreFailedOver", v, err)
			}
			before, err := sqlrow.RepairFailover(ctx, raw, sqlrow.Repair{Floor: 100, CounterFloor: sequence.Mark{Stamp: 5, N: 50}})
			if err != nil || before.Recorded != "the old primary" || before.Current == "" || !before.FailedOver() {
				t.Fatalf("RepairFailover = %+v, %v", before, err)
			}
			next(src, 101)
			next(later, 102)
			count(cs, "now", 5, sequence.CountResult{Stamp: 5, N: 51})
			count(laterCS, "behind", 5, sequence.CountResult{Stamp: 5, N: 51})
			count(cs, "ahead", 6, sequence.CountResult{Stamp: 6, N: 2})

			// A fence whose row is gone stays closed.
			exec("DELETE FROM idforge_fence")
			if v, err := src.Next(ctx); !errors.Is(err, idforge.ErrStoreFailedOver) {
				t.Fatalf("Next with the fence's row gone = %d, %v; want ErrStoreFailedOver", v, err)
			}
			if err := sqlrow.MigrateSource(ctx, raw, sqlrow.DefaultSourceTable); err != nil {
				t.Fatal(err)
			}
			if _, err := src.Next(ctx); !errors.Is(err, idforge.ErrStoreFailedOver) {
				t.Fatalf("Next after MigrateSource on a fence without its row: %v; want ErrStoreFailedOver", err)
			}
			if _, err := sequence.RepairFailover(ctx, "sqlrow+"+withParams(db, "name=orders"), sequence.Repair{Floor: 1, CounterFloor: sequence.Mark{N: 1}}); err != nil {
				t.Fatalf("RepairFailover: %v", err)
			}
			next(src, 103)
		})
	}
}

// BenchmarkFence: what the failover fence costs a value (the EXISTS on
// idforge_fence in the UPDATE), next to a source on a database whose
// fence was dropped.
//
// postgres-async commits without waiting for the WAL flush
// (synchronous_commit=off), so that the fence's own cost shows beside
// a commit's fsync, which dominates on a busy disk.
func BenchmarkFence(b *testing.B) {
	async := backend{name: "postgres-async", fresh: func(tb testing.TB) string {
		return withParams(testsvc.Postgres(tb), "synchronous_commit=off")
	}, pool: testsvc.PostgresDB}
	for _, be := range append(backends[:2:2], async) {
		b.Run(be.name, func(b *testing.B) {
			ctx := context.Background()
			fenced, unfenced := be.fresh(b), be.fresh(b)
			once, err := sequence.Open(ctx, "sqlrow+"+withParams(unfenced, "name=bench"))
			if err != nil {
				b.Fatal(err)
			}
			once.Close()
			if _, err := be.pool(b, unfenced).ExecContext(ctx, "DROP TABLE idforge_fence"); err != nil {
				b.Fatal(err)
			}
			var srcs []sequence.Source
			for _, u := range []string{withParams(fenced, "name=bench"), withParams(unfenced, "name=bench&create=false")} {
				s, err := sequence.Open(ctx, "sqlrow+"+u)
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { s.Close() })
				srcs = append(srcs, s)
			}
			seqtest.BenchFence(b, srcs[0], srcs[1])
		})
	}
}
