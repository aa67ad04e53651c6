package testsvc

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	mysqldrv "github.com/go-sql-driver/mysql"
)

// MariaDBServer is a throwaway mariadbd of a test's own: its own data
// directory in the test's temporary directory, a free loopback port, a
// binary log and a server_id, so that tests can build a primary and an
// asynchronous replica, kill one and promote the other, without touching
// the machine's shared server. Grant tables are skipped: root, without a
// password, may do anything.
type MariaDBServer struct {
	tb       testing.TB
	dir      string
	port     int
	serverID int

	mu   sync.Mutex
	cmd  *exec.Cmd
	exit chan struct{}
}

// StartMariaDB starts a mariadbd with server_id id and kills it when tb
// ends. When mariadbd or mariadb-install-db is missing the test is
// skipped, saying how to install them, or fails under CI (CI=true).
func StartMariaDB(tb testing.TB, id int) *MariaDBServer {
	tb.Helper()
	for _, bin := range []string{"mariadbd", "mariadb-install-db"} {
		if _, err := exec.LookPath(bin); err != nil {
			serviceUnreachable(tb, bin, bin, err, "apt-get install mariadb-server", "PATH")
		}
	}
	s := &MariaDBServer{tb: tb, dir: tb.TempDir(), serverID: id}
	install := exec.Command("mariadb-install-db", "--no-defaults", "--datadir="+filepath.Join(s.dir, "data"),
		"--auth-root-authentication-method=normal", "--skip-test-db", "--user="+currentUser())
	if out, err := install.CombinedOutput(); err != nil {
		tb.Fatalf("testsvc: mariadb-install-db: %v\n%s", err, out)
	}
	tb.Cleanup(s.Kill)
	var last error
	for range 5 {
		port, err := freePort()
		if err != nil {
			tb.Fatalf("testsvc: mariadbd: find a free port: %v", err)
		}
		s.port = port
		if last = s.start(); last == nil {
			return s
		}
	}
	tb.Fatalf("testsvc: mariadbd: %v", last)
	return nil
}

// currentUser is the account mariadbd runs as: the test's own.
func currentUser() string {
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	if os.Geteuid() == 0 {
		return "root"
	}
	return strconv.Itoa(os.Geteuid())
}

func (s *MariaDBServer) start() error {
	cmd := exec.Command("mariadbd", "--no-defaults",
		"--datadir="+filepath.Join(s.dir, "data"), "--socket="+filepath.Join(s.dir, "sock"),
		"--pid-file="+filepath.Join(s.dir, "pid"), "--log-error="+filepath.Join(s.dir, "error.log"),
		"--bind-address=127.0.0.1", "--port="+strconv.Itoa(s.port), "--user="+currentUser(),
		"--server-id="+strconv.Itoa(s.serverID), "--log-bin="+filepath.Join(s.dir, "binlog"), "--binlog-format=ROW",
		"--skip-grant-tables", "--skip-name-resolve", "--innodb-buffer-pool-size=32M", "--innodb-log-file-size=16M",
		"--slave-net-timeout=5")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return err
	}
	exit := make(chan struct{})
	go func() { cmd.Wait(); close(exit) }()
	s.mu.Lock()
	s.cmd, s.exit = cmd, exit
	s.mu.Unlock()
	deadline := time.Now().Add(60 * time.Second)
	for {
		db := s.DB()
		err := db.Ping()
		db.Close()
		if err == nil {
			return nil
		}
		select {
		case <-exit:
			log, _ := os.ReadFile(filepath.Join(s.dir, "error.log"))
			return fmt.Errorf("exited on port %d: %s%s", s.port, out.String(), log)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.Kill()
			return fmt.Errorf("not answering on port %d: %v", s.port, err)
		}
	}
}

// Addr is the server's host:port.
func (s *MariaDBServer) Addr() string { return "127.0.0.1:" + strconv.Itoa(s.port) }

// DB opens a pool on the server as root, without a database; the caller
// closes it.
func (s *MariaDBServer) DB() *sql.DB {
	cfg := mysqldrv.NewConfig()
	cfg.User, cfg.Net, cfg.Addr = "root", "tcp", s.Addr()
	cfg.Timeout = 2 * time.Second
	c, err := mysqldrv.NewConnector(cfg)
	if err != nil {
		s.tb.Fatalf("testsvc: mariadbd: %v", err)
	}
	return sql.OpenDB(c)
}

// Exec runs statements on the server, failing the test on error.
func (s *MariaDBServer) Exec(stmts ...string) {
	s.tb.Helper()
	db := s.DB()
	defer db.Close()
	for _, q := range stmts {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_, err := db.ExecContext(ctx, q)
		cancel()
		if err != nil {
			s.tb.Fatalf("testsvc: mariadbd %s: %s: %v", s.Addr(), q, err)
		}
	}
}

// ReplicateFrom makes the server a read-only asynchronous replica of the
// primary at addr (host:port; a proxy in between lets a test cut the
// replication stream), from the start of the primary's binary log.
func (s *MariaDBServer) ReplicateFrom(addr string) {
	s.tb.Helper()
	host, port := splitHostPort(s.tb, addr)
	s.Exec("SET GLOBAL read_only = 1",
		fmt.Sprintf("CHANGE MASTER TO MASTER_HOST = '%s', MASTER_PORT = %d, MASTER_USER = 'root', MASTER_CONNECT_RETRY = 1, MASTER_USE_GTID = slave_pos", host, port),
		"START SLAVE")
}

// Promote turns a replica into a primary, as a fail-over tool would:
// replication stops and forgets its primary, and the server takes writes.
func (s *MariaDBServer) Promote() {
	s.tb.Helper()
	s.Exec("STOP SLAVE", "RESET SLAVE ALL", "SET GLOBAL read_only = 0")
}

// GTID returns the server's @@gtid_current_pos: how far its data goes.
func (s *MariaDBServer) GTID() string {
	s.tb.Helper()
	return s.query("SELECT @@gtid_current_pos")
}

// CatchUp waits until the replica has applied everything the primary
// at primary has written so far (MASTER_GTID_WAIT on the primary's
// binary log position), failing the test after 30s.
func (s *MariaDBServer) CatchUp(primary *MariaDBServer) {
	s.tb.Helper()
	pos := primary.query("SELECT @@gtid_binlog_pos")
	if waited := s.query("SELECT MASTER_GTID_WAIT(?, 30)", pos); waited != "0" {
		s.tb.Fatalf("testsvc: replica %s did not reach the primary's GTID %s in 30s (%s)", s.Addr(), pos, waited)
	}
}

// query returns the one value q answers, failing the test on error.
func (s *MariaDBServer) query(q string, args ...any) string {
	s.tb.Helper()
	db := s.DB()
	defer db.Close()
	var v string
	if err := db.QueryRow(q, args...).Scan(&v); err != nil {
		s.tb.Fatalf("testsvc: mariadbd %s: %s: %v", s.Addr(), q, err)
	}
	return v
}

// Kill kills the server with SIGKILL, as a crash would, and waits for it
// to exit.
func (s *MariaDBServer) Kill() {
	s.mu.Lock()
	cmd, exit := s.cmd, s.exit
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	cmd.Process.Kill()
	<-exit
}

// Restart starts a killed server again, on its port and data directory
// (InnoDB recovers what the crash left).
func (s *MariaDBServer) Restart() {
	s.tb.Helper()
	if err := s.start(); err != nil {
		s.tb.Fatalf("testsvc: mariadbd restart: %v", err)
	}
}

func splitHostPort(tb testing.TB, addr string) (string, int) {
	tb.Helper()
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		tb.Fatalf("testsvc: address %q: %v", addr, err)
	}
	port, err := strconv.Atoi(p)
	if err != nil {
		tb.Fatalf("testsvc: address %q: %v", addr, err)
	}
	return host, port
}
