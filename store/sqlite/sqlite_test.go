package sqlite_test

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/store"
	"github.com/idforge/idforge/store/sqlite"
	"github.com/idforge/idforge/store/storetest"
)

var quiet = sqlite.WithLogger(slog.New(slog.DiscardHandler))

// openFresh opens a store on a new file in a temporary directory.
func openFresh(tb testing.TB) *sqlite.Store {
	tb.Helper()
	return openAt(tb, filepath.Join(tb.TempDir(), "idforge.db"))
}

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

// rawDB opens path with database/sql directly, the way an operator or Leaf
// itself would touch the file.
func rawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func mustExec(t *testing.T, db *sql.DB, query string, args ...any) {
	t.Helper()
	if _, err := db.Exec(query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

func mustClaim(t *testing.T, st idforge.Store, key string, step int64) idforge.Segment {
	t.Helper()
	seg, err := st.ClaimSegment(context.Background(), key, step)
	if err != nil {
		t.Fatalf("ClaimSegment(%q, %d): %v", key, step, err)
	}
	return seg
}

func wantSegment(t *testing.T, got, want idforge.Segment) {
	t.Helper()
	if got != want {
		t.Fatalf("segment = %+v, want %+v", got, want)
	}
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) idforge.Store { return openFresh(t) })
}

func BenchmarkStore(b *testing.B) {
	storetest.Bench(b, func(b *testing.B) idforge.Store { return openFresh(b) })
}

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
	wantSegment(t, mustClaim(t, st, "orders", 0), idforge.Segment{Start: 1, End: 101, Step: 100})
	wantSegment(t, mustClaim(t, st, "orders", 50), idforge.Segment{Start: 101, End: 151, Step: 100})
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	st = openAt(t, path)
	wantSegment(t, mustClaim(t, st, "orders", 0), idforge.Segment{Start: 151, End: 251, Step: 100})
	keys, err := st.Keys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 2 || keys[0].Name != "events" || keys[1].Name != "orders" || keys[1].Description != "kept" || keys[1].MaxID != 251 {
		t.Fatalf("keys after reopen = %+v", keys)
	}
}

// leafDDL is Leaf's own table (scripts/leaf_alloc.sql) with the MySQL-only
// parts left out: backquotes, bigint(20)/int(11) widths, ON UPDATE and the
// ENGINE clause.
const leafDDL = `
CREATE TABLE leaf_alloc (
  biz_tag     varchar(128) NOT NULL DEFAULT '',
  max_id      bigint       NOT NULL DEFAULT '1',
  step        int          NOT NULL,
  %s          varchar(256) DEFAULT NULL,
  update_time timestamp    NOT NULL DEFAULT CURRENT_TIMESTAMP,
  PRIMARY KEY (biz_tag)
)`

func TestLeafTableUsedAsIs(t *testing.T) {
	for _, desc := range []string{"description", "desc"} {
		t.Run(desc, func(t *testing.T) {
			ctx := context.Background()
			path := filepath.Join(t.TempDir(), "leaf.db")
			db := rawDB(t, path)
			mustExec(t, db, fmt.Sprintf(leafDDL, `"`+desc+`"`))
			mustExec(t, db, fmt.Sprintf(`INSERT INTO leaf_alloc (biz_tag, max_id, step, "%s", update_time)
				VALUES ('leaf-segment-test', 1, 2000, 'Test leaf Segment Mode Get Id', '2019-03-07 10:12:33')`, desc))
			// Leaf's default max_id, and no description.
			mustExec(t, db, `INSERT INTO leaf_alloc (biz_tag, step) VALUES ('defaults', 10)`)

			st := openAt(t, path)
			k, err := st.Key(ctx, "leaf-segment-test")
			if err != nil {
				t.Fatal(err)
			}
			want := idforge.Key{Name: "leaf-segment-test", Strategy: idforge.StrategySegment, Step: 2000, MaxID: 1,
				Description: "Test leaf Segment Mode Get Id", Updated: time.Date(2019, 3, 7, 10, 12, 33, 0, time.UTC)}
			if !k.Updated.Equal(want.Updated) {
				t.Errorf("Updated = %v, want %v", k.Updated, want.Updated)
			}
			k.Updated = want.Updated
			if k != want {
				t.Errorf("Key = %+v, want %+v", k, want)
			}
			wantSegment(t, mustClaim(t, st, "leaf-segment-test", 0), idforge.Segment{Start: 1, End: 2001, Step: 2000})
			wantSegment(t, mustClaim(t, st, "defaults", 0), idforge.Segment{Start: 1, End: 11, Step: 10})

			// New keys go into the same table, and the row looks like Leaf's.
			if err := st.CreateKey(ctx, idforge.Key{Name: "new", Strategy: idforge.StrategySegment, MaxID: 7, Step: 3, Description: "d"}); err != nil {
				t.Fatal(err)
			}
			var maxID, step int64
			var d, updated string
			row := db.QueryRow(fmt.Sprintf(`SELECT max_id, step, "%s", CAST(update_time AS TEXT) FROM leaf_alloc WHERE biz_tag = 'new'`, desc))
			if err := row.Scan(&maxID, &step, &d, &updated); err != nil {
				t.Fatal(err)
			}
			if maxID != 7 || step != 3 || d != "d" {
				t.Errorf("row = (%d, %d, %q), want (7, 3, \"d\")", maxID, step, d)
			}
			if _, err := time.Parse(time.DateTime, updated); err != nil {
				t.Errorf("update_time %q is not CURRENT_TIMESTAMP's form: %v", updated, err)
			}
		})
	}
}

// TestMigrateKeepsLeafTable runs Migrate on a store over Leaf's own
// table: it changes nothing, and the store keeps working.
func TestMigrateKeepsLeafTable(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "leaf.db")
	db := rawDB(t, path)
	mustExec(t, db, fmt.Sprintf(leafDDL, `"desc"`))
	mustExec(t, db, `INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('leaf-segment-test', 1, 2000)`)
	st := openAt(t, path)
	schema := func() string {
		var s string
		if err := db.QueryRow(`SELECT group_concat(sql, ';') FROM sqlite_schema`).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	before := schema()
	for range 2 {
		if err := st.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if after := schema(); after != before {
		t.Errorf("Migrate changed the schema:\n%s\n---\n%s", before, after)
	}
	wantSegment(t, mustClaim(t, st, "leaf-segment-test", 0), idforge.Segment{Start: 1, End: 2001, Step: 2000})
}

func TestReturnSegmentBounds(t *testing.T) {
	ctx := context.Background()
	st := openFresh(t)
	if err := st.CreateKey(ctx, idforge.Key{Name: "r", Strategy: idforge.StrategySegment, MaxID: 1, Step: 10}); err != nil {
		t.Fatal(err)
	}
	mustClaim(t, st, "r", 0)
	for _, r := range [][2]int64{{0, 11}, {-5, 11}, {12, 11}} {
		if _, err := st.ReturnSegment(ctx, "r", r[0], r[1]); !errors.Is(err, idforge.ErrInvalidArgument) {
			t.Errorf("ReturnSegment(%d, %d): %v, want ErrInvalidArgument", r[0], r[1], err)
		}
	}
	if k, _ := st.Key(ctx, "r"); k.MaxID != 11 {
		t.Fatalf("max_id = %d after rejected returns, want 11", k.MaxID)
	}
}

func TestForeignTableRejected(t *testing.T) {
	path := filepath.Join(t.TempDir(), "other.db")
	mustExec(t, rawDB(t, path), `CREATE TABLE leaf_alloc (tag text PRIMARY KEY, n int)`)
	_, err := sqlite.Open(context.Background(), path, quiet)
	if err == nil || !strings.Contains(err.Error(), "biz_tag, max_id, step, update_time, description") {
		t.Fatalf("Open on a foreign leaf_alloc: %v; want an error listing the missing columns", err)
	}
}

func TestRowAddedByHand(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "idforge.db")
	st := openAt(t, path)
	db := rawDB(t, path)
	mustExec(t, db, `INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('by-hand', 5000, 250)`)

	k, err := st.Key(ctx, "by-hand")
	if err != nil {
		t.Fatal(err)
	}
	if k.Strategy != idforge.StrategySegment || k.MaxID != 5000 || k.Step != 250 || k.Updated.IsZero() {
		t.Fatalf("Key = %+v", k)
	}
	wantSegment(t, mustClaim(t, st, "by-hand", 0), idforge.Segment{Start: 5000, End: 5250, Step: 250})
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

// TestBadRows checks that rows a hand edit got wrong are refused with a
// clear error and never changed.
func TestBadRows(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "idforge.db")
	st := openAt(t, path)
	db := rawDB(t, path)
	mustExec(t, db, `INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES
		('zero-step', 1, 0), ('neg-step', 1, -10), ('real-max', 1.5, 10), ('text-max', 'abc', 10),
		('real-step', 1, 2.5)`)

	tests := []struct {
		key  string
		step int64
		want error
	}{
		{"zero-step", 0, idforge.ErrInvalidArgument},
		{"neg-step", 0, idforge.ErrInvalidArgument},
		{"real-max", 0, idforge.ErrInvalidArgument},
		{"real-max", 5, idforge.ErrInvalidArgument},
		{"text-max", 0, idforge.ErrInvalidArgument},
		{"real-step", 0, idforge.ErrInvalidArgument},
		{"real-step", 5, idforge.ErrInvalidArgument},
	}
	for _, tt := range tests {
		_, err := st.ClaimSegment(ctx, tt.key, tt.step)
		if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.key) {
			t.Errorf("ClaimSegment(%q, %d): %v; want an error wrapping %v naming the key", tt.key, tt.step, err, tt.want)
		}
	}
	// A row with a bad stored step still serves an explicit one.
	wantSegment(t, mustClaim(t, st, "zero-step", 5), idforge.Segment{Start: 1, End: 6, Step: 0})

	var changed int
	if err := db.QueryRow(`SELECT count(*) FROM leaf_alloc WHERE biz_tag != 'zero-step' AND max_id != 1`).Scan(&changed); err != nil {
		t.Fatal(err)
	}
	if changed != 2 { // real-max (1.5) and text-max ('abc') were never 1
		t.Errorf("%d rows differ from max_id 1, want the 2 non-integer ones", changed)
	}
	if _, err := st.Key(ctx, "real-max"); !errors.Is(err, idforge.ErrInvalidArgument) {
		t.Errorf("Key on a row with a REAL max_id: %v", err)
	}
}

// TestOverflowStaysInteger looks at the stored value after refused
// claims: SQLite would have turned an overflowing sum into a REAL.
func TestOverflowStaysInteger(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "idforge.db")
	st := openAt(t, path)
	// The first segment must fit (CreateKey refuses a key that could
	// never issue); claiming it leaves 10 values, fewer than the step.
	if err := st.CreateKey(ctx, idforge.Key{Name: "top", Strategy: idforge.StrategySegment, MaxID: math.MaxInt64 - 110, Step: 100}); err != nil {
		t.Fatal(err)
	}
	wantSegment(t, mustClaim(t, st, "top", 0), idforge.Segment{Start: math.MaxInt64 - 110, End: math.MaxInt64 - 10, Step: 100})
	for _, step := range []int64{0, 11, math.MaxInt64} {
		if _, err := st.ClaimSegment(ctx, "top", step); !errors.Is(err, idforge.ErrSpaceExhausted) {
			t.Fatalf("ClaimSegment(top, %d): %v, want ErrSpaceExhausted", step, err)
		}
	}
	wantSegment(t, mustClaim(t, st, "top", 10), idforge.Segment{Start: math.MaxInt64 - 10, End: math.MaxInt64, Step: 100})
	if _, err := st.ClaimSegment(ctx, "top", 1); !errors.Is(err, idforge.ErrSpaceExhausted) {
		t.Fatalf("ClaimSegment at MaxInt64: %v, want ErrSpaceExhausted", err)
	}
	var typ string
	var v int64
	if err := rawDB(t, path).QueryRow(`SELECT typeof(max_id), max_id FROM leaf_alloc WHERE biz_tag = 'top'`).Scan(&typ, &v); err != nil {
		t.Fatal(err)
	}
	if typ != "integer" || v != math.MaxInt64 {
		t.Fatalf("stored max_id is %s %d, want integer %d", typ, v, int64(math.MaxInt64))
	}
}

// TestTwoStoresShareFile runs two Stores on one file, as two idforge
// processes sharing a data directory would: their claims must not
// overlap, and together they must leave no gap.
func TestTwoStoresShareFile(t *testing.T) {
	const (
		perStore = 8
		claims   = 15
	)
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "shared.db")
	stores := []*sqlite.Store{openAt(t, path), openAt(t, path)}
	if err := stores[0].CreateKey(ctx, idforge.Key{Name: "shared", Strategy: idforge.StrategySegment, MaxID: 1, Step: 100}); err != nil {
		t.Fatal(err)
	}

	segs := make(chan idforge.Segment, len(stores)*perStore*claims)
	errs := make(chan error, len(stores)*perStore+len(stores))
	var wg sync.WaitGroup
	for i, st := range stores {
		// Each store also races to create the same new key.
		wg.Go(func() {
			err := st.CreateKey(ctx, idforge.Key{Name: "raced", Strategy: idforge.StrategySegment, MaxID: 1, Step: int64(i + 1)})
			if err != nil && !errors.Is(err, idforge.ErrKeyExists) {
				errs <- err
			}
		})
		for range perStore {
			wg.Go(func() {
				for range claims {
					seg, err := st.ClaimSegment(ctx, "shared", 0)
					if err != nil {
						errs <- err
						return
					}
					segs <- seg
				}
			})
		}
	}
	wg.Wait()
	close(segs)
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		return
	}
	all := slices.Collect(func(yield func(idforge.Segment) bool) {
		for s := range segs {
			if !yield(s) {
				return
			}
		}
	})
	slices.SortFunc(all, func(a, b idforge.Segment) int { return cmp.Compare(a.Start, b.Start) })
	next := int64(1)
	for _, s := range all {
		if s.Start != next || s.Len() != 100 {
			t.Fatalf("segment [%d, %d) after end %d: overlap, gap or wrong length", s.Start, s.End, next)
		}
		next = s.End
	}
	if want := int64(len(stores)*perStore*claims*100 + 1); next != want {
		t.Fatalf("segments end at %d, want %d", next, want)
	}
	for _, st := range stores {
		if _, err := st.Key(ctx, "raced"); err != nil {
			t.Errorf("raced key: %v", err)
		}
	}
}

func TestCanceledContext(t *testing.T) {
	st := openFresh(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	checks := map[string]error{
		"CreateKey": st.CreateKey(ctx, idforge.Key{Name: "k", Strategy: idforge.StrategySnowflake}),
		"Ping":      st.Ping(ctx),
	}
	_, checks["Key"] = st.Key(ctx, "k")
	_, checks["Keys"] = st.Keys(ctx)
	_, checks["ClaimSegment"] = st.ClaimSegment(ctx, "k", 0)
	checks["CreateSerial"] = st.CreateSerial(ctx, idforge.Serial{Name: "k", Template: "K{seq}"})
	_, checks["Serial"] = st.Serial(ctx, "k")
	_, checks["Serials"] = st.Serials(ctx)
	for name, err := range checks {
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a canceled context: %v", name, err)
		}
	}
	if _, err := st.Key(context.Background(), "k"); !errors.Is(err, idforge.ErrUnknownKey) {
		t.Errorf("canceled CreateKey left a key behind: %v", err)
	}
	if _, err := st.Serial(context.Background(), "k"); !errors.Is(err, idforge.ErrUnknownKey) {
		t.Errorf("canceled CreateSerial left a serial behind: %v", err)
	}
}

func mustCreateSerial(t *testing.T, st idforge.SerialStore, def idforge.Serial) {
	t.Helper()
	if err := st.CreateSerial(context.Background(), def); err != nil {
		t.Fatalf("CreateSerial(%q): %v", def.Name, err)
	}
}

// TestSerialsShareFile has two Stores on one file race to create one
// serial, as two processes would: one wins, and its definition is what a
// Store opened after both closed reads.
func TestSerialsShareFile(t *testing.T) {
	const perStore = 6
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "shared.db")
	stores := []*sqlite.Store{openAt(t, path), openAt(t, path)}
	winner := storetest.RaceCreateSerial(t, []idforge.SerialStore{stores[0], stores[1]}, perStore)
	for _, st := range stores {
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
	}
	st := openAt(t, path)
	storetest.WantSerial(t, st, winner)
	if defs, err := st.Serials(ctx); err != nil || len(defs) != 1 {
		t.Fatalf("Serials after reopening = %+v, %v", defs, err)
	}
}

// TestSerialsTableMissing: a file written before idforge kept serials
// gains idforge_serials when it is opened, keys and all. A table dropped
// while a Store is open makes serial calls say to run `idforge migrate`,
// which creates it again.
func TestSerialsTableMissing(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	st := openAt(t, path)
	if err := st.CreateKey(ctx, idforge.Key{Name: "k", Strategy: idforge.StrategySegment, MaxID: 1, Step: 10}); err != nil {
		t.Fatal(err)
	}
	wantSegment(t, mustClaim(t, st, "k", 0), idforge.Segment{Start: 1, End: 11, Step: 10})
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	db := rawDB(t, path)
	mustExec(t, db, `DROP TABLE idforge_serials`)

	st = openAt(t, path)
	wantSegment(t, mustClaim(t, st, "k", 0), idforge.Segment{Start: 11, End: 21, Step: 10})
	sn := idforge.Serial{Name: "sn", Template: "SN{seq}", Description: "in an old file"}
	mustCreateSerial(t, st, sn)
	storetest.WantSerial(t, st, sn)

	mustExec(t, db, `DROP TABLE idforge_serials`)
	errs := map[string]error{"CreateSerial": st.CreateSerial(ctx, idforge.Serial{Name: "sn2", Template: "S"})}
	_, errs["Serial"] = st.Serial(ctx, "sn")
	_, errs["Serials"] = st.Serials(ctx)
	for name, err := range errs {
		if !errors.Is(err, idforge.ErrInvalidArgument) || !strings.Contains(err.Error(), "run `idforge migrate`") {
			t.Errorf("%s without idforge_serials: %v; want ErrInvalidArgument saying to run `idforge migrate`", name, err)
		}
	}
	wantSegment(t, mustClaim(t, st, "k", 0), idforge.Segment{Start: 21, End: 31, Step: 10})
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	mustCreateSerial(t, st, sn)
	storetest.WantSerial(t, st, sn)
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
