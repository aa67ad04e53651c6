package testsvc

import (
	"cmp"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	mysqldrv "github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver
)

// Environment variables naming the admin URL of each server.
const (
	MySQLEnv    = "IDFORGE_TEST_MYSQL"
	PostgresEnv = "IDFORGE_TEST_POSTGRES"
)

// Admin URLs used when the environment sets none.
const (
	DefaultMySQL    = "mysql://root@127.0.0.1:3306/"
	DefaultPostgres = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
)

// How each service is started on a development machine, for skip messages.
const (
	startMySQL    = "start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd"
	startPostgres = "pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start"
)

// setupTimeout bounds each administrative step (connect, create, drop).
const setupTimeout = 30 * time.Second

// service describes one kind of server.
type service struct {
	name  string // for messages: "MariaDB/MySQL"
	env   string
	def   string
	start string
	// dsn converts a URL (admin or store) into what sql.Open takes.
	dsn    func(u *url.URL) (driver, dsn string, err error)
	create func(db string) string
	drop   func(db string) string
}

var (
	mysqlService = &service{
		name:   "MariaDB/MySQL",
		env:    MySQLEnv,
		def:    DefaultMySQL,
		start:  startMySQL,
		dsn:    mysqlDSN,
		create: func(db string) string { return "CREATE DATABASE `" + db + "`" },
		drop:   func(db string) string { return "DROP DATABASE IF EXISTS `" + db + "`" },
	}
	postgresService = &service{
		name:   "PostgreSQL",
		env:    PostgresEnv,
		def:    DefaultPostgres,
		start:  startPostgres,
		dsn:    func(u *url.URL) (string, string, error) { return "pgx", u.String(), nil },
		create: func(db string) string { return `CREATE DATABASE "` + db + `"` },
		// FORCE ends sessions a test left open (PostgreSQL 13 and later).
		drop: func(db string) string { return `DROP DATABASE IF EXISTS "` + db + `" WITH (FORCE)` },
	}
)

// MySQL creates an empty database on the MariaDB/MySQL server, drops it
// when tb ends, and returns its idforge store URL, e.g.
// "mysql://root@127.0.0.1:3306/idforge_t_1f2e3d4c5b6a7988".
func MySQL(tb testing.TB) string {
	tb.Helper()
	return mysqlService.fresh(tb)
}

// Postgres creates an empty database on the PostgreSQL server, drops it
// when tb ends, and returns its idforge store URL, e.g.
// "postgres://postgres@127.0.0.1:5432/idforge_t_1f2e3d4c5b6a7988?sslmode=disable".
func Postgres(tb testing.TB) string {
	tb.Helper()
	return postgresService.fresh(tb)
}

// MySQLDB opens the database of a store URL returned by MySQL with the
// driver directly, for SQL a test runs by hand. It is closed when tb ends.
// Only the URL's user, password, host, port and database are used.
func MySQLDB(tb testing.TB, storeURL string) *sql.DB {
	tb.Helper()
	return mysqlService.open(tb, storeURL)
}

// PostgresDB opens the database of a store URL returned by Postgres with
// the driver directly (pgx through database/sql, placeholders $1, $2 …),
// for SQL a test runs by hand. It is closed when tb ends.
func PostgresDB(tb testing.TB, storeURL string) *sql.DB {
	tb.Helper()
	return postgresService.open(tb, storeURL)
}

// admins caches one administrative pool per admin URL for the whole test
// binary, and the error of an unreachable server so that later tests skip
// at once.
var admins struct {
	mu    sync.Mutex
	pools map[string]*sql.DB
	errs  map[string]error
}

// admin returns the admin URL and an open pool to it, or ends the test.
func (s *service) admin(tb testing.TB) (*url.URL, *sql.DB) {
	tb.Helper()
	raw := os.Getenv(s.env)
	if raw == "" {
		raw = s.def
	}
	u, err := url.Parse(raw)
	if err != nil {
		tb.Fatalf("testsvc: %s: bad admin URL: %v", s.env, err)
	}
	admins.mu.Lock()
	defer admins.mu.Unlock()
	if admins.pools == nil {
		admins.pools = map[string]*sql.DB{}
		admins.errs = map[string]error{}
	}
	db, err := admins.pools[raw], admins.errs[raw]
	if db == nil && err == nil {
		db, err = s.connect(u)
		admins.pools[raw], admins.errs[raw] = db, err
	}
	if err != nil {
		msg := fmt.Sprintf("testsvc: %s at %s is unreachable (%v); start it with\n\t%s\nor point %s at another server",
			s.name, u.Redacted(), err, s.start, s.env)
		if os.Getenv("CI") == "true" {
			tb.Fatal(msg)
		}
		tb.Skip(msg)
	}
	return u, db
}

func (s *service) connect(u *url.URL) (*sql.DB, error) {
	driver, dsn, err := s.dsn(u)
	if err != nil {
		return nil, err
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, err
	}
	db.SetMaxIdleConns(2)
	return db, nil
}

func (s *service) fresh(tb testing.TB) string {
	tb.Helper()
	u, db := s.admin(tb)
	name := randomName()
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()
	if _, err := db.ExecContext(ctx, s.create(name)); err != nil {
		tb.Fatalf("testsvc: %s: create database %s: %v", s.name, name, err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
		defer cancel()
		if _, err := db.ExecContext(ctx, s.drop(name)); err != nil {
			tb.Errorf("testsvc: %s: drop database %s: %v", s.name, name, err)
		}
	})
	store := *u
	store.Path = "/" + name
	store.RawPath = ""
	return store.String()
}

func (s *service) open(tb testing.TB, storeURL string) *sql.DB {
	tb.Helper()
	u, err := url.Parse(storeURL)
	if err != nil {
		tb.Fatalf("testsvc: store URL: %v", err)
	}
	driver, dsn, err := s.dsn(u)
	if err != nil {
		tb.Fatalf("testsvc: store URL %s: %v", u.Redacted(), err)
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		tb.Fatalf("testsvc: open %s: %v", u.Redacted(), err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

// randomName returns "idforge_t_" and 16 random hex digits.
func randomName() string {
	var b [8]byte
	rand.Read(b[:])
	return "idforge_t_" + hex.EncodeToString(b[:])
}

// mysqlDSN converts "mysql://user:pass@host:port/db" into the driver's DSN.
// The query and any host but the first are ignored.
func mysqlDSN(u *url.URL) (string, string, error) {
	cfg := mysqldrv.NewConfig()
	cfg.User = u.User.Username()
	cfg.Passwd, _ = u.User.Password()
	cfg.Net, cfg.Addr = "tcp", strings.Split(u.Host, ",")[0]
	if u.Port() == "" && !strings.Contains(cfg.Addr, ":") {
		cfg.Addr = net.JoinHostPort(cmp.Or(cfg.Addr, "127.0.0.1"), "3306")
	}
	cfg.DBName = strings.TrimPrefix(u.Path, "/")
	return "mysql", cfg.FormatDSN(), nil
}
