package autoinc_test

import (
	"context"
	"database/sql"
	"errors"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/testsvc"
	"github.com/idforge/idforge/sequence"
	"github.com/idforge/idforge/sequence/autoinc"
	"github.com/idforge/idforge/sequence/internal/seqtest"
)

// backend is one database kind under test.
type backend struct {
	name string
	// urls returns the source URL over tables spread across two fresh
	// databases, and a pool on each database.
	urls                    func(tb testing.TB, tables string) (string, []*sql.DB)
	instances, workers, per int
}

// alsoOf returns "host:port/database" of a database URL.
func alsoOf(tb testing.TB, raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		tb.Fatal(err)
	}
	return u.Host + u.Path
}

func withParams(raw, params string) string {
	if strings.Contains(raw, "?") {
		return raw + "&" + params
	}
	return raw + "?" + params
}

var backends = []backend{
	{"mysql", func(tb testing.TB, tables string) (string, []*sql.DB) {
		a, b := testsvc.MySQL(tb), testsvc.MySQL(tb)
		return withParams("autoinc+"+a, "tables="+tables+"&also="+alsoOf(tb, b)), []*sql.DB{testsvc.MySQLDB(tb, a), testsvc.MySQLDB(tb, b)}
	}, 4, 8, 40},
	{"postgres", func(tb testing.TB, tables string) (string, []*sql.DB) {
		a, b := testsvc.Postgres(tb), testsvc.Postgres(tb)
		return withParams("autoinc+"+a, "tables="+tables+"&also="+alsoOf(tb, b)), []*sql.DB{testsvc.PostgresDB(tb, a), testsvc.PostgresDB(tb, b)}
	}, 4, 8, 40},
	{"sqlite", func(tb testing.TB, tables string) (string, []*sql.DB) {
		dir := tb.TempDir()
		a, b := filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db")
		var dbs []*sql.DB
		for _, p := range []string{a, b} {
			db, err := sql.Open("sqlite", p+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)")
			if err != nil {
				tb.Fatal(err)
			}
			tb.Cleanup(func() { db.Close() })
			dbs = append(dbs, db)
		}
		return "autoinc+sqlite://" + a + "?tables=" + tables + "&also=" + b, dbs
	}, 3, 4, 25},
}

func open(tb testing.TB, raw string) *autoinc.Source {
	tb.Helper()
	s, err := sequence.Open(context.Background(), raw)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s.(*autoinc.Source)
}

func TestSource(t *testing.T) {
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			t.Run("Concurrent", func(t *testing.T) {
				raw, _ := be.urls(t, "4")
				got := seqtest.Collect(t, func(tb testing.TB) idforge.Generator { return open(tb, raw) },
					be.instances, be.workers, be.per)
				seqtest.Unique(t, got)
				s := open(t, raw)
				perTable := map[int]int{}
				for _, v := range got {
					id, i := s.Split(v)
					if id < 1 || i < 0 || i > 3 || id<<2|int64(i) != v {
						t.Fatalf("value %d splits into id %d, table %d", v, id, i)
					}
					perTable[i]++
				}
				if len(perTable) != 4 {
					t.Fatalf("values per table %v: round robin should use all 4", perTable)
				}
			})

			t.Run("FailingTableSkipped", func(t *testing.T) {
				raw, dbs := be.urls(t, "4")
				s := open(t, raw)
				// Table 1 lives in the second database (tables alternate).
				if _, err := dbs[1].ExecContext(ctx, "DROP TABLE idforge_autoinc_1"); err != nil {
					t.Fatal(err)
				}
				var got []int64
				for range 20 {
					v, err := s.Next(ctx)
					if err != nil {
						t.Fatal(err)
					}
					if _, i := s.Split(v); i == 1 {
						t.Fatalf("value %d from the dropped table", v)
					}
					got = append(got, v)
				}
				seqtest.Unique(t, got)
			})

			t.Run("AllTablesDown", func(t *testing.T) {
				raw, dbs := be.urls(t, "2")
				s := open(t, raw)
				for i, db := range dbs {
					if _, err := db.ExecContext(ctx, "DROP TABLE idforge_autoinc_"+string(rune('0'+i))); err != nil {
						t.Fatal(err)
					}
				}
				if _, err := s.Next(ctx); !errors.Is(err, idforge.ErrUnavailable) {
					t.Fatalf("every table gone: %v, want ErrUnavailable", err)
				}
			})
		})
	}
}

// TestExhaustedTable: a table whose ids no longer fit in 63-n bits is
// skipped for good; the others carry on.
func TestExhaustedTable(t *testing.T) {
	a := testsvc.MySQL(t)
	s := open(t, withParams("autoinc+"+a, "tables=4"))
	db := testsvc.MySQLDB(t, a)
	ctx := context.Background()
	// 2^61 - 1 is table 2's last id that fits next to 2 index bits.
	if _, err := db.ExecContext(ctx, "ALTER TABLE idforge_autoinc_2 AUTO_INCREMENT = 2305843009213693951"); err != nil {
		t.Fatal(err)
	}
	fromTwo := 0
	var got []int64
	for range 40 {
		v, err := s.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if id, i := s.Split(v); i == 2 {
			fromTwo++
			if id != 2305843009213693951 {
				t.Fatalf("table 2 issued id %d", id)
			}
		}
		got = append(got, v)
	}
	if fromTwo != 1 {
		t.Fatalf("table 2 issued %d values; want its last one only", fromTwo)
	}
	seqtest.Unique(t, got)
}

func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	for _, bad := range []string{
		"autoinc+mysql://root:secret@127.0.0.1:3306/db?tables=3",
		"autoinc+mysql://root:secret@127.0.0.1:3306/db?tables=2048",
		"autoinc+mysql://root:secret@127.0.0.1:3306/db?table=bad-name",
		"autoinc+mysql://root:secret@127.0.0.1:3306/db?also=nohost",
	} {
		_, err := sequence.Open(ctx, bad)
		if !errors.Is(err, idforge.ErrInvalidArgument) {
			t.Errorf("Open(%s): %v, want ErrInvalidArgument", bad, err)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("the error shows the password: %v", err)
		}
	}
}

func BenchmarkSourceNext(b *testing.B) {
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) {
			raw, _ := be.urls(b, "4")
			s := open(b, raw)
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

// A table dropped and created again (or restored from an old backup)
// counts from 1 again: the source refuses its ids instead of repeating
// values, and the other tables carry on.
func TestRecreatedTableRefused(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "a.db")
	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s := open(t, "autoinc+sqlite://"+path+"?tables=2")
	seen := map[int64]bool{}
	for range 10 {
		v, err := s.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		seen[v] = true
	}
	if _, err := db.ExecContext(ctx, "DROP TABLE idforge_autoinc_1"); err != nil {
		t.Fatal(err)
	}
	if err := autoinc.Migrate(ctx, db, "idforge_autoinc_1"); err != nil {
		t.Fatal(err)
	}
	for range 20 {
		v, err := s.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if seen[v] {
			t.Fatalf("value %d issued twice after table 1 was created again", v)
		}
		if _, i := s.Split(v); i == 1 {
			t.Fatalf("value %d from the recreated table", v)
		}
		seen[v] = true
	}

	// With one table there is no other to answer: a clear error.
	single := open(t, "autoinc+sqlite://"+filepath.Join(dir, "b.db"))
	for range 3 {
		if _, err := single.Next(ctx); err != nil {
			t.Fatal(err)
		}
	}
	other, err := sql.Open("sqlite", filepath.Join(dir, "b.db")+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.ExecContext(ctx, "DROP TABLE idforge_autoinc_0"); err != nil {
		t.Fatal(err)
	}
	if err := autoinc.Migrate(ctx, other, "idforge_autoinc_0"); err != nil {
		t.Fatal(err)
	}
	if v, err := single.Next(ctx); !errors.Is(err, sequence.ErrCounterLost) || !errors.Is(err, idforge.ErrUnavailable) {
		t.Fatalf("recreated single table: %d, %v; want ErrCounterLost and ErrUnavailable", v, err)
	}
}
