// Package sqltest holds the tests the SQL backends (store/mysql,
// store/postgres, store/sqlite) share, beyond storetest's conformance
// suite: Leaf's own table used in place, migration, several stores on one
// database, rows a hand edit got wrong, and, for the servers, outages and
// timeouts through a proxy and error hygiene. Each backend's tests call
// Run with a Backend made of their own fixtures:
//
//	func TestSQLStore(t *testing.T) { sqltest.Run(t, backend) }
package sqltest

import (
	"context"
	"database/sql"
	"log/slog"
	"net/url"
	"testing"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/e2e"
)

// Quiet is the logger the backends' test stores log to: nowhere.
var Quiet = slog.New(slog.DiscardHandler)

// Store is what a SQL backend's *Store provides.
type Store interface {
	idforge.Store
	idforge.SegmentReturner
	idforge.Migrator
	idforge.SerialStore
	idforge.DefinitionStore
}

// Backend is one SQL backend's fixtures.
type Backend struct {
	// NewDatabase creates an empty database, dropped when tb ends, and
	// returns its store URL (testsvc.MySQL). An embedded database's file
	// need not exist yet.
	NewDatabase func(tb testing.TB) string
	// RawDB opens the database of a store URL with the driver directly,
	// for SQL a test runs by hand (testsvc.MySQLDB).
	RawDB func(tb testing.TB, storeURL string) *sql.DB
	// Open opens a store on a store URL with the backend's ParseURL and
	// Open, logging to Quiet and with Config.ForMigrate as given. It
	// returns a nil Store with its error.
	Open func(ctx context.Context, storeURL string, forMigrate bool) (Store, error)
	// UnreachableURL is a store URL with the password "s3cret-pw" and a
	// short timeout, naming a server nobody listens on.
	UnreachableURL string

	// DescribeTable returns a table's definition as the server reports
	// it; it must not change while the table does not.
	DescribeTable func(tb testing.TB, db *sql.DB, table string) string
	// CheckMigratedSchema checks what DescribeTable reports of the
	// tables Migrate creates: the definitions of leaf_alloc, idforge_keys
	// and idforge_serials, in that order, joined by newlines.
	CheckMigratedSchema func(t *testing.T, schema string)

	// LeafDDL creates leaf_alloc as Leaf (or its port to the server)
	// does, and LeafRow inserts the row Leaf's scripts add; in both, %s is
	// the name of the description column.
	LeafDDL, LeafRow string
	// LeafIgnoresCase says that the table LeafDDL creates compares names
	// without regard to case (MySQL's default collation).
	LeafIgnoresCase bool
	// BeforeLeafTable, if set, prepares a new database before LeafDDL
	// runs in it.
	BeforeLeafTable func(t *testing.T, storeURL string)

	// Embedded says that the database is a file the store owns, not a
	// server: Open creates the missing tables (so no database lacks
	// them for long), and there is no connection to cut or slow down
	// and no password to hide. The cases about those are skipped.
	Embedded bool
}

// skipEmbedded skips a case that needs a database server.
func (b Backend) skipEmbedded(t *testing.T, why string) {
	if b.Embedded {
		t.Skip("an embedded database has " + why)
	}
}

// MustOpen opens a store on storeURL and closes it when tb ends.
func (b Backend) MustOpen(tb testing.TB, storeURL string, forMigrate bool) Store {
	tb.Helper()
	st, err := b.Open(context.Background(), storeURL, forMigrate)
	if err != nil {
		tb.Fatalf("Open: %v", err)
	}
	tb.Cleanup(func() {
		if err := st.Close(); err != nil {
			tb.Errorf("Close: %v", err)
		}
	})
	return st
}

// Migrated opens a store on storeURL, closed when tb ends, and runs
// Migrate.
func (b Backend) Migrated(tb testing.TB, storeURL string) Store {
	tb.Helper()
	st := b.MustOpen(tb, storeURL, true)
	if err := st.Migrate(context.Background()); err != nil {
		tb.Fatalf("Migrate: %v", err)
	}
	return st
}

// Fresh opens a migrated store on a new database.
func (b Backend) Fresh(tb testing.TB) Store {
	tb.Helper()
	return b.Migrated(tb, b.NewDatabase(tb))
}

// MustExec runs a statement on db or ends the test.
func MustExec(t *testing.T, db *sql.DB, query string, args ...any) {
	t.Helper()
	if _, err := db.Exec(query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

// MustClaim claims a segment or ends the test.
func MustClaim(t *testing.T, st idforge.Store, key string, step int64) idforge.Segment {
	t.Helper()
	seg, err := st.ClaimSegment(context.Background(), key, step)
	if err != nil {
		t.Fatalf("ClaimSegment(%q, %d): %v", key, step, err)
	}
	return seg
}

// WantSegment ends the test unless got is want.
func WantSegment(t *testing.T, got, want idforge.Segment) {
	t.Helper()
	if got != want {
		t.Fatalf("segment = %+v, want %+v", got, want)
	}
}

// MustCreateSerial stores a serial definition or ends the test.
func MustCreateSerial(t *testing.T, st idforge.SerialStore, def idforge.Serial) {
	t.Helper()
	if err := st.CreateSerial(context.Background(), def); err != nil {
		t.Fatalf("CreateSerial(%q): %v", def.Name, err)
	}
}

// SegKey returns a segment key.
func SegKey(name string, maxID, step int64) idforge.Key {
	return idforge.Key{Name: name, Strategy: idforge.StrategySegment, MaxID: maxID, Step: step}
}

// viaProxy returns rawURL pointed at a proxy in front of its server.
func viaProxy(t *testing.T, rawURL string, query string) (string, *e2e.Proxy) {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	p := e2e.StartProxy(t, u.Host)
	u.Host = p.Addr()
	u.RawQuery = query
	return u.String(), p
}
