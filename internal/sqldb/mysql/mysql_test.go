package mysql_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	mysqldrv "github.com/go-sql-driver/mysql"

	"github.com/idforge/idforge/internal/dsn"
	"github.com/idforge/idforge/internal/sqldb"
	"github.com/idforge/idforge/internal/sqldb/mysql"
	"github.com/idforge/idforge/internal/testsvc"
)

func open(t *testing.T, rawURL string) *sqldb.DB {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	db, err := sqldb.Open(context.Background(), u, dsn.NewQuery(u, "test URL"), sqldb.Settings{}, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestKinds provokes each kind of error on the server and checks what
// KindOf makes of it; the few a test cannot provoke are given by hand.
func TestKinds(t *testing.T) {
	storeURL := testsvc.MySQL(t)
	db := open(t, storeURL)
	ctx := context.Background()
	for _, q := range []string{"CREATE TABLE t (id INT PRIMARY KEY, v INT) ENGINE=InnoDB", "INSERT INTO t VALUES (1, 0), (2, 0)"} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	// lockBoth locks row a and then, once both transactions hold their
	// first row, row b, in a transaction of its own.
	var held sync.WaitGroup
	lockBoth := func(a, b int) error {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			held.Done()
			return err
		}
		defer tx.Rollback()
		_, err = tx.ExecContext(ctx, "UPDATE t SET v = v + 1 WHERE id = ?", a)
		held.Done()
		if err != nil {
			return err
		}
		held.Wait()
		_, err = tx.ExecContext(ctx, "UPDATE t SET v = v + 1 WHERE id = ?", b)
		return err
	}
	deadlock := func() error {
		held.Add(2)
		errs := make(chan error, 2)
		go func() { errs <- lockBoth(1, 2) }()
		go func() { errs <- lockBoth(2, 1) }()
		return errors.Join(<-errs, <-errs)
	}
	lockWait := func() error {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		if _, err := tx.ExecContext(ctx, "UPDATE t SET v = v + 1 WHERE id = 1"); err != nil {
			return err
		}
		conn, err := db.Conn(ctx)
		if err != nil {
			return err
		}
		defer conn.Close()
		if _, err := conn.ExecContext(ctx, "SET SESSION innodb_lock_wait_timeout = 1"); err != nil {
			return err
		}
		_, err = conn.ExecContext(ctx, "UPDATE t SET v = v + 1 WHERE id = 1")
		return err
	}
	exec := func(q string) func() error {
		return func() error { _, err := db.ExecContext(ctx, q); return err }
	}
	missing := func() error {
		u, _ := url.Parse(storeURL)
		u.Path += "_missing"
		cfg, err := mysql.FromURL(u, dsn.NewQuery(u, "test URL"))
		if err != nil {
			return err
		}
		pool, err := mysql.OpenDB(cfg)
		if err != nil {
			return err
		}
		defer pool.Close()
		err = pool.PingContext(ctx)
		var nd *sqldb.NoDatabaseError
		if !errors.As(err, &nd) || !strings.Contains(nd.Create, "CREATE DATABASE `"+strings.TrimPrefix(u.Path, "/")+"`") ||
			!strings.Contains(err.Error(), "the database does not exist: create it with") {
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
		{"no such table", exec("SELECT * FROM nothing_here"), sqldb.NoTable},
		{"out of range", exec("UPDATE t SET v = 2147483647 + id"), sqldb.OutOfRange},
		{"bigint out of range", exec("SELECT CAST(9223372036854775807 AS SIGNED) + 1"), sqldb.OutOfRange},
		{"lock wait timeout", lockWait, sqldb.Transient},
		{"deadlock", deadlock, sqldb.Transient},
		{"missing database", missing, sqldb.NoDatabase},
		{"syntax error", exec("SELEKT 1"), sqldb.Other},
		{"connection killed (MariaDB)", func() error { return &mysqldrv.MySQLError{Number: 1927} }, sqldb.Transient},
		{"server gone, relayed", func() error { return &mysqldrv.MySQLError{Number: 2006} }, sqldb.Transient},
		{"interaction timeout (MySQL 8)", func() error { return &mysqldrv.MySQLError{Number: 4031} }, sqldb.Transient},
		{"connection broken mid-command", func() error { return mysqldrv.ErrInvalidConn }, sqldb.Transient},
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

func TestFromURLHosts(t *testing.T) {
	for raw, want := range map[string]string{
		"mysql://u@db/ids":                   "db:3306",
		"mysql://u@/ids":                     "127.0.0.1:3306",
		"mysql://u:pw@h1:3307,h2,h3:3308/db": "h1:3307,h2:3306,h3:3308",
		"mysql://u@[::1]/db":                 "[::1]:3306",
	} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := mysql.FromURL(u, dsn.NewQuery(u, "test URL"))
		if err != nil || cfg.Addr != want {
			t.Errorf("FromURL(%q).Addr = %v, %v; want %q", raw, cfg, err, want)
		}
	}
}

// A connection goes to the first host that answers and takes writes;
// when none does, the error names every host.
func TestOpenDBSkipsHosts(t *testing.T) {
	shared, err := url.Parse(testsvc.MySQL(t))
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse("mysql://" + shared.User.String() + "@127.0.0.1:1," + shared.Host + shared.Path)
	cfg, err := mysql.FromURL(u, dsn.NewQuery(u, "test URL"))
	if err != nil {
		t.Fatal(err)
	}
	db, err := mysql.OpenDB(mysql.Normalize(cfg, time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var one int
	if err := db.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil {
		t.Fatalf("through a dead host then the shared server: %v", err)
	}

	cfg.Addr = "127.0.0.1:1,127.0.0.1:2"
	dead, err := mysql.OpenDB(mysql.Normalize(cfg, time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer dead.Close()
	err = dead.PingContext(ctx)
	if err == nil || !strings.Contains(err.Error(), "no host takes writes") ||
		!strings.Contains(err.Error(), "127.0.0.1:1") || !strings.Contains(err.Error(), "127.0.0.1:2") {
		t.Fatalf("no host answering: %v; want an error naming both", err)
	}
	if sqldb.KindOf(err) != sqldb.Transient {
		t.Errorf("no host answering is not transient: %v", err)
	}
}
