// Package e2e is the end-to-end test kit: it builds the real idforge
// binary once, runs nodes of it on free ports, kills, pauses and restarts
// them, drives concurrent HTTP clients, and checks every issued ID for
// duplicates and order. Tests that use it exercise the product exactly as
// an operator runs it.
package e2e

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/idforge/idforge/internal/testclock"
)

var build struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// Main runs the tests of a package that uses the kit and removes the
// binary it built. Call it from TestMain: os.Exit(e2e.Main(m)).
func Main(m *testing.M) int {
	code := m.Run()
	if build.dir != "" {
		os.RemoveAll(build.dir)
	}
	return code
}

// Binary builds cmd/idforge (with -race when the tests run with -race)
// once per test process and returns its path. It is a test build (tag
// idforge_testclock): its clock can be skewed with Node.SetClock. It also
// has the release build's tag grpcnotrace (Dockerfile), so the end-to-end
// tests run the gRPC code the release ships.
func Binary(t testing.TB) string {
	t.Helper()
	build.once.Do(func() {
		build.dir, build.err = os.MkdirTemp("", "idforge-e2e-")
		if build.err != nil {
			return
		}
		build.path = filepath.Join(build.dir, "idforge")
		args := []string{"build", "-tags", testclock.BuildTag + ",grpcnotrace", "-o", build.path}
		if raceEnabled {
			args = append(args, "-race")
		}
		args = append(args, "github.com/idforge/idforge/cmd/idforge")
		cmd := exec.Command("go", args...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			build.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if build.err != nil {
		t.Fatal(build.err)
	}
	return build.path
}

// Node is one idforge server process. Its data directory outlives the
// process, so a restarted node is the same node.
type Node struct {
	t    testing.TB
	bin  string
	args []string
	// Data is the node's data directory.
	Data string
	// Addr is host:port of the running process's HTTP listener.
	Addr string
	// Env is added to the process's environment (set before Start).
	Env []string
	// Dir is the process's working directory; empty means the test's.
	Dir string

	clockFile string
	mu        sync.Mutex
	cmd       *exec.Cmd
	exited    chan struct{}
	logs      bytes.Buffer
}

// NewNode prepares a node running `idforge serve` with args (plus --data
// and a free --http port unless args set them). It does not start it.
func NewNode(t testing.TB, args ...string) *Node {
	t.Helper()
	n := &Node{t: t, bin: Binary(t), args: args, Data: t.TempDir()}
	n.clockFile = filepath.Join(t.TempDir(), "clock-offset")
	t.Cleanup(func() {
		n.Kill()
		if t.Failed() {
			t.Logf("logs of node %s:\n%s", n.Data, n.Logs())
		}
	})
	return n
}

// StartNode is NewNode followed by Start, failing the test on error.
func StartNode(t testing.TB, args ...string) *Node {
	t.Helper()
	n := NewNode(t, args...)
	if err := n.Start(); err != nil {
		t.Fatal(err)
	}
	return n
}

var listenRE = regexp.MustCompile(`msg="idforge serving" http=(\S+)`)

// Start runs the process and waits until it serves HTTP. If it exits
// first, the error holds its output.
func (n *Node) Start() error {
	args := []string{"serve"}
	if !hasFlag(n.args, "--data") {
		args = append(args, "--data", n.Data)
	}
	if !hasFlag(n.args, "--http") {
		args = append(args, "--http", "127.0.0.1:0")
	}
	args = append(args, n.args...)
	cmd := exec.Command(n.bin, args...)
	cmd.Dir = n.Dir
	cmd.Env = append(os.Environ(), "IDFORGE_CONFIG=", testclock.EnvFile+"="+n.clockFile)
	cmd.Env = append(cmd.Env, n.Env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	cmd.Stdout = &lockedWriter{n: n}
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan struct{})
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			n.mu.Lock()
			n.logs.WriteString(line + "\n")
			n.mu.Unlock()
			if m := listenRE.FindStringSubmatch(line); m != nil {
				select {
				case addr <- m[1]:
				default:
				}
			}
		}
		io.Copy(io.Discard, stderr)
	}()
	go func() {
		cmd.Wait()
		close(exited)
	}()
	n.mu.Lock()
	n.cmd, n.exited = cmd, exited
	n.mu.Unlock()

	select {
	case a := <-addr:
		n.mu.Lock()
		n.Addr = a
		n.mu.Unlock()
		return nil
	case <-exited:
		return fmt.Errorf("idforge exited before serving (%v):\n%s", cmd.ProcessState, n.Logs())
	case <-time.After(60 * time.Second):
		n.Kill()
		return fmt.Errorf("idforge did not start serving within 60 s:\n%s", n.Logs())
	}
}

func hasFlag(args []string, name string) bool {
	for _, a := range args {
		if a == name || strings.HasPrefix(a, name+"=") {
			return true
		}
	}
	return false
}

type lockedWriter struct{ n *Node }

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.n.mu.Lock()
	defer w.n.mu.Unlock()
	return w.n.logs.Write(p)
}

// SetClock skews the node's clock by offset from the real time (negative:
// behind), now and across restarts, as an NTP step or a bad RTC would.
func (n *Node) SetClock(offset time.Duration) {
	if err := os.WriteFile(n.clockFile, []byte(offset.String()), 0o644); err != nil {
		n.t.Fatal(err)
	}
	n.mu.Lock()
	exited := n.exited
	n.mu.Unlock()
	if exited == nil {
		return // not started: it reads the offset when it starts
	}
	select {
	case <-exited:
		return // stopped: the next start reads it
	default:
	}
	// The binary polls every millisecond and acknowledges each offset it
	// applied: wait for that, not for a guess at how long it takes.
	deadline := time.Now().Add(10 * time.Second)
	for {
		if b, err := os.ReadFile(testclock.AppliedFile(n.clockFile)); err == nil && string(b) == offset.String() {
			return
		}
		if time.Now().After(deadline) {
			n.t.Fatalf("the node did not apply the clock offset %v within 10 s (paused?)", offset)
		}
		time.Sleep(time.Millisecond)
	}
}

// FreePort returns a loopback address with a port free right now, for a
// node that must keep its host:port across restarts.
func FreePort(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// Logs returns everything the node's processes have written so far.
func (n *Node) Logs() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.logs.String()
}

// URL returns the address of path on the running node.
func (n *Node) URL(path string) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return "http://" + n.Addr + path
}

func (n *Node) signal(sig syscall.Signal) {
	n.mu.Lock()
	cmd := n.cmd
	n.mu.Unlock()
	if cmd != nil && cmd.Process != nil {
		cmd.Process.Signal(sig)
	}
}

// Kill sends SIGKILL and waits for the process to die. A node that is not
// running is left alone.
func (n *Node) Kill() {
	n.signal(syscall.SIGCONT) // a stopped process must run to die promptly
	n.signal(syscall.SIGKILL)
	n.wait()
}

// Pause freezes the process with SIGSTOP, as a long GC pause or a stalled
// VM would.
func (n *Node) Pause() { n.signal(syscall.SIGSTOP) }

// Resume continues a paused process with SIGCONT.
func (n *Node) Resume() { n.signal(syscall.SIGCONT) }

// Terminate sends SIGTERM (a graceful shutdown) and waits up to 30 s for
// the process to exit. It returns the exit error, nil for status 0.
func (n *Node) Terminate() error {
	n.signal(syscall.SIGTERM)
	n.mu.Lock()
	exited, cmd := n.exited, n.cmd
	n.mu.Unlock()
	if exited == nil {
		return nil
	}
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		n.Kill()
		return errors.New("idforge did not exit within 30 s of SIGTERM")
	}
	if !cmd.ProcessState.Success() {
		return fmt.Errorf("idforge exited with %v", cmd.ProcessState)
	}
	return nil
}

// KillInTurn kills the nodes one after another, rounds times, every
// `every`, restarting each 100 ms after its SIGKILL; it returns the first
// restart's error.
func KillInTurn(nodes []*Node, rounds int, every time.Duration) error {
	for round := range rounds {
		time.Sleep(every)
		victim := nodes[round%len(nodes)]
		victim.Kill()
		time.Sleep(100 * time.Millisecond)
		if err := victim.Restart(); err != nil {
			return err
		}
	}
	return nil
}

// Restart starts the node again on the same data directory. The node must
// have been killed or terminated.
func (n *Node) Restart() error {
	n.wait()
	return n.Start()
}

func (n *Node) wait() {
	n.mu.Lock()
	exited := n.exited
	n.mu.Unlock()
	if exited != nil {
		<-exited
	}
}

// Exited reports whether the node's process has ended.
func (n *Node) Exited() bool {
	n.mu.Lock()
	exited := n.exited
	n.mu.Unlock()
	if exited == nil {
		return true
	}
	select {
	case <-exited:
		return true
	default:
		return false
	}
}
