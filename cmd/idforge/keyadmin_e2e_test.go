package main_test

import (
	"context"
	"strings"
	"testing"

	"github.com/idforge/idforge/internal/e2e"
)

// The real binary refuses to serve after its layout changed, and serves
// again with the layout it first used.
func TestFingerprintLayoutServe(t *testing.T) {
	endToEnd(t, parallel)
	n := e2e.NewNode(t)
	n.Env = []string{"IDFORGE_LAYOUT=twitter"}
	if err := n.Start(); err != nil {
		t.Fatal(err)
	}
	createKey(t, n, `{"key":"evt","strategy":"snowflake"}`)
	if status, body, err := e2e.Do(context.Background(), "GET", n.URL("/v1/ids/evt"), ""); err != nil || status != 200 {
		t.Fatalf("issue: %d %s %v", status, body, err)
	}
	if err := n.Terminate(); err != nil {
		t.Fatal(err)
	}
	n.Env = []string{"IDFORGE_LAYOUT=sonyflake"}
	err := n.Restart()
	if err == nil || !strings.Contains(err.Error(), "unsafe change") || !strings.Contains(err.Error(), "keep the layout") {
		t.Fatalf("restart with another layout: %v, want a refusal", err)
	}
	n.Env = []string{"IDFORGE_LAYOUT=twitter"}
	if err := n.Restart(); err != nil {
		t.Fatalf("restart with the first layout: %v", err)
	}
}
