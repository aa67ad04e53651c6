package sqltest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/store"
	"github.com/idforge/idforge/store/storetest"
)

// Run runs the shared cases against b, each as a subtest of t.
func Run(t *testing.T, b Backend) {
	tests := []struct {
		name string
		fn   func(t *testing.T, b Backend)
	}{
		{"OpenEmptyDatabase", testOpenEmptyDatabase},
		{"MigrateCreatesSchema", testMigrateCreatesSchema},
		{"SerialsTableMissing", testSerialsTableMissing},
		{"SerialsShared", testSerialsShared},
		{"Gapless", testGapless},
		{"DefinitionsTableMissing", testDefinitionsTableMissing},
		{"LeafTableUsedAsIs", testLeafTableUsedAsIs},
		{"ForeignTableRejected", testForeignTableRejected},
		{"NamesAreCaseSensitive", testNamesAreCaseSensitive},
		{"StoresClaimConcurrently", testStoresClaimConcurrently},
		{"BadRows", testBadRows},
		{"ReturnSegmentBounds", testReturnSegmentBounds},
		{"CanceledContext", testCanceledContext},
		{"OutageRetried", testOutageRetried},
		{"Timeout", testTimeout},
		{"OpenErrorsHidePassword", testOpenErrorsHidePassword},
		{"FailoverFence", testFailoverFence},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, b) })
	}
}

// testOpenEmptyDatabase: Open refuses a database without tables and says
// what to do; ForMigrate (what `idforge migrate` uses) opens it so that
// Migrate can create them.
func testOpenEmptyDatabase(t *testing.T, b Backend) {
	b.skipEmbedded(t, "no empty database: Open creates the tables")
	ctx := context.Background()
	u := b.NewDatabase(t)
	if st, err := b.Open(ctx, u, false); err == nil || !strings.Contains(err.Error(), "run `idforge migrate`") {
		if st != nil {
			st.Close()
		}
		t.Fatalf("Open on an empty database: %v; want an error saying to run `idforge migrate`", err)
	}
	_, err := store.Open(ctx, u, store.Options{Logger: Quiet})
	if err == nil || !strings.Contains(err.Error(), "idforge migrate") {
		t.Fatalf("store.Open on an empty database: %v", err)
	}

	st, err := store.Open(ctx, u, store.Options{Logger: Quiet, ForMigrate: true})
	if err != nil {
		t.Fatalf("store.Open with ForMigrate: %v", err)
	}
	defer st.Close()
	_, err = st.ClaimSegment(ctx, "k", 0)
	if err == nil || !strings.Contains(err.Error(), "idforge migrate") {
		t.Fatalf("ClaimSegment before Migrate: %v", err)
	}
	wantNoSerials(t, st.(idforge.SerialStore))
	if err := st.(idforge.Migrator).Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if err := st.CreateKey(ctx, SegKey("k", 1, 10)); err != nil {
		t.Fatal(err)
	}
	WantSegment(t, MustClaim(t, st, "k", 0), idforge.Segment{Start: 1, End: 11, Step: 10})

	// A store opened before the migration (by another process) catches up.
	st2 := b.MustOpen(t, u, false)
	WantSegment(t, MustClaim(t, st2, "k", 0), idforge.Segment{Start: 11, End: 21, Step: 10})
}

// testMigrateCreatesSchema looks at what Migrate created, and checks that
// running it again changes nothing.
func testMigrateCreatesSchema(t *testing.T, b Backend) {
	u := b.NewDatabase(t)
	st := b.Migrated(t, u)
	db := b.RawDB(t, u)
	show := func() string {
		return b.DescribeTable(t, db, "leaf_alloc") + "\n" + b.DescribeTable(t, db, "idforge_keys") +
			"\n" + b.DescribeTable(t, db, "idforge_serials")
	}
	before := show()
	b.CheckMigratedSchema(t, before)
	if err := st.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	if after := show(); after != before {
		t.Errorf("second Migrate changed the schema:\n%s\n---\n%s", before, after)
	}
}

// wantNoSerials checks that every SerialStore call of st fails as on a
// database without idforge_serials: with an error wrapping
// idforge.ErrInvalidArgument (the server answers 400 with its message)
// that says to run `idforge migrate`.
func wantNoSerials(t *testing.T, st idforge.SerialStore) {
	t.Helper()
	ctx := context.Background()
	errs := map[string]error{"CreateSerial": st.CreateSerial(ctx, idforge.Serial{Name: "sn", Template: "SN{seq}"})}
	_, errs["Serial"] = st.Serial(ctx, "sn")
	_, errs["Serials"] = st.Serials(ctx)
	for name, err := range errs {
		if !errors.Is(err, idforge.ErrInvalidArgument) || !strings.Contains(err.Error(), "idforge_serials") ||
			!strings.Contains(err.Error(), "run `idforge migrate`") {
			t.Errorf("%s without idforge_serials: %v; want ErrInvalidArgument saying to run `idforge migrate`", name, err)
		}
	}
}

// testSerialsTableMissing: a database migrated before idforge kept serials
// (migrated, then idforge_serials dropped) opens and serves keys; serial
// calls say to run `idforge migrate`, on a store opened since and on one
// that saw the table, until Migrate adds it again. An embedded database
// gains the table when it is opened, so there it is dropped once more.
func testSerialsTableMissing(t *testing.T, b Backend) {
	ctx := context.Background()
	u := b.NewDatabase(t)
	before := b.Migrated(t, u)
	if err := before.CreateKey(ctx, SegKey("k", 1, 10)); err != nil {
		t.Fatal(err)
	}
	dropped := idforge.Serial{Name: "dropped", Template: "D{seq}"}
	MustCreateSerial(t, before, dropped)
	storetest.WantSerial(t, before, dropped)
	db := b.RawDB(t, u)
	MustExec(t, db, "DROP TABLE idforge_serials")

	st := b.MustOpen(t, u, false)
	if b.Embedded {
		if defs, err := st.Serials(ctx); err != nil || len(defs) != 0 {
			t.Fatalf("Serials of a file opened without idforge_serials = %+v, %v; want the table created, empty", defs, err)
		}
		MustExec(t, db, "DROP TABLE idforge_serials")
	}
	WantSegment(t, MustClaim(t, st, "k", 0), idforge.Segment{Start: 1, End: 11, Step: 10})
	if err := st.CreateKey(ctx, idforge.Key{Name: "snow", Strategy: idforge.StrategySnowflake}); err != nil {
		t.Fatal(err)
	}
	if keys, err := st.Keys(ctx); err != nil || len(keys) != 2 {
		t.Fatalf("Keys = %+v, %v", keys, err)
	}
	if err := st.Ping(ctx); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	wantNoSerials(t, st)
	wantNoSerials(t, before)
	WantSegment(t, MustClaim(t, before, "k", 0), idforge.Segment{Start: 11, End: 21, Step: 10})

	// Migrate adds the table back; both stores find it.
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM idforge_serials").Scan(&n); err != nil || n != 0 {
		t.Fatalf("idforge_serials after Migrate: %d rows, %v", n, err)
	}
	sn := idforge.Serial{Name: "sn", Template: "SN{seq}", TimeZone: "Asia/Tokyo", Description: "after migrate"}
	MustCreateSerial(t, before, sn)
	storetest.WantSerial(t, st, sn)
	storetest.WantSerial(t, before, sn)
	if defs, err := st.Serials(ctx); err != nil || len(defs) != 1 || defs[0].Name != "sn" {
		t.Fatalf("Serials = %+v, %v", defs, err)
	}
	WantSegment(t, MustClaim(t, st, "k", 0), idforge.Segment{Start: 21, End: 31, Step: 10})
}

// testDefinitionsTableMissing: a database migrated before idforge kept
// operators' definitions (migrated, then idforge_definitions dropped)
// serves keys; definition calls fail with an error wrapping
// ErrInvalidArgument that says to run `idforge migrate`, on a store that
// had seen the table too, until Migrate adds it again; another store
// then reads what one created.
func testDefinitionsTableMissing(t *testing.T, b Backend) {
	ctx := context.Background()
	u := b.NewDatabase(t)
	before := b.Migrated(t, u)
	if err := before.CreateKey(ctx, SegKey("k", 1, 10)); err != nil {
		t.Fatal(err)
	}
	d := idforge.Definition{Kind: "source", Name: "daily", Spec: `{"url":"redis://x"}`}
	if err := before.CreateDefinition(ctx, d); err != nil {
		t.Fatal(err)
	}
	db := b.RawDB(t, u)
	MustExec(t, db, "DROP TABLE idforge_definitions")
	st := b.MustOpen(t, u, false)
	if b.Embedded { // the file gained the table again on Open
		MustExec(t, db, "DROP TABLE idforge_definitions")
	}
	WantSegment(t, MustClaim(t, st, "k", 0), idforge.Segment{Start: 1, End: 11, Step: 10})
	for _, ds := range []idforge.DefinitionStore{st, before} {
		_, err1 := ds.Definition(ctx, d.Kind, d.Name)
		_, err2 := ds.Definitions(ctx, d.Kind)
		for i, err := range []error{ds.CreateDefinition(ctx, d), ds.UpdateDefinition(ctx, d), ds.RetireDefinition(ctx, d.Kind, d.Name), err1, err2} {
			if !errors.Is(err, idforge.ErrInvalidArgument) || !strings.Contains(err.Error(), "idforge_definitions") ||
				!strings.Contains(err.Error(), "run `idforge migrate`") {
				t.Errorf("call %d without idforge_definitions: %v; want ErrInvalidArgument saying to run `idforge migrate`", i, err)
			}
		}
	}
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if err := before.CreateDefinition(ctx, d); err != nil {
		t.Fatal(err)
	}
	storetest.WantDefinition(t, st, d)
}

// testSerialsShared runs several Stores on one database, as several
// nodes would: they race to create one serial, exactly one wins, and
// every node, one opened after the others closed included, reads the
// winner's definition.
func testSerialsShared(t *testing.T, b Backend) {
	const (
		stores   = 3
		perStore = 4
	)
	ctx := context.Background()
	u := b.NewDatabase(t)
	nodes := []Store{b.Migrated(t, u)}
	for len(nodes) < stores {
		nodes = append(nodes, b.MustOpen(t, u, false))
	}
	serialStores := make([]idforge.SerialStore, len(nodes))
	for i, st := range nodes {
		serialStores[i] = st
	}
	winner := storetest.RaceCreateSerial(t, serialStores, perStore)
	for _, st := range nodes {
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
	}
	st := b.MustOpen(t, u, false)
	storetest.WantSerial(t, st, winner)
	if defs, err := st.Serials(ctx); err != nil || len(defs) != 1 {
		t.Fatalf("Serials after reopening = %+v, %v", defs, err)
	}
}

func testLeafTableUsedAsIs(t *testing.T, b Backend) {
	for _, desc := range []string{"description", "desc"} {
		t.Run(desc, func(t *testing.T) {
			ctx := context.Background()
			u := b.NewDatabase(t)
			if b.BeforeLeafTable != nil {
				b.BeforeLeafTable(t, u)
			}
			db := b.RawDB(t, u)
			MustExec(t, db, fmt.Sprintf(b.LeafDDL, desc))
			MustExec(t, db, fmt.Sprintf(b.LeafRow, desc))
			MustExec(t, db, "INSERT INTO leaf_alloc (biz_tag, step) VALUES ('defaults', 10)")
			leafSchema := b.DescribeTable(t, db, "leaf_alloc")

			// A plain Leaf database opens without migration.
			st := b.MustOpen(t, u, false)
			k, err := st.Key(ctx, "leaf-segment-test")
			if err != nil {
				t.Fatal(err)
			}
			if k.Strategy != idforge.StrategySegment || k.MaxID != 1 || k.Step != 2000 ||
				k.Description != "Test leaf Segment Mode Get Id" || time.Since(k.Updated).Abs() > 5*time.Minute {
				t.Errorf("Key = %+v", k)
			}
			WantSegment(t, MustClaim(t, st, "leaf-segment-test", 0), idforge.Segment{Start: 1, End: 2001, Step: 2000})
			WantSegment(t, MustClaim(t, st, "defaults", 0), idforge.Segment{Start: 1, End: 11, Step: 10})

			// Segment keys can be created, as rows like Leaf's.
			if err := st.CreateKey(ctx, idforge.Key{Name: "new", Strategy: idforge.StrategySegment, MaxID: 7, Step: 3, Description: "d"}); err != nil {
				t.Fatal(err)
			}
			var maxID, step int64
			if err := db.QueryRow("SELECT max_id, step FROM leaf_alloc WHERE biz_tag = 'new'").Scan(&maxID, &step); err != nil || maxID != 7 || step != 3 {
				t.Fatalf("new leaf_alloc row = (%d, %d), %v; want (7, 3)", maxID, step, err)
			}
			if k, err := st.Key(ctx, "new"); err != nil || k.Description != "d" {
				t.Fatalf("Key(new) = %+v, %v", k, err)
			}
			// Snowflake keys need idforge_keys, which only an embedded
			// database has without `idforge migrate`.
			if !b.Embedded {
				err = st.CreateKey(ctx, idforge.Key{Name: "snow", Strategy: idforge.StrategySnowflake})
				if err == nil || !strings.Contains(err.Error(), "idforge migrate") {
					t.Fatalf("snowflake key on a Leaf database: %v; want an error saying to run `idforge migrate`", err)
				}
				if _, err := st.Key(ctx, "snow"); !errors.Is(err, idforge.ErrUnknownKey) {
					t.Fatalf("Key(snow): %v", err)
				}
				wantNoSerials(t, st)
			}
			keys, err := st.Keys(ctx)
			if err != nil || len(keys) != 3 || keys[0].Name != "defaults" || keys[1].Name != "leaf-segment-test" || keys[2].Name != "new" {
				t.Fatalf("Keys = %+v, %v", keys, err)
			}
			wantRows := 4
			err = st.CreateKey(ctx, SegKey("LEAF-SEGMENT-TEST", 1, 1))
			if b.LeafIgnoresCase {
				// Leaf's table compares names without case: one row.
				wantRows = 3
				if !errors.Is(err, idforge.ErrKeyExists) {
					t.Fatalf("CreateKey of a name differing in case: %v", err)
				}
			} else if err != nil {
				// Names are case-sensitive whatever the collation.
				t.Fatalf("CreateKey of a name differing in case: %v", err)
			}

			// Migrate adds idforge_keys and leaves leaf_alloc alone.
			other := b.MustOpen(t, u, false) // another node, opened before the migration
			if err := b.Migrated(t, u).Close(); err != nil {
				t.Fatal(err)
			}
			if after := b.DescribeTable(t, db, "leaf_alloc"); after != leafSchema {
				t.Errorf("Migrate changed leaf_alloc:\n%s\n---\n%s", leafSchema, after)
			}
			if err := other.CreateKey(ctx, idforge.Key{Name: "snow", Strategy: idforge.StrategySnowflake}); err != nil {
				t.Fatalf("snowflake key after migrate: %v", err)
			}
			sn := idforge.Serial{Name: "sn", Template: "SN{seq}"}
			MustCreateSerial(t, other, sn)
			storetest.WantSerial(t, st, sn)
			if k, err := st.Key(ctx, "snow"); err != nil || k.Strategy != idforge.StrategySnowflake {
				t.Fatalf("Key(snow) = %+v, %v", k, err)
			}
			WantSegment(t, MustClaim(t, st, "leaf-segment-test", 0), idforge.Segment{Start: 2001, End: 4001, Step: 2000})
			var n int
			if err := db.QueryRow("SELECT COUNT(*) FROM leaf_alloc").Scan(&n); err != nil || n != wantRows {
				t.Fatalf("leaf_alloc has %d rows (%v), want %d", n, err, wantRows)
			}
		})
	}
}

func testForeignTableRejected(t *testing.T, b Backend) {
	u := b.NewDatabase(t)
	MustExec(t, b.RawDB(t, u), "CREATE TABLE leaf_alloc (tag varchar(10) PRIMARY KEY, n int)")
	_, err := b.Open(context.Background(), u, false)
	if err == nil || !strings.Contains(err.Error(), "biz_tag, max_id, step, update_time, description") {
		t.Fatalf("Open on a foreign leaf_alloc: %v; want an error listing the missing columns", err)
	}

	// So is a foreign idforge_serials, also by `idforge migrate`.
	u = b.NewDatabase(t)
	MustExec(t, b.RawDB(t, u), "CREATE TABLE idforge_serials (name varchar(10) PRIMARY KEY, body text)")
	for _, forMigrate := range []bool{false, true} {
		st, err := b.Open(context.Background(), u, forMigrate)
		if err == nil || !strings.Contains(err.Error(), "template, time_zone, description, update_time") {
			if st != nil {
				st.Close()
			}
			t.Fatalf("Open (ForMigrate %v) with a foreign idforge_serials: %v; want an error listing the missing columns", forMigrate, err)
		}
	}
}

// testNamesAreCaseSensitive: in tables idforge creates, names differing
// in case are different keys.
func testNamesAreCaseSensitive(t *testing.T, b Backend) {
	ctx := context.Background()
	st := b.Fresh(t)
	for _, k := range []idforge.Key{SegKey("Order", 1, 10), SegKey("order", 100, 10), {Name: "ORDER", Strategy: idforge.StrategySnowflake}} {
		if err := st.CreateKey(ctx, k); err != nil {
			t.Fatalf("CreateKey(%q): %v", k.Name, err)
		}
	}
	WantSegment(t, MustClaim(t, st, "Order", 0), idforge.Segment{Start: 1, End: 11, Step: 10})
	WantSegment(t, MustClaim(t, st, "order", 0), idforge.Segment{Start: 100, End: 110, Step: 10})
	if _, err := st.ClaimSegment(ctx, "ORDER", 0); !errors.Is(err, idforge.ErrUnknownKey) {
		t.Fatalf("ClaimSegment(ORDER): %v", err)
	}
	if _, err := st.Key(ctx, "oRDER"); !errors.Is(err, idforge.ErrUnknownKey) {
		t.Fatalf("Key(oRDER): %v", err)
	}
	keys, err := st.Keys(ctx)
	if err != nil || len(keys) != 3 || keys[0].Name != "ORDER" || keys[1].Name != "Order" || keys[2].Name != "order" {
		t.Fatalf("Keys = %+v, %v", keys, err)
	}
}

// testStoresClaimConcurrently runs several Stores on one database, as
// several idforge nodes would: their claims must not overlap and together
// must leave no gap. They also race to create one name.
func testStoresClaimConcurrently(t *testing.T, b Backend) {
	const (
		stores   = 4
		perStore = 8
		claims   = 10
		step     = 100
	)
	ctx := context.Background()
	u := b.NewDatabase(t)
	nodes := []Store{b.Migrated(t, u)}
	for len(nodes) < stores {
		nodes = append(nodes, b.MustOpen(t, u, false))
	}
	if err := nodes[0].CreateKey(ctx, SegKey("shared", 1, step)); err != nil {
		t.Fatal(err)
	}
	segs := make(chan idforge.Segment, stores*perStore*claims)
	errs := make(chan error, stores*perStore*2)
	created := make(chan bool, stores*perStore)
	var wg sync.WaitGroup
	for i, st := range nodes {
		for j := range perStore {
			wg.Go(func() {
				k := SegKey("raced", 1, int64(j+1))
				if (i+j)%2 == 1 {
					k = idforge.Key{Name: "raced", Strategy: idforge.StrategySnowflake}
				}
				err := st.CreateKey(ctx, k)
				switch {
				case err == nil:
					created <- true
				case !errors.Is(err, idforge.ErrKeyExists):
					errs <- err
				}
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
	close(created)
	for err := range errs {
		t.Error(err)
	}
	if n := len(created); n != 1 {
		t.Errorf("%d creators of one name succeeded, want 1", n)
	}
	if t.Failed() {
		return
	}
	var all []idforge.Segment
	for s := range segs {
		all = append(all, s)
	}
	slices.SortFunc(all, func(a, b idforge.Segment) int { return cmp.Compare(a.Start, b.Start) })
	next := int64(1)
	for _, s := range all {
		if s.Start != next || s.Len() != step {
			t.Fatalf("segment [%d, %d) after end %d: overlap, gap or wrong length", s.Start, s.End, next)
		}
		next = s.End
	}
	if want := int64(stores*perStore*claims*step + 1); next != want {
		t.Fatalf("segments end at %d, want %d", next, want)
	}
}

// testBadRows: rows a hand edit got wrong are refused with a clear error
// and never changed.
func testBadRows(t *testing.T, b Backend) {
	ctx := context.Background()
	u := b.NewDatabase(t)
	st := b.Migrated(t, u)
	MustExec(t, b.RawDB(t, u), `INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES
		('zero-step', 1, 0), ('neg-step', 1, -10)`)
	for _, key := range []string{"zero-step", "neg-step"} {
		_, err := st.ClaimSegment(ctx, key, 0)
		if !errors.Is(err, idforge.ErrInvalidArgument) || !strings.Contains(err.Error(), key) {
			t.Errorf("ClaimSegment(%q, 0): %v; want ErrInvalidArgument naming the key", key, err)
		}
	}
	// An explicit step still works.
	WantSegment(t, MustClaim(t, st, "neg-step", 5), idforge.Segment{Start: 1, End: 6, Step: -10})
	if k, err := st.Key(ctx, "zero-step"); err != nil || k.MaxID != 1 {
		t.Fatalf("Key(zero-step) = %+v, %v", k, err)
	}
}

func testReturnSegmentBounds(t *testing.T, b Backend) {
	ctx := context.Background()
	st := b.Fresh(t)
	if err := st.CreateKey(ctx, SegKey("r", 1, 10)); err != nil {
		t.Fatal(err)
	}
	MustClaim(t, st, "r", 0)
	for _, r := range [][2]int64{{0, 11}, {-5, 11}, {12, 11}} {
		if _, err := st.ReturnSegment(ctx, "r", r[0], r[1]); !errors.Is(err, idforge.ErrInvalidArgument) {
			t.Errorf("ReturnSegment(%d, %d): %v, want ErrInvalidArgument", r[0], r[1], err)
		}
	}
	if k, _ := st.Key(ctx, "r"); k.MaxID != 11 {
		t.Fatalf("max_id = %d after rejected returns, want 11", k.MaxID)
	}
}

func testCanceledContext(t *testing.T, b Backend) {
	st := b.Fresh(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	checks := map[string]error{
		"CreateKey": st.CreateKey(ctx, idforge.Key{Name: "k", Strategy: idforge.StrategySnowflake}),
		"Ping":      st.Ping(ctx),
	}
	_, checks["Key"] = st.Key(ctx, "k")
	_, checks["Keys"] = st.Keys(ctx)
	_, checks["ClaimSegment"] = st.ClaimSegment(ctx, "k", 0)
	_, checks["ReturnSegment"] = st.ReturnSegment(ctx, "k", 1, 2)
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

// testOutageRetried cuts the connection to the server: a claim made while
// the server is away for less than the retries last succeeds, and the
// claims stay contiguous; with retries=0 it fails at once.
func testOutageRetried(t *testing.T, b Backend) {
	b.skipEmbedded(t, "no connection to cut")
	ctx := context.Background()
	u := b.NewDatabase(t)
	b.Migrated(t, u).CreateKey(ctx, SegKey("k", 1, 10))

	proxied, p := viaProxy(t, u, "retries=5&timeout=10s")
	st := b.MustOpen(t, proxied, false)
	WantSegment(t, MustClaim(t, st, "k", 0), idforge.Segment{Start: 1, End: 11, Step: 10})
	p.Cut()
	time.AfterFunc(300*time.Millisecond, p.Restore)
	start := time.Now()
	WantSegment(t, MustClaim(t, st, "k", 0), idforge.Segment{Start: 11, End: 21, Step: 10})
	if d := time.Since(start); d < 250*time.Millisecond {
		t.Errorf("claim during the outage returned after %v, before the server was back", d)
	}

	proxied, p = viaProxy(t, u, "retries=0")
	st = b.MustOpen(t, proxied, false)
	MustClaim(t, st, "k", 0)
	p.Cut()
	_, err := st.ClaimSegment(ctx, "k", 0)
	if err == nil || errors.Is(err, idforge.ErrUnknownKey) || !strings.Contains(err.Error(), `"k"`) {
		t.Fatalf("claim during an outage without retries: %v", err)
	}
	p.Restore()
	if seg := MustClaim(t, st, "k", 0); seg.Start < 31 {
		t.Fatalf("claim after the outage %+v overlaps earlier claims", seg)
	}
}

// testTimeout: a server slower than the timeout fails the call with
// context.DeadlineExceeded instead of hanging.
func testTimeout(t *testing.T, b Backend) {
	b.skipEmbedded(t, "no server to slow down")
	ctx := context.Background()
	u := b.NewDatabase(t)
	b.Migrated(t, u).CreateKey(ctx, SegKey("k", 1, 10))
	// A second, not less: Open runs its own queries under the same
	// timeout, and a loaded machine must not fail those.
	proxied, p := viaProxy(t, u, "timeout=1s")
	st := b.MustOpen(t, proxied, false)
	MustClaim(t, st, "k", 0)
	p.SetLatency(1500 * time.Millisecond)
	start := time.Now()
	_, err := st.ClaimSegment(ctx, "k", 0)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("slow claim: %v, want context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("slow claim took %v with a 1s timeout", d)
	}
	p.SetLatency(0)
	MustClaim(t, st, "k", 0)
}

// testOpenErrorsHidePassword: failures to connect never show the password.
func testOpenErrorsHidePassword(t *testing.T, b Backend) {
	b.skipEmbedded(t, "no password")
	u := b.NewDatabase(t)
	parsed, _ := url.Parse(u)
	parsed.User = url.UserPassword("idforge_nobody", "s3cret-pw")
	for _, raw := range []string{parsed.String(), b.UnreachableURL} {
		st, err := store.Open(context.Background(), raw, store.Options{Logger: Quiet})
		if err == nil {
			st.Close()
			t.Fatalf("store.Open(%s) succeeded", raw)
		}
		if strings.Contains(err.Error(), "s3cret-pw") {
			t.Errorf("error leaks the password: %v", err)
		}
	}
}
