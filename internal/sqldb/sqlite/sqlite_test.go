package sqlite_test

import (
	"context"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/idforge/idforge/internal/dsn"
	"github.com/idforge/idforge/internal/sqldb"
	"github.com/idforge/idforge/internal/sqldb/sqlite"
)

// TestKinds provokes each kind of error in a file and checks what KindOf
// makes of it.
func TestKinds(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kinds.db")
	u, _ := url.Parse("sqlite://" + filepath.ToSlash(path))
	ctx := context.Background()
	db, err := sqldb.Open(ctx, u, dsn.NewQuery(u, "test URL"), sqldb.Settings{}, "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{
		"CREATE TABLE t (id INTEGER PRIMARY KEY AUTOINCREMENT, v int UNIQUE)",
		"INSERT INTO t VALUES (9223372036854775807, 1)",
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	exec := func(q string) func() error {
		return func() error { _, err := db.ExecContext(ctx, q); return err }
	}
	busy := func() error {
		// The pool's one connection holds the write lock; another pool
		// waits a millisecond for it.
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		other := sqlite.OpenDB(path, time.Millisecond, true)
		defer other.Close()
		_, err = other.ExecContext(ctx, "INSERT INTO t (v) VALUES (2)")
		return err
	}
	for _, tt := range []struct {
		name    string
		provoke func() error
		want    sqldb.Kind
	}{
		{"duplicate key", exec("INSERT INTO t VALUES (9223372036854775807, 3)"), sqldb.Duplicate},
		{"unique violation", exec("INSERT INTO t (id, v) VALUES (5, 1)"), sqldb.Duplicate},
		{"auto-increment exhausted", exec("INSERT INTO t (v) VALUES (4)"), sqldb.OutOfRange},
		{"busy", busy, sqldb.Transient},
		{"syntax error", exec("SELEKT 1"), sqldb.Other},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.provoke()
			if err == nil {
				t.Fatal("no error")
			}
			if got := sqldb.KindOf(err); got != tt.want {
				t.Errorf("KindOf(%v) = %v, want %v", err, got, tt.want)
			}
		})
	}
}

func TestPath(t *testing.T) {
	for raw, want := range map[string]string{
		"sqlite:///abs/x.db": "/abs/x.db",
		"sqlite:rel/x.db":    "rel/x.db",
		"sqlite:":            filepath.Join("/data", "idforge.db"),
	} {
		u, _ := url.Parse(raw)
		if got, err := sqlite.Path(u, dsn.NewQuery(u, "test URL"), "/data"); err != nil || got != filepath.FromSlash(want) {
			t.Errorf("Path(%q) = %q, %v; want %q", raw, got, err, want)
		}
	}
	u, _ := url.Parse("sqlite://name.db")
	if _, err := sqlite.Path(u, dsn.NewQuery(u, "test URL"), "/data"); err == nil {
		t.Error("sqlite://name.db (a host) was taken for a file")
	}
}
