package tickets_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/testsvc"
	"github.com/idforge/idforge/sequence"
	"github.com/idforge/idforge/sequence/internal/seqtest"
	"github.com/idforge/idforge/sequence/tickets"
)

// servers creates n fresh databases on the one MariaDB server, each a
// ticket server of its own (their auto_increment_increment and _offset
// are set per session, as the server variables are shared), and returns
// their tickets+mysql URLs.
func servers(tb testing.TB, n int) []string {
	tb.Helper()
	out := make([]string, n)
	for i := range out {
		out[i] = "tickets+" + testsvc.MySQL(tb)
	}
	return out
}

// clientURL is a source URL over the given servers.
func clientURL(tb testing.TB, srv []string, params string) string {
	tb.Helper()
	var also []string
	for _, s := range srv[1:] {
		u, err := url.Parse(s)
		if err != nil {
			tb.Fatal(err)
		}
		also = append(also, u.Host+u.Path)
	}
	q := "rescue=20ms"
	if len(also) > 0 {
		q += "&also=" + strings.Join(also, ",")
	}
	if params != "" {
		q += "&" + params
	}
	return srv[0] + "?" + q
}

func open(tb testing.TB, raw string) sequence.Source {
	tb.Helper()
	s, err := sequence.Open(context.Background(), raw)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

func expand(tb testing.TB, srv []string, n int, opts ...tickets.ExpandOption) tickets.ExpandResult {
	tb.Helper()
	res, err := tickets.Expand(context.Background(), srv, n, opts...)
	if err != nil {
		tb.Fatalf("Expand to %d: %v", n, err)
	}
	return res
}

func TestConcurrent(t *testing.T) {
	srv := servers(t, 2)
	expand(t, srv, 2)
	raw := clientURL(t, srv, "")
	got := seqtest.Collect(t, func(tb testing.TB) idforge.Generator { return open(tb, raw) }, 4, 8, 40)
	seqtest.Unique(t, got)
	odd := 0
	for _, v := range got {
		odd += int(v % 2)
	}
	if odd == 0 || odd == len(got) {
		t.Fatalf("%d of %d tickets odd: both servers should issue", odd, len(got))
	}
}

// issuer keeps taking tickets from a source until stopped.
type issuer struct {
	mu   sync.Mutex
	vals []int64
	errs []error
	wg   sync.WaitGroup
	stop chan struct{}
}

func startIssuing(srcs []sequence.Source, workers int) *issuer {
	is := &issuer{stop: make(chan struct{})}
	for _, s := range srcs {
		for range workers {
			is.wg.Go(func() {
				ctx := context.Background()
				for {
					select {
					case <-is.stop:
						return
					default:
					}
					v, err := s.Next(ctx)
					is.mu.Lock()
					if err != nil {
						is.errs = append(is.errs, err)
					} else {
						is.vals = append(is.vals, v)
					}
					is.mu.Unlock()
					if err != nil {
						time.Sleep(time.Millisecond)
					}
				}
			})
		}
	}
	return is
}

func (is *issuer) count() int {
	is.mu.Lock()
	defer is.mu.Unlock()
	return len(is.vals)
}

// waitFor lets the issuers issue n more tickets.
func (is *issuer) waitFor(tb testing.TB, n int) {
	tb.Helper()
	target := is.count() + n
	deadline := time.Now().Add(20 * time.Second)
	for is.count() < target {
		if time.Now().After(deadline) {
			tb.Fatalf("issuers stalled at %d tickets", is.count())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (is *issuer) finish() ([]int64, []error) {
	close(is.stop)
	is.wg.Wait()
	return is.vals, is.errs
}

// TestExpandWhileIssuing: two servers issue under load from clients that
// list two servers and clients that list three (the third not configured
// yet); Expand moves the set to three servers in the middle. No ticket
// repeats before, during or after.
func TestExpandWhileIssuing(t *testing.T) {
	srv := servers(t, 3)
	init := expand(t, srv[:2], 2)
	if !init.Changed || init.After[0].Servers != 2 || init.After[1].Position != 2 {
		t.Fatalf("initial configuration: %+v", init.After)
	}
	var srcs []sequence.Source
	for range 2 {
		srcs = append(srcs, open(t, clientURL(t, srv[:2], "")), open(t, clientURL(t, srv, "")))
	}
	is := startIssuing(srcs, 4)
	is.waitFor(t, 300)
	res := expand(t, srv, 3)
	before := is.count()
	is.waitFor(t, 300)
	vals, errs := is.finish()
	for _, err := range errs {
		t.Errorf("issuing: %v", err)
	}
	seqtest.Unique(t, vals)
	t.Logf("%d tickets, %d before the expansion returned; new base %d", len(vals), before, res.Base)

	for i, st := range res.After {
		if !st.Configured || st.Servers != 3 || st.Position != int64(i+1) || st.Ceiling != 0 || st.Base <= res.Base {
			t.Fatalf("server %d after expansion: %+v (base %d)", i+1, st, res.Base)
		}
	}
	// After: tickets from all three servers, all above the new base.
	fresh := open(t, clientURL(t, srv, ""))
	residues := map[int64]int{}
	var after []int64
	for range 30 {
		v, err := fresh.Next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if v <= res.Base {
			t.Fatalf("ticket %d after the expansion is not above its base %d", v, res.Base)
		}
		residues[v%3]++
		after = append(after, v)
	}
	if len(residues) != 3 {
		t.Fatalf("residues mod 3 after the expansion: %v", residues)
	}
	seqtest.Unique(t, append(vals, after...))

	// Running it again changes nothing.
	if again := expand(t, srv, 3); again.Changed {
		t.Fatalf("a second Expand to 3 changed the servers: %+v", again.After)
	}
}

// TestExpandSmallHeadroom: with a headroom of a few tickets, running
// servers reach their ceilings before they are switched; they stop
// issuing for a moment, and still nothing repeats.
func TestExpandSmallHeadroom(t *testing.T) {
	srv := servers(t, 4)
	expand(t, srv[:2], 2)
	srcs := []sequence.Source{open(t, clientURL(t, srv[:2], "")), open(t, clientURL(t, srv, ""))}
	is := startIssuing(srcs, 4)
	is.waitFor(t, 200)
	var steps []string
	expand(t, srv, 4, tickets.WithHeadroom(3), tickets.WithProgress(func(s string) { steps = append(steps, s) }))
	is.waitFor(t, 200)
	vals, errs := is.finish()
	for _, err := range errs {
		if !errors.Is(err, idforge.ErrUnavailable) {
			t.Errorf("issuing: %v", err)
		}
	}
	seqtest.Unique(t, vals)
	if len(steps) != 6 || !strings.HasPrefix(steps[0], "capped") || !strings.Contains(steps[2], "server 3 of 4") {
		t.Fatalf("steps %q: want 2 caps, then new servers first", steps)
	}
}

// TestInterruptedExpansion: an expansion that stopped after capping and
// switching part of the set is finished by running it again.
func TestInterruptedExpansion(t *testing.T) {
	srv := servers(t, 3)
	expand(t, srv[:2], 2)
	src := open(t, clientURL(t, srv, ""))
	ctx := context.Background()
	var vals []int64
	take := func(n int) {
		for range n {
			v, err := src.Next(ctx)
			if err != nil {
				t.Fatal(err)
			}
			vals = append(vals, v)
		}
	}
	take(20)
	// Simulate a run that died after its first switch: both servers are
	// capped, and the new third server was switched with a base of its
	// own (2000001 ≡ 0 mod 3 is the ticket the switch inserted).
	dbs := make([]interface {
		ExecContext(context.Context, string, ...any) (sql.Result, error)
		QueryRowContext(context.Context, string, ...any) *sql.Row
	}, 3)
	for i := range dbs {
		dbs[i] = testsvc.MySQLDB(t, strings.TrimPrefix(srv[i], "tickets+"))
	}
	var cluster string
	if err := dbs[0].QueryRowContext(ctx, "SELECT cluster FROM tickets_config").Scan(&cluster); err != nil {
		t.Fatal(err)
	}
	for _, d := range dbs[:2] {
		if _, err := d.ExecContext(ctx, "UPDATE tickets_config SET ceiling = (SELECT MAX(id) FROM tickets) + 5, gen = gen + 1"); err != nil {
			t.Fatal(err)
		}
	}
	expand(t, srv[2:], 1) // creates the third server's tables
	for _, q := range []string{
		"REPLACE INTO tickets (id, stub) VALUES (2000001, 'a')",
		"UPDATE tickets_config SET servers = 3, position = 3, base = 2000001, ceiling = 0, gen = gen + 1, cluster = '" + cluster + "'",
	} {
		if _, err := dbs[2].ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	take(20)
	res := expand(t, srv, 3)
	take(30)
	seqtest.Unique(t, vals)
	if res.Base < 2000001 {
		t.Fatalf("new base %d does not cover the interrupted run's base", res.Base)
	}
}

func TestExpandRefuses(t *testing.T) {
	srv := servers(t, 4)
	expand(t, srv[:2], 2)
	other := servers(t, 1)
	expand(t, other, 1)
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		list []string
		n    int
	}{
		{"count differs", srv[:3], 2},
		{"shrink", srv[:1], 1},
		{"server missing", []string{srv[0], srv[2], srv[3]}, 3},
		{"server replaced", []string{srv[0], srv[2]}, 2},
		{"wrong order", []string{srv[1], srv[0], srv[2]}, 3},
		{"listed twice", []string{srv[0], srv[1], srv[1]}, 3},
		{"another set", []string{srv[0], srv[1], other[0]}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tickets.Expand(ctx, tc.list, tc.n)
			if !errors.Is(err, idforge.ErrInvalidArgument) {
				t.Fatalf("Expand: %v, want ErrInvalidArgument", err)
			}
		})
	}
	st, err := tickets.Status(ctx, srv)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range st {
		if configured := i < 2; s.Configured != configured || (configured && (s.Servers != 2 || s.Ceiling != 0)) {
			t.Fatalf("a refused Expand changed server %d: %+v", i+1, s)
		}
	}
}

func TestOpen(t *testing.T) {
	srv := servers(t, 2)
	ctx := context.Background()
	if _, err := sequence.Open(ctx, clientURL(t, srv, "")); err == nil {
		t.Fatal("Open over unconfigured servers succeeded")
	}
	for _, bad := range []string{
		srv[0] + "?table=bad-name",
		srv[0] + "?auto_increment_increment=2",
		srv[0] + "?also=nohost",
	} {
		if _, err := sequence.Open(ctx, bad); !errors.Is(err, idforge.ErrInvalidArgument) {
			t.Errorf("Open(%s): %v, want ErrInvalidArgument", bad, err)
		}
	}
	// One server down: the other serves alone.
	expand(t, srv, 2)
	s := open(t, clientURL(t, srv, ""))
	db := testsvc.MySQLDB(t, strings.TrimPrefix(srv[1], "tickets+"))
	if _, err := db.ExecContext(ctx, "DROP TABLE tickets"); err != nil {
		t.Fatal(err)
	}
	for range 10 {
		v, err := s.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if v%2 != 1 {
			t.Fatalf("ticket %d from the broken server", v)
		}
	}
}

func BenchmarkSourceNext(b *testing.B) {
	for _, n := range []int{1, 2} {
		b.Run(fmt.Sprintf("servers=%d", n), func(b *testing.B) {
			srv := servers(b, n)
			expand(b, srv, n)
			s := open(b, clientURL(b, srv, ""))
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.Next(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
