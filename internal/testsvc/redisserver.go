package testsvc

import (
	"bytes"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"
)

// RedisServerEnv names the redis-server binary StartRedisServer runs;
// "redis-server" on the PATH when unset.
const RedisServerEnv = "IDFORGE_TEST_REDIS_SERVER"

// RedisServer is a throwaway redis-server process of a test's own, on a
// free loopback port, without persistence (--save "" --appendonly no): a
// test may kill it and start it again, empty, on the same port.
type RedisServer struct {
	tb   testing.TB
	bin  string
	dir  string
	port int
	// args gives the command line for a port (start and Restart).
	args func(port int) []string

	mu   sync.Mutex
	cmd  *exec.Cmd
	exit chan struct{} // closed when cmd has exited
}

// StartRedisServer starts a redis-server on a free port of 127.0.0.1 and
// kills it when tb ends. Extra are more redis-server options
// ("--cluster-enabled", "yes"). When the binary is missing the test is
// skipped with a message saying how to install it, or fails under CI
// (CI=true).
func StartRedisServer(tb testing.TB, extra ...string) *RedisServer {
	tb.Helper()
	s := &RedisServer{tb: tb, bin: lookRedisTool(tb, "redis-server", RedisServerEnv, "redis-server"), dir: tb.TempDir()}
	s.args = func(port int) []string {
		return append([]string{
			"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
			"--save", "", "--appendonly", "no", "--daemonize", "no",
			"--dir", s.dir, "--logfile", "",
			"--repl-diskless-sync-delay", "0"}, extra...)
	}
	s.startFree("redis-server")
	return s
}

// startFree starts the process on a free port, killed when the test
// ends.
func (s *RedisServer) startFree(what string) {
	s.tb.Helper()
	s.tb.Cleanup(s.Kill)
	// A free port may be taken between choosing and binding it: try a few.
	var last error
	for range 5 {
		port, err := freePort()
		if err != nil {
			s.tb.Fatalf("testsvc: %s: find a free port: %v", what, err)
		}
		s.port = port
		if last = s.start(); last == nil {
			return
		}
	}
	s.tb.Fatalf("testsvc: %s: %v", what, last)
}

// freePort returns a TCP port of 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// start runs the server on s.port and waits until it answers PING.
func (s *RedisServer) start() error {
	cmd := exec.Command(s.bin, s.args(s.port)...)
	log := &lockedWriter{w: new(bytes.Buffer)}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return err
	}
	exit := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exit)
	}()
	s.mu.Lock()
	s.cmd, s.exit = cmd, exit
	s.mu.Unlock()
	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case <-exit:
			return fmt.Errorf("exited at start on port %d: %s", s.port, log.String())
		default:
		}
		if ping(s.Addr()) == nil {
			return nil
		}
		if time.Now().After(deadline) {
			s.Kill()
			return fmt.Errorf("no answer on port %d within 10s: %s", s.port, log.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// ping sends a PING in RESP and expects +PONG.
func ping(addr string) error {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	buf := make([]byte, 7)
	n, err := c.Read(buf)
	if err != nil {
		return err
	}
	if string(buf[:n]) != "+PONG\r\n" {
		return fmt.Errorf("answered %q to PING", buf[:n])
	}
	return nil
}

// Addr returns the server's host:port.
func (s *RedisServer) Addr() string { return "127.0.0.1:" + strconv.Itoa(s.port) }

// URL returns the server's URL, redis://127.0.0.1:<port>/0.
func (s *RedisServer) URL() string { return "redis://" + s.Addr() + "/0" }

// Kill ends the server with SIGKILL, as a crash would, and waits for it
// to exit. Its data is gone. It does nothing if the server is not running.
func (s *RedisServer) Kill() {
	s.mu.Lock()
	cmd, exit := s.cmd, s.exit
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	cmd.Process.Kill()
	<-exit
}

// Restart starts the server again, empty, on the same port, after Kill.
// It fails the test if the server does not come up.
func (s *RedisServer) Restart() {
	s.tb.Helper()
	s.Kill()
	if err := s.start(); err != nil {
		s.tb.Fatalf("testsvc: redis-server: restart: %v", err)
	}
}

// lockedWriter is a buffer the process's output goroutine writes while a
// test may read it.
type lockedWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.String()
}
