package shards_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/doctor"
	"github.com/idforge/idforge/internal/testsvc"
	"github.com/idforge/idforge/issuer"
	"github.com/idforge/idforge/node"
	"github.com/idforge/idforge/segment"
	"github.com/idforge/idforge/sequence"
	"github.com/idforge/idforge/store"
	_ "github.com/idforge/idforge/store/all"
	"github.com/idforge/idforge/store/shards"
	"github.com/idforge/idforge/store/storetest"
)

// shardsURL lists the databases of store URLs (one scheme) as a set.
func shardsURL(t *testing.T, urls ...string) string {
	t.Helper()
	first, err := url.Parse(urls[0])
	if err != nil {
		t.Fatal(err)
	}
	q := first.Query()
	for _, raw := range urls[1:] {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		also := u.Host + u.Path
		if u.Scheme == "sqlite" {
			also = u.Path
		}
		q.Add("also", also)
	}
	first.Scheme = "shards+" + first.Scheme
	first.RawQuery = q.Encode()
	return first.String()
}

var quiet = slog.New(slog.DiscardHandler)

// openSet migrates the set and opens it.
func openSet(t *testing.T, raw string) *shards.Store {
	t.Helper()
	ctx := context.Background()
	m, err := store.Open(ctx, raw, store.Options{ForMigrate: true, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	err = m.(idforge.Migrator).Migrate(ctx)
	m.Close()
	if err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	st, err := store.Open(ctx, raw, store.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st.(*shards.Store)
}

func sqliteURL(t *testing.T, name string) string {
	return "sqlite://" + filepath.Join(t.TempDir(), name)
}

func TestConformanceSQLite(t *testing.T) {
	storetest.RunWith(t, func(t *testing.T) idforge.Store {
		return openSet(t, shardsURL(t, sqliteURL(t, "a.db"), sqliteURL(t, "b.db"), sqliteURL(t, "c.db")))
	}, storetest.Options{Blocks: true})
}

func TestConformanceMySQL(t *testing.T) {
	storetest.RunWith(t, func(t *testing.T) idforge.Store {
		return openSet(t, shardsURL(t, testsvc.MySQL(t), testsvc.MySQL(t)))
	}, storetest.Options{Blocks: true})
}

func TestConformancePostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: two PostgreSQL databases a case take minutes; MySQL and SQLite run the suite")
	}
	storetest.RunWith(t, func(t *testing.T) idforge.Store {
		return openSet(t, shardsURL(t, testsvc.Postgres(t), testsvc.Postgres(t)))
	}, storetest.Options{Blocks: true})
}

// TestResidues: database i hands out the blocks ≡ i (mod N), round robin.
func TestResidues(t *testing.T) {
	ctx := context.Background()
	st := openSet(t, shardsURL(t, sqliteURL(t, "a.db"), sqliteURL(t, "b.db"), sqliteURL(t, "c.db")))
	if err := st.CreateKey(ctx, idforge.Key{Name: "orders", Strategy: idforge.StrategySegment, MaxID: 100, Step: 10}); err != nil {
		t.Fatal(err)
	}
	for i := range int64(7) {
		seg, err := st.ClaimSegment(ctx, "orders", 500)
		if err != nil {
			t.Fatal(err)
		}
		want := idforge.Segment{Start: 100 + 10*i, End: 110 + 10*i, Step: 10}
		if seg != want {
			t.Fatalf("claim %d = %+v, want %+v", i, seg, want)
		}
	}
	if k, err := st.Key(ctx, "orders"); err != nil || k.Step != 10 || k.MaxID != 170 {
		t.Fatalf("Key = %+v, %v; want step 10, max_id 170", k, err)
	}
}

// TestGrowthRefused: a URL that lists more databases than the set was
// made with, or lists them in another order, is refused by Open and by
// Migrate, and nothing changes.
func TestGrowthRefused(t *testing.T) {
	ctx := context.Background()
	a, b, c := sqliteURL(t, "a.db"), sqliteURL(t, "b.db"), sqliteURL(t, "c.db")
	st := openSet(t, shardsURL(t, a, b))
	if err := st.CreateKey(ctx, idforge.Key{Name: "orders", Strategy: idforge.StrategySegment, MaxID: 1, Step: 10}); err != nil {
		t.Fatal(err)
	}
	for _, raw := range []string{shardsURL(t, a, b, c), shardsURL(t, b, a), shardsURL(t, a)} {
		_, err := store.Open(ctx, raw, store.Options{})
		if !errors.Is(err, idforge.ErrInvalidArgument) || !strings.Contains(err.Error(), "database") {
			t.Errorf("Open(%s) = %v, want ErrInvalidArgument", raw, err)
		}
		m, err := store.Open(ctx, raw, store.Options{ForMigrate: true, Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		err = m.(idforge.Migrator).Migrate(ctx)
		m.Close()
		if !errors.Is(err, idforge.ErrInvalidArgument) {
			t.Errorf("Migrate(%s) = %v, want ErrInvalidArgument", raw, err)
		}
	}
	// A database that held keys before it joined is refused as well.
	if _, err := store.Open(ctx, shardsURL(t, a, c), store.Options{}); !errors.Is(err, idforge.ErrInvalidArgument) {
		t.Errorf("Open with a foreign database = %v", err)
	}
	seg, err := st.ClaimSegment(ctx, "orders", 0)
	if err != nil || seg.Start != 1 {
		t.Fatalf("claim after the refusals = %+v, %v", seg, err)
	}
}

// recorder notes each segment handed out and whether its claim began
// after the second database was stopped.
type recorder struct {
	idforge.Store
	stopped func() bool
	mu      sync.Mutex
	segs    []idforge.Segment
	after   []bool
}

func (r *recorder) ClaimSegment(ctx context.Context, key string, step int64) (idforge.Segment, error) {
	after := r.stopped()
	seg, err := r.Store.ClaimSegment(ctx, key, step)
	if err == nil {
		r.mu.Lock()
		r.segs, r.after = append(r.segs, seg), append(r.after, after)
		r.mu.Unlock()
	}
	return seg, err
}

// TestOneDatabaseStopped: two MariaDB servers, eight clients on two
// nodes issuing for 10 s, the second server killed half-way. Nothing is
// issued twice, no client sees an error, every block keeps its
// database's residue, and once the server is gone only the first
// database's residue is handed out. Readiness and doctor show the set
// degraded; a node opens with the database down, and once it restarts
// its blocks come back, skipping ahead of each node's last.
func TestOneDatabaseStopped(t *testing.T) {
	ctx := context.Background()
	second := testsvc.StartMariaDB(t, 2)
	second.Exec("CREATE DATABASE idforge_shards")
	raw := shardsURL(t, testsvc.MySQL(t), "mysql://root@"+second.Addr()+"/idforge_shards")
	const step, first = 50, 1
	setup := openSet(t, raw+"&rescue=1s")
	if err := setup.CreateKey(ctx, idforge.Key{Name: "orders", Strategy: idforge.StrategySegment, MaxID: first, Step: step}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	stopped := false
	isStopped := func() bool { mu.Lock(); defer mu.Unlock(); return stopped }
	var nodes []*recorder
	var allocs []*segment.Allocator
	for range 2 {
		st := openSet(t, raw+"&rescue=1s")
		r := &recorder{Store: st, stopped: isStopped}
		nodes = append(nodes, r)
		a := segment.New(r, "orders", segment.Settings{})
		t.Cleanup(func() { a.Close() })
		allocs = append(allocs, a)
	}
	// The clients issue until done: at least 10 s, and until the
	// second database served and, once it was stopped, the first
	// served alone.
	var done atomic.Bool
	began := time.Now()
	got := make([][]int64, 8)
	errs := make(chan error, 8)
	var wg sync.WaitGroup
	for c := range 8 {
		wg.Go(func() {
			for !done.Load() {
				v, err := allocs[c%2].Next(ctx)
				if err != nil {
					errs <- fmt.Errorf("client %d: %w", c, err)
					return
				}
				got[c] = append(got[c], v)
			}
		})
	}
	count := func(want func(seg idforge.Segment, after bool) bool) (n int) {
		for _, r := range nodes {
			r.mu.Lock()
			for i, seg := range r.segs {
				if want(seg, r.after[i]) {
					n++
				}
			}
			r.mu.Unlock()
		}
		return n
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for limit := time.Now().Add(2 * time.Minute); !cond(); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(limit) {
				t.Fatalf("waited 2 minutes for %s", what)
			}
		}
	}
	waitFor("blocks from the second database", func() bool {
		return time.Since(began) > 3*time.Second && count(func(seg idforge.Segment, _ bool) bool { return (seg.Start-first)/step%2 == 1 }) > 0
	})
	second.Kill()
	mu.Lock()
	stopped = true
	mu.Unlock()
	waitFor("blocks claimed after the stop", func() bool {
		return time.Since(began) > 10*time.Second && count(func(_ idforge.Segment, after bool) bool { return after }) >= 20
	})
	done.Store(true)
	wg.Wait()
	for _, a := range allocs {
		a.Close() // no claim in the background from here on
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	seen := map[int64]bool{}
	total := 0
	for _, vs := range got {
		for _, v := range vs {
			if seen[v] {
				t.Fatalf("%d issued twice", v)
			}
			seen[v] = true
		}
		total += len(vs)
	}
	residues := [2]int{}
	afterStop := 0
	for _, r := range nodes {
		for i, seg := range r.segs {
			block := seg.Start - first
			if block%step != 0 || seg.Len() != step {
				t.Fatalf("segment [%d, %d) is not a block of %d", seg.Start, seg.End, step)
			}
			res := block / step % 2
			residues[res]++
			if r.after[i] {
				afterStop++
				if res != 0 {
					t.Errorf("segment [%d, %d), claimed after the second database stopped, has its residue", seg.Start, seg.End)
				}
			}
		}
	}
	t.Logf("%d IDs issued; blocks by residue %v, %d claimed after the stop", total, residues, afterStop)
	if residues[1] == 0 || afterStop == 0 {
		t.Fatalf("the test did not issue from both databases and then from one: residues %v, %d after", residues, afterStop)
	}
	if err := setup.Ping(ctx); err != nil {
		t.Fatalf("Ping with one database up: %v", err)
	}
	if st := setup.Status(); st.Health != sequence.Degraded || st.Members[1].State != sequence.MemberEjected {
		t.Fatalf("Status = %+v, want degraded with database 1 ejected", st)
	}
	// Readiness (/readyz, gRPC health, /v1/node, metrics read the same
	// sources) says degraded, and still serving; doctor names the
	// database that is down.
	iss := issuer.New(setup, nil, issuer.Settings{Logger: quiet})
	defer iss.Close()
	r := iss.Readiness(ctx)
	if r.Status != issuer.Degraded || len(r.Sources) != 1 || r.Sources[0].Name != issuer.StoreSource {
		t.Fatalf("Readiness = %+v, want degraded by the store's databases", r)
	}
	dataDir := t.TempDir()
	var findings []string
	for _, f := range doctor.Run(ctx, doctor.Config{Node: node.Settings{Store: raw, DataDir: dataDir, Logger: quiet}}) {
		if strings.HasPrefix(f.Check, "database ") || f.Check == "store" {
			findings = append(findings, fmt.Sprintf("%s %s: %s", f.Status, f.Check, f.Message))
		}
	}
	if len(findings) != 2 || !strings.HasPrefix(findings[0], "ok database") || !strings.HasPrefix(findings[1], "warn database mysql://root@"+second.Addr()) {
		t.Fatalf("doctor said:\n%s", strings.Join(findings, "\n"))
	}

	// A node that starts while the second database is down issues from
	// the first; once it is back, both nodes reach it again, and its
	// blocks, behind the first database's, skip ahead of every block
	// each node handed out.
	late, err := store.Open(ctx, raw+"&rescue=1s", store.Options{Logger: quiet})
	if err != nil {
		t.Fatalf("Open with the second database down: %v", err)
	}
	defer late.Close()
	if _, err := late.ClaimSegment(ctx, "orders", 0); err != nil {
		t.Fatalf("claim with the second database down: %v", err)
	}
	second.Restart()
	for _, st := range []idforge.Store{late, nodes[0].Store} {
		var high int64
		waitFor("a block from the restarted database", func() bool {
			seg, err := st.ClaimSegment(ctx, "orders", 0)
			if err != nil {
				t.Fatalf("claim after the restart: %v", err)
			}
			if seg.Start < high {
				t.Fatalf("block [%d, %d) below one handed out before, ending at %d", seg.Start, seg.End, high)
			}
			high = seg.End
			return (seg.Start-first)/step%2 == 1
		})
	}
}

// TestNoDatabaseAnswers: Open fails when no database of the set answers,
// with an error that says so and keeps the password out.
func TestNoDatabaseAnswers(t *testing.T) {
	_, err := store.Open(context.Background(), "shards+mysql://u:s3cret-pw@127.0.0.1:1/db?also=127.0.0.1:2/db&timeout=1s", store.Options{Logger: quiet})
	if !errors.Is(err, idforge.ErrUnavailable) || !strings.Contains(err.Error(), "no database answers") || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("Open = %v, want ErrUnavailable naming no password", err)
	}
}
