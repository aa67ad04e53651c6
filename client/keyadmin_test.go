package client

import (
	"context"
	"errors"
	"testing"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/store/memstore"
)

// Every remote client (HTTP, gRPC, with and without a range cache)
// changes and retires keys; a retired key issues nothing through it.
func TestKeyAdmin(t *testing.T) {
	for _, v := range variants() {
		if !v.mode.remote {
			continue
		}
		t.Run(v.name, func(t *testing.T) {
			st := newStore(t)
			n := newNode(t, st, 5, 100)
			c := v.mode.new(t, []*node{n}, v.opts...)
			defer c.Close()
			ka, ok := c.(KeyAdmin)
			if !ok {
				t.Fatalf("%T is no KeyAdmin", c)
			}
			testKeyAdmin(t, c, ka, st)
		})
	}
}

func testKeyAdmin(t *testing.T, c Client, ka KeyAdmin, st *memstore.Store) {
	ctx := testCtx(t)
	step, desc := int64(250), "invoices"
	if err := ka.UpdateKey(ctx, "invoice", idforge.KeyChange{Step: &step, Description: &desc}); err != nil {
		t.Fatal(err)
	}
	if k, _ := st.Key(context.Background(), "invoice"); k.Step != 250 || k.Description != "invoices" {
		t.Fatalf("after UpdateKey the store holds %+v", k)
	}
	zero := int64(0)
	if err := ka.UpdateKey(ctx, "invoice", idforge.KeyChange{Step: &zero}); !errors.Is(err, idforge.ErrInvalidArgument) {
		t.Fatalf("UpdateKey(step 0): %v, want ErrInvalidArgument", err)
	}
	if err := ka.UpdateKey(ctx, "nope", idforge.KeyChange{Step: &step}); !errors.Is(err, idforge.ErrUnknownKey) {
		t.Fatalf("UpdateKey(unknown): %v, want ErrUnknownKey", err)
	}
	if _, err := c.Next(ctx, "invoice"); err != nil {
		t.Fatal(err)
	}
	if err := ka.RetireKey(ctx, "invoice"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Next(ctx, "invoice"); !errors.Is(err, idforge.ErrRetired) {
		t.Fatalf("Next(retired): %v, want ErrRetired", err)
	}
	if err := ka.RetireKey(ctx, "nope"); !errors.Is(err, idforge.ErrUnknownKey) {
		t.Fatalf("RetireKey(unknown): %v, want ErrUnknownKey", err)
	}
}
