package main_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/idforge/idforge/internal/e2e"
)

// Nothing is open by default on a public address; with a token, requests
// without it are refused and requests with it served.
func TestAuthOnTheBinary(t *testing.T) {
	endToEnd(t, alone)
	open := e2e.NewNode(t, "--http", "0.0.0.0:0")
	err := open.Start()
	if err == nil || !strings.Contains(err.Error(), "IDFORGE_TOKEN") {
		t.Fatalf("binding 0.0.0.0 without a token: %v, want a refusal saying how to set one", err)
	}

	const admin = "admin-token-0123456789abcdef"
	n := e2e.NewNode(t, "--http", "0.0.0.0:0")
	n.Env = []string{"IDFORGE_TOKEN=" + admin}
	if err := n.Start(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if status, body, _ := e2e.Do(ctx, "POST", n.URL("/v1/keys"), `{"key":"order"}`); status != http.StatusUnauthorized || !strings.Contains(body, "unauthenticated") {
		t.Fatalf("without a token: %d %s", status, body)
	}
	req, _ := http.NewRequest("POST", n.URL("/v1/keys"), strings.NewReader(`{"key":"order"}`))
	req.Header.Set("Authorization", "Bearer "+admin)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("with the admin token: %v %v", resp.Status, err)
	}
	resp.Body.Close()
	if status, _, _ := e2e.Get(ctx, n.URL("/api/segment/get/order?token="+admin)); status != 200 {
		t.Fatalf("Leaf endpoint with ?token=: %d", status)
	}
	if status, _, _ := e2e.Get(ctx, n.URL("/healthz")); status != 200 {
		t.Fatalf("healthz must stay open: %d", status)
	}
}
