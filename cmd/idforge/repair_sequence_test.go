package main

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/testsvc"
	"github.com/idforge/idforge/sequence"
	_ "github.com/idforge/idforge/sequence/autoinc"
	_ "github.com/idforge/idforge/sequence/sqlrow"
	"github.com/idforge/idforge/sequence/tickets"
)

// keys repair --sequence: a sqlrow source in the store's database, refused
// after a fail-over, resumes above --floor once the store is repaired.
func TestKeysRepairSequence(t *testing.T) {
	for _, db := range []struct {
		name  string
		fresh func(testing.TB) string
		raw   func(testing.TB, string) *sql.DB
	}{
		{"mariadb", testsvc.MySQL, testsvc.MySQLDB},
		{"postgres", testsvc.Postgres, testsvc.PostgresDB},
	} {
		t.Run(db.name, func(t *testing.T) {
			ctx := context.Background()
			storeURL := db.fresh(t)
			e := env(map[string]string{"IDFORGE_DATA": filepath.Join(t.TempDir(), "d"), "IDFORGE_STORE": storeURL})
			if code, out, stderr := runCmd(t, e, "migrate"); code != 0 {
				t.Fatalf("migrate: %d %q %q", code, out, stderr)
			}
			seqURL := "sqlrow+" + storeURL + "?name=orders"
			if strings.Contains(storeURL, "?") {
				seqURL = "sqlrow+" + storeURL + "&name=orders"
			}
			src, err := sequence.Open(ctx, seqURL)
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			for range 3 {
				if _, err := src.Next(ctx); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := db.raw(t, storeURL).ExecContext(ctx, "UPDATE idforge_fence SET server = 'the old primary'"); err != nil {
				t.Fatal(err)
			}
			if v, err := src.Next(ctx); !errors.Is(err, idforge.ErrStoreFailedOver) {
				t.Fatalf("Next after the fail-over = %d, %v; want ErrStoreFailedOver", v, err)
			}
			if code, out, stderr := runCmd(t, e, "keys", "repair", "--floor", "100", "--wait", "0s", "--counter-floor", "nope", "--sequence", seqURL); code != 2 || !strings.Contains(stderr, "STAMP/N") {
				t.Fatalf("keys repair with a bad --counter-floor: %d %q %q; want exit 2 saying the form", code, out, stderr)
			}
			code, out, stderr := runCmd(t, e, "keys", "repair", "--floor", "100", "--wait", "0s", "--sequence", seqURL)
			if code != 0 || !strings.Contains(out, "sequence rows at 100 or above") {
				t.Fatalf("keys repair --sequence: %d %q %q", code, out, stderr)
			}
			if v, err := src.Next(ctx); err != nil || v != 101 {
				t.Fatalf("Next after the repair = %d, %v; want 101", v, err)
			}
		})
	}
}

// keys repair --sequence autoinc+… and tickets+…: an auto-increment
// source and a ticket server in the store's database, refused after a
// fail-over, resume above --floor once the store is repaired, and not
// before: their rows are raised before any fence accepts the server.
func TestKeysRepairAutoincTickets(t *testing.T) {
	ctx := context.Background()
	storeURL := testsvc.MySQL(t)
	e := env(map[string]string{"IDFORGE_DATA": filepath.Join(t.TempDir(), "d"), "IDFORGE_STORE": storeURL})
	if code, out, stderr := runCmd(t, e, "migrate"); code != 0 {
		t.Fatalf("migrate: %d %q %q", code, out, stderr)
	}
	with := func(u, params string) string {
		if strings.Contains(u, "?") {
			return u + "&" + params
		}
		return u + "?" + params
	}
	autoURL := with("autoinc+"+storeURL, "tables=2&rescue=1ms")
	ticketURL := with("tickets+"+storeURL, "rescue=1ms")
	if _, err := tickets.Expand(ctx, []string{ticketURL}, 1); err != nil {
		t.Fatal(err)
	}
	var srcs []sequence.Source
	for _, u := range []string{autoURL, ticketURL} {
		src, err := sequence.Open(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		for range 3 {
			if _, err := src.Next(ctx); err != nil {
				t.Fatal(err)
			}
		}
		srcs = append(srcs, src)
	}
	if _, err := testsvc.MySQLDB(t, storeURL).ExecContext(ctx, "UPDATE idforge_fence SET server = 'the old primary'"); err != nil {
		t.Fatal(err)
	}
	for _, src := range srcs {
		if v, err := src.Next(ctx); !errors.Is(err, idforge.ErrStoreFailedOver) {
			t.Fatalf("Next after the fail-over = %d, %v; want ErrStoreFailedOver", v, err)
		}
	}
	code, out, stderr := runCmd(t, e, "keys", "repair", "--floor", "1000", "--wait", "0s", "--sequence", autoURL, "--sequence", ticketURL)
	if code != 0 || !strings.Contains(out, "auto-increment tables issue values above 1000") || !strings.Contains(out, "issues tickets above 1001") {
		t.Fatalf("keys repair --sequence autoinc, tickets: %d %q %q", code, out, stderr)
	}
	for _, src := range srcs {
		for range 4 { // both auto-increment tables
			if v, err := src.Next(ctx); err != nil || v <= 1000 {
				t.Fatalf("Next after the repair = %d, %v; want above 1000", v, err)
			}
		}
	}
	if code, out, stderr := runCmd(t, e, "keys", "repair", "--floor", "1000", "--wait", "0s", "--force", "--sequence", with("autoinc+sqlite:///"+filepath.Join(t.TempDir(), "a.db"), "tables=1")); code != 2 || !strings.Contains(stderr, "no failover fence") {
		t.Fatalf("keys repair --sequence of an SQLite autoinc source: %d %q %q; want exit 2: SQLite has no fence", code, out, stderr)
	}
}
