package postgres_test

import (
	"context"
	"database/sql"
	"errors"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/idforge/idforge/internal/dsn"
	"github.com/idforge/idforge/internal/sqldb"
	"github.com/idforge/idforge/internal/sqldb/postgres"
	"github.com/idforge/idforge/internal/testsvc"
)

// TestKinds provokes each kind of error on the server and checks what
// KindOf makes of it; the few a test cannot provoke are given by hand.
func TestKinds(t *testing.T) {
	storeURL := testsvc.Postgres(t)
	u, err := url.Parse(storeURL)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	db, err := sqldb.Open(ctx, u, dsn.NewQuery(u, "test URL"), sqldb.Settings{}, "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{"CREATE TABLE t (id int PRIMARY KEY, v int)", "INSERT INTO t VALUES (1, 0), (2, 0)"} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	exec := func(q string) func() error {
		return func() error { _, err := db.ExecContext(ctx, q); return err }
	}
	// inTx runs first in a transaction at level, then, once every
	// transaction begun with it has run its first, then.
	var held sync.WaitGroup
	inTx := func(level sql.IsolationLevel, first, then string) error {
		tx, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: level})
		if err == nil {
			defer tx.Rollback()
			_, err = tx.ExecContext(ctx, first)
		}
		held.Done()
		if err != nil {
			return err
		}
		held.Wait()
		if _, err = tx.ExecContext(ctx, then); err != nil {
			return err
		}
		return tx.Commit()
	}
	both := func(level sql.IsolationLevel, first1, then1, first2, then2 string) func() error {
		return func() error {
			held.Add(2)
			errs := make(chan error, 2)
			go func() { errs <- inTx(level, first1, then1) }()
			go func() { errs <- inTx(level, first2, then2) }()
			return errors.Join(<-errs, <-errs)
		}
	}
	const up1, up2 = "UPDATE t SET v = v + 1 WHERE id = 1", "UPDATE t SET v = v + 1 WHERE id = 2"
	noWait := func() error {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		if _, err := tx.ExecContext(ctx, up1); err != nil {
			return err
		}
		_, err = db.ExecContext(ctx, "SELECT * FROM t WHERE id = 1 FOR UPDATE NOWAIT")
		return err
	}
	missing := func() error {
		m := *u
		m.Path += "_missing"
		cfg, err := postgres.FromURL(&m, dsn.NewQuery(&m, "test URL"))
		if err != nil {
			return err
		}
		pool := postgres.OpenDB(cfg, sqldb.DefaultTimeout)
		defer pool.Close()
		err = pool.PingContext(ctx)
		var nd *sqldb.NoDatabaseError
		if !errors.As(err, &nd) || !strings.HasPrefix(nd.Create, "createdb -h ") || !strings.HasSuffix(nd.Create, "'"+strings.TrimPrefix(m.Path, "/")+"'") {
			t.Errorf("a missing database: %v; want a *NoDatabaseError with the command", err)
		}
		return err
	}
	for _, tt := range []struct {
		name    string
		provoke func() error
		want    sqldb.Kind
	}{
		{"duplicate key", exec("INSERT INTO t VALUES (1, 0)"), sqldb.Duplicate},
		{"duplicate table", exec("CREATE TABLE t (id int)"), sqldb.Duplicate},
		{"no such table", exec("SELECT * FROM nothing_here"), sqldb.NoTable},
		{"out of range", exec("SELECT 9223372036854775807::bigint + 1"), sqldb.OutOfRange},
		{"deadlock", both(sql.LevelReadCommitted, up1, up2, up2, up1), sqldb.Transient},
		{"serialization failure", both(sql.LevelRepeatableRead, "SELECT * FROM t", up1, "SELECT * FROM t", up1), sqldb.Transient},
		{"lock not available", noWait, sqldb.Transient},
		{"missing database", missing, sqldb.NoDatabase},
		{"syntax error", exec("SELEKT 1"), sqldb.Other},
		{"connection failure", func() error { return &pgconn.PgError{Code: "08006"} }, sqldb.Transient},
		{"admin shutdown", func() error { return &pgconn.PgError{Code: "57P01"} }, sqldb.Transient},
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
