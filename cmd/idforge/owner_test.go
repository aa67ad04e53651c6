package main

import (
	"os"
	"strings"
	"testing"
)

// A node's identity at a worker-ID coordinator decides whether it is
// "the same node restarting" and gets its worker ID back, so two live
// processes must never share one.
func TestOwner(t *testing.T) {
	host, _ := os.Hostname()
	var c Config
	if got, want := c.owner("[::]:8080"), host+":8080"; got != want {
		t.Errorf("any address: owner %q, want %q", got, want)
	}
	if got := c.owner("10.1.2.3:8080"); got != "10.1.2.3:8080" {
		t.Errorf("a bound address: owner %q, want the address (two servers on one host, same port)", got)
	}
	// One-shot commands: a fresh identity per process and per call.
	a, b := c.owner(""), c.owner("")
	if a == b || !strings.HasPrefix(a, host+":cli/") {
		t.Errorf("command owners %q and %q: want distinct host:cli/... identities", a, b)
	}
	// advertise names the server, never a command running beside it
	// (which would take the server's worker ID over).
	c.Advertise = "node-1.example:8080"
	if got := c.owner("[::]:8080"); got != c.Advertise {
		t.Errorf("server with advertise: owner %q", got)
	}
	if got := c.owner(""); got == c.Advertise {
		t.Error("a command took the server's advertised identity")
	}
}

// Every run of a command would use up a ZooKeeper worker ID for good.
func TestCommandRefusesZooKeeperWorker(t *testing.T) {
	e := env(map[string]string{"IDFORGE_DATA": t.TempDir(), "IDFORGE_WORKER": "zk://127.0.0.1:2181/idforge"})
	code, _, stderr := runCmd(t, e, "next", "order")
	if code != 2 || !strings.Contains(stderr, "ZooKeeper") {
		t.Fatalf("next with a ZooKeeper worker: exit %d, %q; want 2 and a reason", code, stderr)
	}
}
