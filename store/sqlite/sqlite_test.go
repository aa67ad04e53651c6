package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/store"
	"github.com/idforge/idforge/store/internal/sqltest"
	"github.com/idforge/idforge/store/sqlite"
	"github.com/idforge/idforge/store/storetest"
)

var quiet = sqlite.WithLogger(sqltest.Quiet)

var backend = sqltest.Backend{
	NewDatabase:         newDatabase,
	RawDB:               rawDB,
	Open:                open,
	DescribeTable:       describeTable,
	CheckMigratedSchema: checkMigratedSchema,
	LeafDDL:             leafDDL,
	LeafRow:             leafRow,
	Embedded:            true,
}

// newDatabase is sqltest.Backend.NewDatabase: a file, not there yet, in
// a temporary directory.
func newDatabase(tb testing.TB) string {
	return "sqlite://" + filepath.ToSlash(filepath.Join(tb.TempDir(), "idforge.db"))
}

// rawDB opens a store URL's file with database/sql directly, the way an
// operator or Leaf itself would touch the file.
func rawDB(tb testing.TB, storeURL string) *sql.DB {
	tb.Helper()
	u, err := url.Parse(storeURL)
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

// open is sqltest.Backend.Open. ForMigrate makes no difference: Open
// creates the tables.
func open(ctx context.Context, storeURL string, forMigrate bool) (sqltest.Store, error) {
	st, err := store.Open(ctx, storeURL, store.Options{Logger: sqltest.Quiet, ForMigrate: forMigrate})
	if err != nil {
		return nil, err
	}
	return st.(*sqlite.Store), nil
}

func describeTable(tb testing.TB, db *sql.DB, table string) string {
	tb.Helper()
	var ddl string
	if err := db.QueryRow("SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = ?", table).Scan(&ddl); err != nil {
		tb.Fatal(err)
	}
	return ddl
}

func checkMigratedSchema(t *testing.T, schema string) {
	schema = strings.Join(strings.Fields(schema), " ")
	for _, want := range []string{"biz_tag varchar(128) NOT NULL PRIMARY KEY", "max_id bigint NOT NULL DEFAULT 1",
		"step int NOT NULL", "update_time timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP", "strategy varchar(32) NOT NULL",
		"name varchar(128) NOT NULL PRIMARY KEY", "template varchar(1024) NOT NULL", "time_zone varchar(64) NULL"} {
		if !strings.Contains(schema, want) {
			t.Errorf("schema lacks %q:\n%s", want, schema)
		}
	}
}

// leafDDL is Leaf's own table (scripts/leaf_alloc.sql) with the MySQL-only
// parts left out: backquotes, bigint(20)/int(11) widths, ON UPDATE and the
// ENGINE clause. %s is the description column's name.
const leafDDL = `
CREATE TABLE leaf_alloc (
  biz_tag     varchar(128) NOT NULL DEFAULT '',
  max_id      bigint       NOT NULL DEFAULT '1',
  step        int          NOT NULL,
  "%s"        varchar(256) DEFAULT NULL,
  update_time timestamp    NOT NULL DEFAULT CURRENT_TIMESTAMP,
  PRIMARY KEY (biz_tag)
)`

const leafRow = `INSERT INTO leaf_alloc (biz_tag, max_id, step, "%s") VALUES ('leaf-segment-test', 1, 2000, 'Test leaf Segment Mode Get Id')`

// openAt opens a store on path and closes it when the test ends.
func openAt(tb testing.TB, path string) *sqlite.Store {
	tb.Helper()
	st, err := sqlite.Open(context.Background(), path, quiet)
	if err != nil {
		tb.Fatalf("Open(%s): %v", path, err)
	}
	tb.Cleanup(func() {
		if err := st.Close(); err != nil {
			tb.Errorf("Close: %v", err)
		}
	})
	return st
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) idforge.Store { return backend.Fresh(t) })
}

func BenchmarkStore(b *testing.B) {
	storetest.Bench(b, func(b *testing.B) idforge.Store { return backend.Fresh(b) })
}

func TestSQLStore(t *testing.T) { sqltest.Run(t, backend) }

func BenchmarkGapless(b *testing.B) { sqltest.BenchGapless(b, backend) }

func TestReopenContinues(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "nested", "dirs", "idforge.db") // directories are created
	st, err := sqlite.Open(ctx, path, quiet)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CreateKey(ctx, idforge.Key{Name: "orders", Strategy: idforge.StrategySegment, MaxID: 1, Step: 100, Description: "kept"}); err != nil {
		t.Fatal(err)
	}
	if err := st.CreateKey(ctx, idforge.Key{Name: "events", Strategy: idforge.StrategySnowflake}); err != nil {
		t.Fatal(err)
	}
	sqltest.WantSegment(t, sqltest.MustClaim(t, st, "orders", 0), idforge.Segment{Start: 1, End: 101, Step: 100})
	sqltest.WantSegment(t, sqltest.MustClaim(t, st, "orders", 50), idforge.Segment{Start: 101, End: 151, Step: 100})
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	st = openAt(t, path)
	sqltest.WantSegment(t, sqltest.MustClaim(t, st, "orders", 0), idforge.Segment{Start: 151, End: 251, Step: 100})
	keys, err := st.Keys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 2 || keys[0].Name != "events" || keys[1].Name != "orders" || keys[1].Description != "kept" || keys[1].MaxID != 251 {
		t.Fatalf("keys after reopen = %+v", keys)
	}
}

func TestRowAddedByHand(t *testing.T) {
	ctx := context.Background()
	u := backend.NewDatabase(t)
	st := backend.MustOpen(t, u, false)
	sqltest.MustExec(t, rawDB(t, u), `INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('by-hand', 5000, 250)`)

	k, err := st.Key(ctx, "by-hand")
	if err != nil {
		t.Fatal(err)
	}
	if k.Strategy != idforge.StrategySegment || k.MaxID != 5000 || k.Step != 250 || k.Updated.IsZero() {
		t.Fatalf("Key = %+v", k)
	}
	sqltest.WantSegment(t, sqltest.MustClaim(t, st, "by-hand", 0), idforge.Segment{Start: 5000, End: 5250, Step: 250})
	keys, err := st.Keys(ctx)
	if err != nil || len(keys) != 1 || keys[0].MaxID != 5250 {
		t.Fatalf("Keys = %+v, %v", keys, err)
	}
	// The name is taken for CreateKey too.
	err = st.CreateKey(ctx, idforge.Key{Name: "by-hand", Strategy: idforge.StrategySnowflake})
	if !errors.Is(err, idforge.ErrKeyExists) {
		t.Fatalf("CreateKey over a hand-made row: %v", err)
	}
}

// TestUpdateTimeAsText: SQLite keeps update_time as text. A Leaf row's
// reads as the instant it names, and a row CreateKey adds holds
// CURRENT_TIMESTAMP's form, as Leaf's would.
func TestUpdateTimeAsText(t *testing.T) {
	ctx := context.Background()
	u := backend.NewDatabase(t)
	db := rawDB(t, u)
	sqltest.MustExec(t, db, fmt.Sprintf(leafDDL, "description"))
	sqltest.MustExec(t, db, `INSERT INTO leaf_alloc (biz_tag, max_id, step, update_time) VALUES ('leaf', 1, 2000, '2019-03-07 10:12:33')`)
	st := backend.MustOpen(t, u, false)
	k, err := st.Key(ctx, "leaf")
	if want := time.Date(2019, 3, 7, 10, 12, 33, 0, time.UTC); err != nil || !k.Updated.Equal(want) {
		t.Errorf("Key(leaf) = %+v, %v; want Updated %v", k, err, want)
	}
	if err := st.CreateKey(ctx, sqltest.SegKey("new", 7, 3)); err != nil {
		t.Fatal(err)
	}
	var updated string
	if err := db.QueryRow(`SELECT CAST(update_time AS TEXT) FROM leaf_alloc WHERE biz_tag = 'new'`).Scan(&updated); err != nil {
		t.Fatal(err)
	}
	if _, err := time.Parse(time.DateTime, updated); err != nil {
		t.Errorf("update_time %q is not CURRENT_TIMESTAMP's form: %v", updated, err)
	}
}

// TestNonIntegerRows: SQLite lets a hand edit store any value in max_id
// and step. Such rows are refused with a clear error and never changed.
func TestNonIntegerRows(t *testing.T) {
	ctx := context.Background()
	u := backend.NewDatabase(t)
	st := backend.MustOpen(t, u, false)
	db := rawDB(t, u)
	sqltest.MustExec(t, db, `INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES
		('real-max', 1.5, 10), ('text-max', 'abc', 10), ('real-step', 1, 2.5)`)
	for _, key := range []string{"real-max", "text-max", "real-step"} {
		for _, step := range []int64{0, 5} {
			_, err := st.ClaimSegment(ctx, key, step)
			if !errors.Is(err, idforge.ErrInvalidArgument) || !strings.Contains(err.Error(), key) {
				t.Errorf("ClaimSegment(%q, %d): %v; want ErrInvalidArgument naming the key", key, step, err)
			}
		}
	}
	var changed int
	if err := db.QueryRow(`SELECT count(*) FROM leaf_alloc WHERE typeof(max_id) = 'integer' AND max_id != 1`).Scan(&changed); err != nil {
		t.Fatal(err)
	}
	if changed != 0 {
		t.Errorf("%d rows changed by refused claims", changed)
	}
	if _, err := st.Key(ctx, "real-max"); !errors.Is(err, idforge.ErrInvalidArgument) {
		t.Errorf("Key on a row with a REAL max_id: %v", err)
	}
}

// TestOverflowStaysInteger looks at the stored value after refused
// claims: SQLite would have turned an overflowing sum into a REAL.
func TestOverflowStaysInteger(t *testing.T) {
	ctx := context.Background()
	u := backend.NewDatabase(t)
	st := backend.MustOpen(t, u, false)
	// The first segment must fit (CreateKey refuses a key that could
	// never issue); claiming it leaves 10 values, fewer than the step.
	if err := st.CreateKey(ctx, sqltest.SegKey("top", math.MaxInt64-110, 100)); err != nil {
		t.Fatal(err)
	}
	sqltest.WantSegment(t, sqltest.MustClaim(t, st, "top", 0), idforge.Segment{Start: math.MaxInt64 - 110, End: math.MaxInt64 - 10, Step: 100})
	for _, step := range []int64{0, 11, math.MaxInt64} {
		if _, err := st.ClaimSegment(ctx, "top", step); !errors.Is(err, idforge.ErrSpaceExhausted) {
			t.Fatalf("ClaimSegment(top, %d): %v, want ErrSpaceExhausted", step, err)
		}
	}
	sqltest.WantSegment(t, sqltest.MustClaim(t, st, "top", 10), idforge.Segment{Start: math.MaxInt64 - 10, End: math.MaxInt64, Step: 100})
	if _, err := st.ClaimSegment(ctx, "top", 1); !errors.Is(err, idforge.ErrSpaceExhausted) {
		t.Fatalf("ClaimSegment at MaxInt64: %v, want ErrSpaceExhausted", err)
	}
	var typ string
	var v int64
	if err := rawDB(t, u).QueryRow(`SELECT typeof(max_id), max_id FROM leaf_alloc WHERE biz_tag = 'top'`).Scan(&typ, &v); err != nil {
		t.Fatal(err)
	}
	if typ != "integer" || v != math.MaxInt64 {
		t.Fatalf("stored max_id is %s %d, want integer %d", typ, v, int64(math.MaxInt64))
	}
}

func TestOpenErrors(t *testing.T) {
	for _, path := range []string{"", "a?b.db"} {
		if _, err := sqlite.Open(context.Background(), path, quiet); !errors.Is(err, idforge.ErrInvalidArgument) {
			t.Errorf("Open(%q): %v, want ErrInvalidArgument", path, err)
		}
	}
	// The parent "directory" is a file.
	path := filepath.Join(t.TempDir(), "idforge.db")
	openAt(t, path)
	if _, err := sqlite.Open(context.Background(), filepath.Join(path, "x.db"), quiet); err == nil {
		t.Error("Open below a regular file succeeded")
	}
}

func TestURLForms(t *testing.T) {
	dir := t.TempDir()
	dataDir := filepath.Join(dir, "data")
	t.Chdir(dir)
	opts := store.Options{DataDir: dataDir, Logger: slog.New(slog.DiscardHandler)}

	if !slices.Contains(store.Names(), "sqlite") {
		t.Fatalf("store.Names() = %q, want sqlite registered", store.Names())
	}
	tests := []struct{ url, want string }{
		{"sqlite://" + filepath.ToSlash(filepath.Join(dir, "abs", "a.db")), filepath.Join(dir, "abs", "a.db")},
		{"sqlite:" + filepath.ToSlash(filepath.Join(dir, "single-slash.db")), filepath.Join(dir, "single-slash.db")},
		{"sqlite:rel/b.db", filepath.Join(dir, "rel", "b.db")},
		{"sqlite:c.db", filepath.Join(dir, "c.db")},
		{"sqlite:with%20space.db", filepath.Join(dir, "with space.db")},
		{"sqlite:", filepath.Join(dataDir, sqlite.DefaultFileName)},
		{"sqlite://", filepath.Join(dataDir, sqlite.DefaultFileName)},
		{"SQLITE:", filepath.Join(dataDir, sqlite.DefaultFileName)},
		{"sqlite:d.db?busy_timeout=250ms", filepath.Join(dir, "d.db")},
	}
	for _, tt := range tests {
		st, err := store.Open(context.Background(), tt.url, opts)
		if err != nil {
			t.Errorf("store.Open(%q): %v", tt.url, err)
			continue
		}
		if got := st.(*sqlite.Store).Path(); got != tt.want {
			t.Errorf("store.Open(%q) opened %s, want %s", tt.url, got, tt.want)
		}
		if err := st.Ping(context.Background()); err != nil {
			t.Errorf("Ping on %q: %v", tt.url, err)
		}
		st.Close()
	}
}

func TestURLErrors(t *testing.T) {
	t.Chdir(t.TempDir())
	opts := store.Options{DataDir: t.TempDir()}
	tests := []struct{ url, mention string }{
		{"sqlite://name.db", "has a host"},
		{"sqlite://user:secret@host/x.db", "has a host"},
		{"sqlite:x.db#frag", "fragment"},
		{"sqlite:x.db?cache=shared", `unknown parameter "cache"`},
		{"sqlite:x.db?busy_timeout=soon", "busy_timeout"},
		{"sqlite:x.db?busy_timeout=-1s", "busy_timeout"},
	}
	for _, tt := range tests {
		st, err := store.Open(context.Background(), tt.url, opts)
		if err == nil {
			st.Close()
			t.Errorf("store.Open(%q) succeeded", tt.url)
			continue
		}
		if !errors.Is(err, idforge.ErrInvalidArgument) || !strings.Contains(err.Error(), tt.mention) {
			t.Errorf("store.Open(%q): %v; want ErrInvalidArgument mentioning %q", tt.url, err, tt.mention)
		}
		if strings.Contains(err.Error(), "secret") {
			t.Errorf("store.Open(%q) leaks the password: %v", tt.url, err)
		}
	}
	_, err := store.Open(context.Background(), "sqlite:", store.Options{})
	if !errors.Is(err, idforge.ErrInvalidArgument) || !strings.Contains(err.Error(), "no data directory") {
		t.Errorf(`store.Open("sqlite:") without a data directory: %v`, err)
	}
}
