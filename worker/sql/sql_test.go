package sql_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/e2e"
	"github.com/idforge/idforge/internal/testsvc"
	"github.com/idforge/idforge/worker"
	sqlworker "github.com/idforge/idforge/worker/sql"
	"github.com/idforge/idforge/worker/workertest"
)

// stale is the stale_after of the tests: short, so that takeovers happen
// within the test, and long enough for renewals on a loaded machine.
const stale = 2 * time.Second // generous: the suite must pass on a loaded machine

var quiet = slog.New(slog.DiscardHandler)

// backend is one database the provider runs on.
type backend struct {
	name string
	// fresh returns the worker URL of an empty database.
	fresh func(t *testing.T) string
	// open opens a URL from fresh for SQL the test runs by hand.
	open func(tb testing.TB, rawURL string) *sql.DB
	// hourAgo is the database's own time an hour ago, as SQL.
	hourAgo string
	// down is a URL of the server that does not answer, with the password
	// s3cret; empty for SQLite.
	down string
}

var backends = []backend{
	{"mysql", func(t *testing.T) string { return testsvc.MySQL(t) }, testsvc.MySQLDB,
		"UTC_TIMESTAMP(3) - INTERVAL 1 HOUR",
		"mysql://root:s3cret@127.0.0.1:1/idforge?timeout=500ms"},
	{"postgres", func(t *testing.T) string { return testsvc.Postgres(t) }, testsvc.PostgresDB,
		"now() - interval '1 hour'",
		"postgres://postgres:s3cret@127.0.0.1:1/idforge?sslmode=disable&timeout=500ms"},
	{"sqlite", func(t *testing.T) string {
		return "sqlite://" + filepath.ToSlash(filepath.Join(t.TempDir(), "workers.db"))
	}, openSQLite, "strftime('%Y-%m-%d %H:%M:%f', 'now', '-3600 seconds')", ""},
}

func openSQLite(tb testing.TB, rawURL string) *sql.DB {
	tb.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		tb.Fatal(err)
	}
	db, err := sql.Open("sqlite", u.Path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

// rawDB opens the database of a worker URL for SQL the test runs by hand.
func rawDB(t *testing.T, b backend, workerURL string) *sql.DB {
	t.Helper()
	u, err := url.Parse(workerURL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Del("stale_after")
	q.Del("timeout")
	u.RawQuery = q.Encode()
	return b.open(t, u.String())
}

// each runs f on every backend, in parallel.
func each(t *testing.T, f func(t *testing.T, b backend)) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			f(t, b)
		})
	}
}

// workerURL returns b's fresh URL with stale_after and the given
// parameters (name, value, …).
func workerURL(t *testing.T, b backend, params ...string) string {
	t.Helper()
	u, err := url.Parse(b.fresh(t))
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("stale_after", stale.String())
	for i := 0; i+1 < len(params); i += 2 {
		q.Set(params[i], params[i+1])
	}
	u.RawQuery = q.Encode()
	return migrated(t, u.String())
}

// migrated creates the provider's table in the database of a worker URL,
// as `idforge migrate` does before nodes start, and returns the URL.
func migrated(t *testing.T, rawURL string) string {
	t.Helper()
	p := workertest.Open(t, rawURL, worker.Options{Logger: quiet})
	if _, err := p.(*sqlworker.Provider).Migrate(context.Background()); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	return rawURL
}

// Issue 24, item 8: on a database server the provider never creates its
// table; Acquire refuses, saying to run idforge migrate, which creates it
// (once: a second run creates nothing). A SQLite file gets it at once.
func TestTableOnlyByMigrate(t *testing.T) {
	each(t, func(t *testing.T, b backend) {
		u := b.fresh(t)
		p := workertest.Open(t, u, worker.Options{Owner: "n:1", Logger: quiet})
		if b.down == "" { // SQLite
			workertest.Acquire(t, p, 3)
			return
		}
		_, err := p.Acquire(context.Background(), 3)
		if !errors.Is(err, idforge.ErrInvalidArgument) || !strings.Contains(err.Error(), "run `idforge migrate`") {
			t.Fatalf("Acquire on a database without the table: %v; want ErrInvalidArgument saying to run idforge migrate", err)
		}
		var n int
		if rawDB(t, b, u).QueryRowContext(context.Background(), "SELECT COUNT(*) FROM idforge_workers").Scan(&n) == nil {
			t.Fatal("Acquire created idforge_workers")
		}
		for run, want := range []string{sqlworker.Table, ""} {
			created, err := p.(*sqlworker.Provider).Migrate(context.Background())
			if err != nil || strings.Join(created, ",") != want {
				t.Fatalf("Migrate, run %d: %q, %v; want %q", run+1, created, err, want)
			}
		}
		workertest.Acquire(t, p, 3)
	})
}

// Issue 27, item 5: a table of a version before the clock check, without
// clock_ms, gets the column from idforge migrate (from the first Acquire
// on SQLite); until then a server's Acquire refuses, saying so.
func TestMigrateAddsClockColumn(t *testing.T) {
	each(t, func(t *testing.T, b backend) {
		u := b.fresh(t)
		timeType := map[string]string{"mysql": "DATETIME(3)", "postgres": "timestamptz", "sqlite": "TEXT"}[b.name]
		db := rawDB(t, b, u)
		exec(t, db, "CREATE TABLE idforge_workers (worker_id INTEGER NOT NULL PRIMARY KEY, owner VARCHAR(255) NOT NULL, "+
			"claimed_at "+timeType+", heartbeat_at "+timeType+", last_ms BIGINT NOT NULL DEFAULT 0)")
		exec(t, db, "INSERT INTO idforge_workers (worker_id, owner, last_ms) VALUES (-1, '#claim-lock', 0)")
		p := workertest.Open(t, u, worker.Options{Owner: "n:1", Logger: quiet})
		if b.down != "" {
			_, err := p.Acquire(context.Background(), 3)
			if !errors.Is(err, idforge.ErrInvalidArgument) || !strings.Contains(err.Error(), "clock_ms: run `idforge migrate`") {
				t.Fatalf("Acquire on a table without clock_ms: %v; want ErrInvalidArgument saying to run idforge migrate", err)
			}
			if _, err := p.(*sqlworker.Provider).Migrate(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		workertest.Acquire(t, p, 3)
		var clock int64
		if err := db.QueryRowContext(context.Background(), "SELECT clock_ms FROM idforge_workers WHERE owner = 'n:1'").Scan(&clock); err != nil || clock <= 0 {
			t.Fatalf("clock_ms of the holder: %d, %v; want its clock", clock, err)
		}
	})
}

// Issue 27, item 2: an ip+ URL holds the ID of the node's address in
// idforge_workers, so a second live node whose address gives the same
// ID is refused, saying who holds it; it starts once the ID is free, and
// an address that differs in those bits gets its own ID.
func TestIPWorkerCollision(t *testing.T) {
	each(t, func(t *testing.T, b backend) {
		u := workerURL(t, b)
		node := func(addr string) worker.Provider {
			return workertest.Open(t, "ip+"+u+"&bits=8&addr="+addr, worker.Options{Owner: addr + ":8080", Logger: quiet})
		}
		first := workertest.Acquire(t, node("10.0.1.5"), 1023)
		second := node("10.0.2.5")
		_, err := second.Acquire(context.Background(), 1023)
		if !errors.Is(err, idforge.ErrWorkersExhausted) || !strings.Contains(err.Error(), `worker ID 5: the low 8 bits of IPv4 address 10.0.2.5 is held by "10.0.1.5:8080"`) {
			t.Fatalf("second node with worker ID 5: %v; want ErrWorkersExhausted naming the holder", err)
		}
		if l := workertest.Acquire(t, node("10.0.2.6"), 1023); l.ID() != 6 {
			t.Fatalf("10.0.2.6 got worker ID %d, want 6", l.ID())
		}
		if _, err := node("10.0.2.7").Acquire(context.Background(), 127); !errors.Is(err, idforge.ErrInvalidWorker) {
			t.Fatalf("bits=8 in a 7-bit layout: %v, want ErrInvalidWorker", err)
		}
		if err := first.Release(context.Background()); err != nil {
			t.Fatal(err)
		}
		if l := workertest.Acquire(t, second, 1023); l.ID() != 5 || !strings.Contains(second.Describe(), "the low 8 bits of IPv4 address 10.0.2.5") {
			t.Fatalf("after the release: worker ID %d from %q, want 5 from 10.0.2.5", l.ID(), second.Describe())
		}
	})
}

func exec(t *testing.T, db *sql.DB, q string) {
	t.Helper()
	if _, err := db.ExecContext(context.Background(), q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func TestConformance(t *testing.T) {
	each(t, func(t *testing.T, b backend) {
		f := workertest.Fixture{
			Namespace: func(t *testing.T) workertest.Namespace {
				u := workerURL(t, b)
				return namespace(u, rawDB(t, b, u))
			},
			TTL:       stale,
			Exhausted: "0..2",
		}
		if b.down != "" { // the networked ones
			f.Down = func(t *testing.T, opts worker.Options) (worker.Provider, string) {
				u, _ := url.Parse(b.down)
				return workertest.Open(t, b.down, opts), u.Redacted()
			}
			f.Secret = "s3cret"
			f.Outage = func(t *testing.T) (workertest.Namespace, workertest.Link) {
				// A longer stale_after: the lease must outlive reconnecting.
				target := workerURL(t, b, "stale_after", "3s", "timeout", "500ms")
				db := rawDB(t, b, target)
				tu, _ := url.Parse(target)
				link := e2e.StartProxy(t, tu.Host)
				viaProxy := *tu
				viaProxy.Host = link.Addr()
				return namespace(viaProxy.String(), db), link
			}
		}
		workertest.Run(t, f)
	})
}

// namespace gives the suite the providers of a worker URL, and reaches
// into their rows directly through db.
func namespace(rawURL string, db *sql.DB) workertest.Namespace {
	return workertest.Namespace{
		Open: func(t *testing.T, opts worker.Options) worker.Provider { return workertest.Open(t, rawURL, opts) },
		// A node killed: no release, no renewals.
		Kill: func(p worker.Provider) { p.(io.Closer).Close() },
		Holder: func(t *testing.T, id int64) string {
			var owner string
			db.QueryRowContext(context.Background(), fmt.Sprintf("SELECT owner FROM idforge_workers WHERE worker_id = %d", id)).Scan(&owner)
			return owner
		},
		SetHolder: func(t *testing.T, id int64, owner string) {
			exec(t, db, fmt.Sprintf("UPDATE idforge_workers SET owner = '%s' WHERE worker_id = %d", owner, id))
		},
		// A row released by hand.
		Free: func(t *testing.T, id int64, last time.Time) {
			set := "owner = ''"
			if !last.IsZero() {
				set += fmt.Sprintf(", last_ms = %d", last.UnixMilli())
			}
			exec(t, db, fmt.Sprintf("UPDATE idforge_workers SET %s WHERE worker_id = %d", set, id))
		},
	}
}

// aheadClock is a node clock an hour fast.
type aheadClock struct{}

func (aheadClock) Now() time.Time        { return time.Now().Add(time.Hour) }
func (aheadClock) Sleep(d time.Duration) { time.Sleep(d) }

// Staleness is judged by the database's clock: a node whose clock is an
// hour fast does not see a fresh row as stale, and a row whose heartbeat
// the database dates an hour back is free at once, whatever the nodes'
// clocks say.
func TestStalenessUsesDatabaseClock(t *testing.T) {
	each(t, func(t *testing.T, b backend) {
		// A long stale_after: only the database's clock can make the
		// row stale within the test.
		u := workerURL(t, b, "stale_after", "30s")
		db := rawDB(t, b, u)
		held := workertest.Acquire(t, workertest.Open(t, u, worker.Options{Owner: "holder:1"}), 0)
		fast := workertest.Open(t, u, worker.Options{Owner: "fast:1", Clock: aheadClock{}})
		if _, err := fast.Acquire(context.Background(), 0); !errors.Is(err, idforge.ErrWorkersExhausted) {
			t.Fatalf("node with a fast clock: %v, want ErrWorkersExhausted", err)
		}
		exec(t, db, "UPDATE idforge_workers SET heartbeat_at = "+b.hourAgo+" WHERE worker_id = 0")
		l, err := workertest.Open(t, u, worker.Options{Owner: "other:1"}).Acquire(context.Background(), 0)
		if err != nil {
			t.Fatalf("row dated an hour back by the database: %v", err)
		}
		defer l.Release(context.Background())
		if l.ID() != held.ID() {
			t.Fatalf("got %d, want the stale %d", l.ID(), held.ID())
		}
	})
}

func TestURLErrors(t *testing.T) {
	workertest.InvalidURLs(t, "pw",
		"mysql://root:pw@127.0.0.1:3306/",
		"mysql://root:pw@127.0.0.1:3306/db?stale_after=soon",
		"mysql://root:pw@127.0.0.1:3306/db?stale_after=0s",
		"mysql://root:pw@127.0.0.1:3306/db?timeout=-1s",
		"postgres://u:pw@127.0.0.1:5432/db?sslmode=bogus",
		"postgresql://u:pw@127.0.0.1:5432/db?stale_after=1",
		"sqlite://host/file.db",
		"sqlite:///tmp/x.db?busy_timeout=1s",
	)
	p := workertest.Open(t, "postgres://u:pw@db.example:5432/ids?sslmode=disable&stale_after=20s", worker.Options{})
	if d := p.Describe(); !strings.Contains(d, "idforge_workers") || !strings.Contains(d, "20s") || strings.Contains(d, "pw") {
		t.Errorf("Describe() = %q", d)
	}
}

func TestNew(t *testing.T) {
	if _, err := sqlworker.New(sqlworker.Config{Dialect: sqlworker.MySQL}, worker.Options{}); !errors.Is(err, idforge.ErrInvalidArgument) {
		t.Fatalf("New without a DB: %v", err)
	}
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "new.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := sqlworker.New(sqlworker.Config{DB: db, Dialect: "oracle"}, worker.Options{}); !errors.Is(err, idforge.ErrInvalidArgument) {
		t.Fatalf("New with an unknown dialect: %v", err)
	}
	p, err := sqlworker.New(sqlworker.Config{DB: db, Dialect: sqlworker.SQLite}, worker.Options{Owner: "me:1", Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	l, err := p.Acquire(context.Background(), 3)
	if err != nil {
		t.Fatal(err)
	}
	l.Release(context.Background())
	// Close leaves a DB it was given open.
	p.Close()
	if err := db.Ping(); err != nil {
		t.Fatalf("Close closed the caller's DB: %v", err)
	}
}

// Across a fail-over to a MariaDB replica that lacks the last claims, no
// worker ID goes to two live nodes: the holder's renewal on the promoted
// replica reports the lease lost, and a node starting there (where the
// holder's row may be missing) is refused with ErrStoreFailedOver until
// the new server is accepted, which `idforge keys repair` does only after
// a full stale_after.
func TestFailoverNoWorkerIDTwice(t *testing.T) {
	testsvc.Slow(t)
	primary := testsvc.StartMariaDB(t, 1)
	replica := testsvc.StartMariaDB(t, 2)
	link := e2e.StartProxy(t, primary.Addr())
	replica.ReplicateFrom(link.Addr())
	primary.Exec("CREATE DATABASE idf")
	u := migrated(t, "mysql://root@"+primary.Addr()+","+replica.Addr()+"/idf?timeout=1s&stale_after="+stale.String())

	first := workertest.Acquire(t, workertest.Open(t, u, worker.Options{Owner: "first:1", Logger: quiet}), 3)
	// The replica misses the second node's claim.
	waitReplicated(t, replica)
	link.Cut()
	second := workertest.Acquire(t, workertest.Open(t, u, worker.Options{Owner: "second:1", Logger: quiet}), 3)
	primary.Kill()
	replica.Promote()

	for _, l := range []worker.Lease{first, second} {
		select {
		case <-l.Done():
		case <-time.After(10 * stale):
			t.Fatalf("lease on worker ID %d still live %s after the fail-over", l.ID(), 10*stale)
		}
	}
	_, err := workertest.Open(t, u, worker.Options{Owner: "third:1", Logger: quiet}).Acquire(context.Background(), 3)
	if !errors.Is(err, idforge.ErrStoreFailedOver) {
		t.Fatalf("a new node's Acquire on the promoted replica: %v, want ErrStoreFailedOver", err)
	}
}

// waitReplicated waits until the replica has applied what it received.
func waitReplicated(t *testing.T, replica *testsvc.MariaDBServer) {
	t.Helper()
	db := replica.DB()
	defer db.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var n int
		if err := db.QueryRow("SELECT COUNT(*) FROM idf.idforge_workers WHERE owner = 'first:1'").Scan(&n); err == nil && n == 1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the replica has not applied the first claim after 30s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
