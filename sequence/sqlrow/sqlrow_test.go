package sqlrow_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/testsvc"
	"github.com/idforge/idforge/sequence"
	"github.com/idforge/idforge/sequence/internal/seqtest"
	"github.com/idforge/idforge/sequence/sqlrow"
)

// backend is one database kind under test.
type backend struct {
	name string
	// fresh returns the URL of an empty database (scheme mysql://,
	// postgres:// or sqlite:) for tb.
	fresh func(tb testing.TB) string
	// pool opens a new, independent pool on a database fresh returned.
	pool func(tb testing.TB, url string) *sql.DB
	// concurrency: instances × workers × per values.
	instances, workers, per int
}

var backends = []backend{
	{"mysql", testsvc.MySQL, testsvc.MySQLDB, 4, 8, 40},
	{"postgres", testsvc.Postgres, testsvc.PostgresDB, 4, 8, 40},
	{"sqlite", func(tb testing.TB) string {
		return "sqlite://" + filepath.ToSlash(filepath.Join(tb.TempDir(), "seq.db"))
	}, func(tb testing.TB, url string) *sql.DB {
		path := strings.TrimPrefix(url, "sqlite://")
		db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)")
		if err != nil {
			tb.Fatal(err)
		}
		db.SetMaxOpenConns(1)
		tb.Cleanup(func() { db.Close() })
		return db
	}, 3, 4, 25},
}

// withParams appends query parameters to a database URL.
func withParams(url, params string) string {
	if strings.Contains(url, "?") {
		return url + "&" + params
	}
	return url + "?" + params
}

func TestSource(t *testing.T) {
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			db := be.fresh(t)
			ctx := context.Background()
			open := func(tb testing.TB, params string) sequence.Source {
				tb.Helper()
				s, err := sequence.Open(ctx, withParams("sqlrow+"+db, params))
				if err != nil {
					tb.Fatal(err)
				}
				tb.Cleanup(func() { s.Close() })
				return s
			}

			t.Run("Concurrent", func(t *testing.T) {
				got := seqtest.Collect(t, func(tb testing.TB) idforge.Generator { return open(tb, "name=orders") },
					be.instances, be.workers, be.per)
				seqtest.Unique(t, got)
				if len(got) != be.instances*be.workers*be.per {
					t.Fatalf("%d values", len(got))
				}
			})

			t.Run("NamesAndStart", func(t *testing.T) {
				a, b := open(t, "name=a"), open(t, "name=b&start=500")
				for want := int64(1); want <= 3; want++ {
					if v, err := a.Next(ctx); err != nil || v != want {
						t.Fatalf("a: %d, %v; want %d", v, err, want)
					}
					if v, err := b.Next(ctx); err != nil || v != 499+want {
						t.Fatalf("b: %d, %v; want %d", v, err, 499+want)
					}
				}
			})

			t.Run("RowLost", func(t *testing.T) {
				s := open(t, "name=lost")
				if _, err := s.Next(ctx); err != nil {
					t.Fatal(err)
				}
				raw := be.pool(t, db)
				if _, err := raw.ExecContext(ctx, rebind(be.name, "DELETE FROM idforge_sequence WHERE name = ?"), "lost"); err != nil {
					t.Fatal(err)
				}
				if _, err := s.Next(ctx); !errors.Is(err, sequence.ErrCounterLost) {
					t.Fatalf("after the row was deleted: %v, want ErrCounterLost", err)
				}
				if _, err := sequence.Open(ctx, withParams("sqlrow+"+db, "name=lost&create=false")); !errors.Is(err, idforge.ErrUnknownKey) {
					t.Fatalf("opening a missing row without creation: %v, want ErrUnknownKey", err)
				}
			})

			t.Run("Exhausted", func(t *testing.T) {
				s := open(t, "name=big")
				raw := be.pool(t, db)
				if _, err := raw.ExecContext(ctx, rebind(be.name, "UPDATE idforge_sequence SET current_value = 9223372036854775806 WHERE name = ?"), "big"); err != nil {
					t.Fatal(err)
				}
				if v, err := s.Next(ctx); err != nil || v != 9223372036854775807 {
					t.Fatalf("%d, %v", v, err)
				}
				if _, err := s.Next(ctx); !errors.Is(err, idforge.ErrSpaceExhausted) {
					t.Fatalf("past the largest int64: %v", err)
				}
			})
		})
	}
}

func TestCounterStore(t *testing.T) {
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			db := be.fresh(t)
			seqtest.CounterSuite(t, func(tb testing.TB) sequence.CounterStore {
				st, err := sqlrow.NewCounterStore(be.pool(tb, db), sqlrow.CounterStoreConfig{})
				if err != nil {
					tb.Fatal(err)
				}
				return st
			}, func(tb testing.TB, name string) {
				raw := be.pool(tb, db)
				if _, err := raw.ExecContext(context.Background(), rebind(be.name, "DELETE FROM idforge_counter WHERE name = ?"), name); err != nil {
					tb.Fatal(err)
				}
			})
		})
	}
}

func TestOpenCounterURL(t *testing.T) {
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			c, err := sequence.OpenCounter(ctx, withParams(be.fresh(t), "name=waybill&period=day&cap=99999&table=waybills"))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			for want := int64(1); want <= 3; want++ {
				if n, _, err := c.Next(ctx, seqtest.T0); err != nil || n != want {
					t.Fatalf("%d, %v; want %d", n, err, want)
				}
			}
		})
	}
}

func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	for _, bad := range []string{
		"sqlrow+mysql://root:secret@127.0.0.1:3306/?name=x",          // no database
		"sqlrow+mysql://root:secret@127.0.0.1:3306/db?name=no%20way", // bad name
		"sqlrow+mysql://root:secret@127.0.0.1:3306/db?name=x&table=a-b",
		"sqlrow+sqlite://host/x.db?name=x",                // a host
		"sqlrow+sqlite:///tmp/x.db?name=x&bogus=1",        // unknown parameter
		"sqlrow+oracle://root:secret@127.0.0.1/db?name=x", // unknown scheme
	} {
		_, err := sequence.Open(ctx, bad)
		if !errors.Is(err, idforge.ErrInvalidArgument) && !errors.Is(err, idforge.ErrInvalidKey) {
			t.Errorf("Open(%s): %v, want an invalid-argument error", bad, err)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("the error shows the password: %v", err)
		}
	}
}

// rebind turns ? into $1 … for PostgreSQL.
func rebind(backend, q string) string {
	if backend != "postgres" {
		return q
	}
	n := 0
	var b strings.Builder
	for _, r := range q {
		if r == '?' {
			n++
			b.WriteString("$" + string(rune('0'+n)))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func BenchmarkSourceNext(b *testing.B) {
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) {
			ctx := context.Background()
			s, err := sequence.Open(ctx, withParams("sqlrow+"+be.fresh(b), "name=bench"))
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.Next(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkCounterNext(b *testing.B) {
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) {
			ctx := context.Background()
			c, err := sequence.OpenCounter(ctx, withParams(be.fresh(b), "name=bench&period=day"))
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := c.Next(ctx, seqtest.T0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
