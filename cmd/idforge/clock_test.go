package main_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idforge/idforge/internal/e2e"
)

// The real binary's clock is moved (a test build reads a skew the test
// controls): a 3 ms step back is waited out, a 1 s step is refused, or
// borrowed through when configured, and a restart with the clock an hour
// behind the time fence refuses to start. No ID is ever issued twice.
func TestClockJumps(t *testing.T) {
	endToEnd(t, alone)
	ctx := context.Background()
	n := e2e.StartNode(t)
	createKey(t, n, `{"key":"msg","strategy":"snowflake"}`)
	ledger := e2e.NewLedger()
	take := func(want int) (int, string) {
		t.Helper()
		status, body, err := e2e.Get(ctx, n.URL("/api/snowflake/get/msg"))
		if err != nil {
			t.Fatal(err)
		}
		if status == 200 {
			id, err := e2e.FetchIDFromBody(body)
			if err != nil {
				t.Fatal(err)
			}
			ledger.Add(0, id)
		}
		if want != 0 && status != want {
			t.Fatalf("status %d (%s), want %d", status, body, want)
		}
		return status, body
	}
	for range 20 {
		take(200)
	}

	n.SetClock(-3 * time.Millisecond) // an NTP slew: waited out
	for range 20 {
		take(200)
	}

	n.SetClock(-time.Second) // a step: refused, with the reason
	if _, body := take(503); !strings.Contains(body, "clock_moved_backwards") {
		t.Fatalf("1 s back: %s", body)
	}
	n.SetClock(0)
	time.Sleep(50 * time.Millisecond)
	take(200)

	// With a borrowing budget, the same step is issued through.
	if err := n.Terminate(); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "idforge.toml")
	os.WriteFile(cfg, []byte("[snowflake]\nmax_borrow = \"2s\"\n"), 0o600)
	borrowing := e2e.NewNode(t, "--config", cfg, "--data", n.Data)
	if err := borrowing.Start(); err != nil {
		t.Fatal(err)
	}
	n = borrowing
	for range 20 {
		take(200)
	}
	n.SetClock(-time.Second)
	for range 200 {
		take(200)
	}
	n.SetClock(0)
	take(200)

	// Stopped, and the clock goes an hour back: the node refuses to start.
	if err := n.Terminate(); err != nil {
		t.Fatal(err)
	}
	n.SetClock(-time.Hour)
	err := n.Restart()
	if err == nil || !strings.Contains(err.Error(), "clock moved backwards") {
		t.Fatalf("restart an hour behind the fence: %v", err)
	}
	n.SetClock(0)
	if err := n.Restart(); err != nil {
		t.Fatal(err)
	}
	take(200)

	if err := ledger.CheckUnique(); err != nil {
		t.Fatal(err)
	}
	if err := ledger.CheckIncreasing(); err != nil {
		t.Fatal(err)
	}
}
