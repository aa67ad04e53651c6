package worker_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/snowflake"
	"github.com/idforge/idforge/worker"
	_ "github.com/idforge/idforge/worker/sql" // sqlite:// worker IDs, a coordinator with no server
	"github.com/idforge/idforge/worker/workertest"
)

// generator is a snowflake generator as a worker.Target.
type generator struct{ *snowflake.Generator }

func (g generator) Bind(l worker.Lease) error { return g.Rebind(l.ID(), l.LastTime(), l) }

// Owners of worker IDs: this node and another that takes its ID over.
const (
	self     = "10.0.0.1:8080"
	intruder = "10.0.0.2:8080"
)

// coordinator returns the worker URL of a fresh SQLite coordinator, and
// its database for reaching into the rows behind the holders' backs.
// Rows go stale 3 s after their last heartbeat, far beyond the moments
// between steps of a test, so only the test frees an ID.
func coordinator(t *testing.T) (string, *sql.DB) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "workers.db")
	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return "sqlite://" + filepath.ToSlash(path) + "?stale_after=3s", db
}

// supervised is a generator issuing with a supervised lease on an ID in
// [0, max], with the IDs it issued so far.
type supervised struct {
	t    *testing.T
	gen  *snowflake.Generator
	sup  *worker.Supervisor
	logs workertest.LogBuffer
	last int64
}

func supervise(t *testing.T, workers string, max int64) *supervised {
	t.Helper()
	s := &supervised{t: t}
	p := workertest.Open(t, workers, worker.Options{Owner: self})
	first := workertest.Acquire(t, p, max)
	var err error
	s.gen, err = snowflake.New(snowflake.Settings{Worker: first.ID(), NotBefore: first.LastTime(), Guard: first, Logger: s.logs.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	s.sup = worker.Supervise(p, max, first, generator{s.gen}, worker.WithLogger(s.logs.Logger()), worker.WithReportInterval(20*time.Millisecond))
	t.Cleanup(func() { s.gen.Close(); s.sup.Close() })
	return s
}

// issue issues one ID; IDs must strictly increase, whatever the lease.
func (s *supervised) issue() error {
	id, err := s.gen.Next(context.Background())
	if err == nil {
		if id <= s.last {
			s.t.Fatalf("ID %d after %d", id, s.last)
		}
		s.last = id
	}
	return err
}

// takeOver makes intruder the holder of id, as another node that got the
// ID while this one could not renew, and returns its lease.
func takeOver(t *testing.T, workers string, db *sql.DB, id int64) worker.Lease {
	t.Helper()
	if _, err := db.Exec("UPDATE idforge_workers SET owner = ?, heartbeat_at = strftime('%Y-%m-%d %H:%M:%f', 'now') WHERE worker_id = ?", intruder, id); err != nil {
		t.Fatal(err)
	}
	// A node finds its own row, as after a restart, and holds it.
	l, err := workertest.Open(t, workers, worker.Options{Owner: intruder}).Acquire(context.Background(), id)
	if err != nil || l.ID() != id {
		t.Fatalf("the intruder acquired %v, %v; want worker ID %d", l, err, id)
	}
	t.Cleanup(func() { l.Release(context.Background()) })
	return l
}

// waitLost waits for l to end.
func waitLost(t *testing.T, l worker.Lease) {
	t.Helper()
	select {
	case <-l.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("lease not lost 10 s after another node took its ID")
	}
}

// A lease lost to another node stops the generator until the only ID is
// free again; then the Supervisor acquires it, binds the generator after
// the time the other node recorded, and issuing goes on. Close gives the
// ID back with the newest time issued, for the next holder.
func TestSupervisorSurvivesLostLease(t *testing.T) {
	t.Parallel()
	workers, db := coordinator(t)
	s := supervise(t, workers, 0)
	first := s.sup.Lease()
	for range 100 {
		if err := s.issue(); err != nil {
			t.Fatal(err)
		}
	}

	taken := takeOver(t, workers, db, 0)
	waitLost(t, first)
	for range 20 {
		if err := s.issue(); !errors.Is(err, idforge.ErrLeaseLost) {
			t.Fatalf("issued while another node holds the worker ID: %v, want ErrLeaseLost", err)
		}
		time.Sleep(10 * time.Millisecond)
	}

	// The other node issued until a moment ahead, and gives the ID back.
	handedOver := time.Now().Add(300 * time.Millisecond).Truncate(time.Millisecond)
	taken.Report(handedOver)
	if err := taken.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	workertest.WaitFor(t, "issuing again", 15*time.Second, func() bool {
		err := s.issue()
		if err != nil && !errors.Is(err, idforge.ErrLeaseLost) && !errors.Is(err, idforge.ErrClockMovedBackwards) {
			t.Fatalf("while the ID is re-acquired: %v", err)
		}
		return err == nil
	})
	if l := s.sup.Lease(); l == first || l.ID() != 0 {
		t.Fatalf("current lease %v (worker %d): want a new one on worker ID 0", l, l.ID())
	}
	p, err := s.gen.Layout().Explain(s.last)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Time.After(handedOver) {
		t.Fatalf("first ID after the rebind is of %v, not after %v, which the other holder recorded", p.Time, handedOver)
	}
	logs := s.logs.String()
	if !strings.Contains(logs, "lease lost") || !strings.Contains(logs, "worker ID re-acquired") {
		t.Errorf("the log does not tell the loss and the new lease:\n%s", logs)
	}

	s.gen.Close()
	if err := s.sup.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.sup.Done():
	default:
		t.Fatal("Done not closed after Close")
	}
	var owner string
	var lastMs int64
	if err := db.QueryRow("SELECT owner, last_ms FROM idforge_workers WHERE worker_id = 0").Scan(&owner, &lastMs); err != nil {
		t.Fatal(err)
	}
	if owner != "" || lastMs < s.gen.LastIssued().UnixMilli() {
		t.Fatalf("after Close the row has owner %q, last %d; want it released with the newest issued time %d",
			owner, lastMs, s.gen.LastIssued().UnixMilli())
	}
}

// With another ID free, the Supervisor moves the generator to it at once.
func TestSupervisorMovesToAnotherID(t *testing.T) {
	t.Parallel()
	workers, db := coordinator(t)
	s := supervise(t, workers, 1)
	first := s.sup.Lease()
	if err := s.issue(); err != nil {
		t.Fatal(err)
	}
	takeOver(t, workers, db, first.ID())
	waitLost(t, first)
	workertest.WaitFor(t, "issuing again", 15*time.Second, func() bool { return s.issue() == nil })
	p, err := s.gen.Layout().Explain(s.last)
	if err != nil {
		t.Fatal(err)
	}
	if want := 1 - first.ID(); p.Worker != want || s.sup.Lease().ID() != want {
		t.Fatalf("issuing with worker ID %d, lease on %d; want the free ID %d", p.Worker, s.sup.Lease().ID(), want)
	}
}

// Close ends an attempt to re-acquire under way: it does not wait for an
// ID that another node holds.
func TestSupervisorCloseWhileReacquiring(t *testing.T) {
	t.Parallel()
	workers, db := coordinator(t)
	s := supervise(t, workers, 0)
	first := s.sup.Lease()
	takeOver(t, workers, db, 0)
	waitLost(t, first)
	s.gen.Close()
	closed := make(chan error, 1)
	go func() { closed <- s.sup.Close() }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close still waiting 10 s later")
	}
	if s.sup.Lease() != first {
		t.Fatal("a lease was acquired while another node holds the only ID")
	}
}
