package main_test

import (
	"context"
	"errors"
	"testing"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/client"
	"github.com/idforge/idforge/internal/e2e"
)

// The binary serves gRPC next to HTTP: the Go client issues over it, and
// errors come back as idforge's sentinels.
func TestGRPCOnTheBinary(t *testing.T) {
	endToEnd(t, parallel)
	addr := e2e.FreePort(t)
	n := e2e.StartNode(t, "--grpc", addr)
	createKey(t, n, `{"key":"order","step":100}`)
	c, err := client.NewGRPC([]string{addr})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	first, err := c.Next(ctx, "order")
	if err != nil || first != 1 {
		t.Fatalf("Next over gRPC = %d, %v", first, err)
	}
	ids, err := c.NextN(ctx, "order", 5)
	if err != nil || len(ids) != 5 || ids[0] != 2 {
		t.Fatalf("NextN over gRPC = %v, %v", ids, err)
	}
	if _, err := c.Next(ctx, "nope"); !errors.Is(err, idforge.ErrUnknownKey) {
		t.Fatalf("unknown key over gRPC: %v", err)
	}
}
