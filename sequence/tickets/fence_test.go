package tickets_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/testsvc"
	"github.com/idforge/idforge/sequence/internal/seqtest"
	"github.com/idforge/idforge/sequence/tickets"
)

// TestFailoverFence: a ticket server's database fails over to a replica
// that lacks the last tickets (its auto-increment counter is back where
// it was two tickets ago, and idforge_fence names the old primary).
// Sources, running and opened afterwards, hand out nothing from it and
// answer ErrStoreFailedOver, inserting nothing; RepairFailover raises the
// server above the floor and accepts it, and tickets resume above every
// ticket handed out: none repeats.
func TestFailoverFence(t *testing.T) {
	ctx := context.Background()
	srv := servers(t, 1)
	expand(t, srv, 1)
	raw := testsvc.MySQLDB(t, strings.TrimPrefix(srv[0], "tickets+"))
	src := open(t, clientURL(t, srv, ""))
	var issued []int64
	for range 5 {
		v, err := src.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		issued = append(issued, v)
	}
	// The replica received the first three tickets only.
	replica := issued[2]
	for _, q := range []string{
		"DELETE FROM tickets",
		"INSERT INTO tickets (id, stub) VALUES (?, 'a')",
		"ALTER TABLE tickets AUTO_INCREMENT = 1", // InnoDB sets it just above the largest id
		"UPDATE idforge_fence SET server = 'the old primary'",
	} {
		var args []any
		if strings.Contains(q, "?") {
			args = append(args, replica)
		}
		if _, err := raw.ExecContext(ctx, q, args...); err != nil {
			t.Fatal(err)
		}
	}
	later := open(t, clientURL(t, srv, ""))
	for _, s := range []interface {
		Next(context.Context) (int64, error)
	}{src, later} {
		v, err := s.Next(ctx)
		if !errors.Is(err, idforge.ErrStoreFailedOver) || idforge.ErrorCode(err) != idforge.CodeStoreFailedOver ||
			!strings.Contains(err.Error(), "the old primary") || !strings.Contains(err.Error(), "idforge keys repair") {
			t.Fatalf("Next after the fail-over = %d, %v; want ErrStoreFailedOver naming the old primary and the repair", v, err)
		}
	}
	var top int64
	if err := raw.QueryRowContext(ctx, "SELECT MAX(id) FROM tickets").Scan(&top); err != nil || top != replica {
		t.Fatalf("largest ticket after refused Next = %d, %v; want %d (nothing inserted)", top, err, replica)
	}

	floor := issued[len(issued)-1]
	if _, err := tickets.RepairFailover(ctx, srv, tickets.Repair{Floor: 0}); !errors.Is(err, idforge.ErrInvalidArgument) {
		t.Fatalf("RepairFailover with floor 0: %v; want ErrInvalidArgument", err)
	}
	// Raised without accepting: still refused, and a second raise leaves
	// no second gap.
	held, err := tickets.RepairFailover(ctx, srv, tickets.Repair{Floor: floor, NoAccept: true})
	if err != nil || len(held) != 1 || held[0].Base <= floor || held[0].Before.Recorded != "the old primary" {
		t.Fatalf("RepairFailover NoAccept = %+v, %v", held, err)
	}
	if v, err := later.Next(ctx); !errors.Is(err, idforge.ErrStoreFailedOver) {
		t.Fatalf("Next after a repair that did not accept = %d, %v; want ErrStoreFailedOver", v, err)
	}
	done, err := tickets.RepairFailover(ctx, srv, tickets.Repair{Floor: floor})
	if err != nil || len(done) != 1 || done[0].Base != held[0].Base || !done[0].Before.FailedOver() {
		t.Fatalf("RepairFailover = %+v, %v; want base %d kept", done, err, held[0].Base)
	}
	// A server that failed is left aside for the rescue time (20ms here):
	// a new source takes it at once.
	again := open(t, clientURL(t, srv, ""))
	for range 5 {
		v, err := again.Next(ctx)
		if err != nil || v <= floor {
			t.Fatalf("Next after the repair = %d, %v; want above %d", v, err, floor)
		}
		issued = append(issued, v)
	}
	seqtest.Unique(t, issued)
	if got, err := tickets.RepairFailover(ctx, srv, tickets.Repair{Floor: floor}); err != nil || got[0].Before.FailedOver() {
		t.Fatalf("RepairFailover of a healthy server = %+v, %v", got, err)
	}
}

// BenchmarkFence: what the failover fence costs a ticket (the EXISTS on
// idforge_fence in the REPLACE), next to a server whose fence was
// dropped. One server.
func BenchmarkFence(b *testing.B) {
	fenced, unfenced := servers(b, 1), servers(b, 1)
	expand(b, fenced, 1)
	expand(b, unfenced, 1)
	if _, err := testsvc.MySQLDB(b, strings.TrimPrefix(unfenced[0], "tickets+")).ExecContext(context.Background(), "DROP TABLE idforge_fence"); err != nil {
		b.Fatal(err)
	}
	seqtest.BenchFence(b, open(b, clientURL(b, fenced, "")), open(b, clientURL(b, unfenced, "")))
}
