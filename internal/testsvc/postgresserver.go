package testsvc

import (
	"bytes"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver
)

// PostgresBinEnv names the directory of PostgreSQL's server programs
// (initdb, pg_ctl, pg_basebackup); when unset, the newest
// /usr/lib/postgresql/*/bin.
const PostgresBinEnv = "IDFORGE_TEST_PG_BIN"

// PostgresServer is a throwaway PostgreSQL cluster of a test's own: its
// own data directory, a free loopback port, trust authentication for the
// user postgres, so that tests can build a primary and a streaming
// standby, kill one and promote the other without touching the machine's
// shared server. PostgreSQL refuses to run as root: when the test runs as
// root, every program runs as the user postgres.
type PostgresServer struct {
	tb   testing.TB
	bin  string
	dir  string // data directory
	Port int
}

// postgresBin finds the server programs, or skips (fails under CI).
func postgresBin(tb testing.TB) string {
	tb.Helper()
	bin := os.Getenv(PostgresBinEnv)
	if bin == "" {
		dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
		if len(dirs) > 0 {
			bin = dirs[len(dirs)-1]
		}
	}
	if _, err := os.Stat(filepath.Join(bin, "pg_ctl")); err != nil || bin == "" {
		serviceUnreachable(tb, "pg_ctl", bin, fmt.Errorf("not found"), "apt-get install postgresql", PostgresBinEnv)
	}
	return bin
}

// pgRun runs a PostgreSQL program, as the user postgres when running as
// root.
func pgRun(bin, prog string, args ...string) ([]byte, error) {
	path := filepath.Join(bin, prog)
	var cmd *exec.Cmd
	if os.Geteuid() == 0 {
		cmd = exec.Command("runuser", append([]string{"-u", "postgres", "--", path}, args...)...)
	} else {
		cmd = exec.Command(path, args...)
	}
	cmd.Dir = os.TempDir()
	return cmd.CombinedOutput()
}

// pgDir makes a directory the server's user owns, removed when tb ends.
func pgDir(tb testing.TB) string {
	tb.Helper()
	dir, err := os.MkdirTemp("", "idforge-pg-")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			tb.Fatalf("testsvc: running as root, PostgreSQL needs the user postgres: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			tb.Fatal(err)
		}
	}
	return dir
}

// StartPostgres initialises a new cluster and starts it, with WAL for
// streaming replicas; it is stopped (immediately) when tb ends.
func StartPostgres(tb testing.TB) *PostgresServer {
	tb.Helper()
	s := &PostgresServer{tb: tb, bin: postgresBin(tb)}
	s.dir = filepath.Join(pgDir(tb), "data")
	if out, err := pgRun(s.bin, "initdb", "-D", s.dir, "-U", "postgres", "--auth=trust", "-N"); err != nil {
		tb.Fatalf("testsvc: initdb: %v\n%s", err, out)
	}
	s.start()
	return s
}

// StartStandby takes a base backup of the primary through addr (host:port;
// a proxy in between lets a test cut the WAL stream) and starts it as a
// streaming standby whose WAL comes through addr too.
func StartStandby(tb testing.TB, addr string) *PostgresServer {
	tb.Helper()
	s := &PostgresServer{tb: tb, bin: postgresBin(tb)}
	s.dir = filepath.Join(pgDir(tb), "data")
	host, port := splitHostPort(tb, addr)
	conn := fmt.Sprintf("host=%s port=%d user=postgres", host, port)
	if out, err := pgRun(s.bin, "pg_basebackup", "-d", conn, "-D", s.dir, "-R", "-X", "stream", "-c", "fast", "--no-sync"); err != nil {
		tb.Fatalf("testsvc: pg_basebackup: %v\n%s", err, out)
	}
	s.start()
	return s
}

func (s *PostgresServer) start() {
	s.tb.Helper()
	var last []byte
	for range 5 {
		port, err := freePort()
		if err != nil {
			s.tb.Fatal(err)
		}
		s.Port = port
		opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c wal_level=replica -c max_wal_senders=5 -c hot_standby=on -c fsync=off -c wal_receiver_timeout=5s",
			port, filepath.Dir(s.dir))
		out, err := pgRun(s.bin, "pg_ctl", "-D", s.dir, "-o", opts, "-l", filepath.Join(filepath.Dir(s.dir), "log"), "-w", "-t", "60", "start")
		if err == nil {
			s.tb.Cleanup(s.Kill)
			return
		}
		last = out
		log, _ := os.ReadFile(filepath.Join(filepath.Dir(s.dir), "log"))
		last = append(last, log...)
	}
	s.tb.Fatalf("testsvc: pg_ctl start: %s", last)
}

// Addr is the server's host:port.
func (s *PostgresServer) Addr() string { return "127.0.0.1:" + strconv.Itoa(s.Port) }

// DB opens a pool on the server's database postgres; the caller closes
// it.
func (s *PostgresServer) DB() *sql.DB {
	db, err := sql.Open("pgx", fmt.Sprintf("postgres://postgres@%s/postgres?sslmode=disable&connect_timeout=2", s.Addr()))
	if err != nil {
		s.tb.Fatal(err)
	}
	return db
}

// Exec runs statements on the server, failing the test on error.
func (s *PostgresServer) Exec(stmts ...string) {
	s.tb.Helper()
	db := s.DB()
	defer db.Close()
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			s.tb.Fatalf("testsvc: postgres %s: %s: %v", s.Addr(), q, err)
		}
	}
}

// Promote promotes a standby and waits until it takes writes.
func (s *PostgresServer) Promote() {
	s.tb.Helper()
	if out, err := pgRun(s.bin, "pg_ctl", "-D", s.dir, "-w", "-t", "60", "promote"); err != nil {
		s.tb.Fatalf("testsvc: pg_ctl promote: %v\n%s", err, out)
	}
	db := s.DB()
	defer db.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var recovery bool
		if err := db.QueryRow("SELECT pg_is_in_recovery()").Scan(&recovery); err == nil && !recovery {
			return
		}
		if time.Now().After(deadline) {
			s.tb.Fatal("testsvc: the promoted standby is still in recovery after 30s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// CatchUp waits until the standby has replayed everything the primary
// has written so far, failing the test after 30s.
func (s *PostgresServer) CatchUp(primary *PostgresServer) {
	s.tb.Helper()
	target := primary.LSN()
	db := s.DB()
	defer db.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var done bool
		if err := db.QueryRow("SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn", target).Scan(&done); err == nil && done {
			return
		}
		if time.Now().After(deadline) {
			s.tb.Fatalf("testsvc: standby %s did not replay the primary's WAL up to %s in 30s", s.Addr(), target)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// LSN returns where the server's WAL is: the insert position on a
// primary, the replayed one on a standby.
func (s *PostgresServer) LSN() string {
	s.tb.Helper()
	db := s.DB()
	defer db.Close()
	var lsn string
	err := db.QueryRow("SELECT CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() ELSE pg_current_wal_insert_lsn() END::text").Scan(&lsn)
	if err != nil {
		s.tb.Fatalf("testsvc: postgres %s: %v", s.Addr(), err)
	}
	return lsn
}

// Kill stops the server at once (pg_ctl stop -m immediate: no checkpoint,
// no more WAL sent), as a crash would.
func (s *PostgresServer) Kill() {
	out, err := pgRun(s.bin, "pg_ctl", "-D", s.dir, "-m", "immediate", "-w", "stop")
	if err != nil && !strings.Contains(string(out), "is not running") && !strings.Contains(string(out), "No such file") && !strings.Contains(string(out), "does not exist") {
		s.tb.Logf("testsvc: pg_ctl stop: %v\n%s", err, bytes.TrimSpace(out))
	}
}
