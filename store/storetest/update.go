package storetest

import (
	"context"
	"testing"

	"github.com/idforge/idforge"
)

// testUpdateKey checks idforge.KeyUpdater, for stores that implement it:
// step and description change, max_id never does, the next claim of step
// 0 uses the new step, and bad changes are refused without effect.
func testUpdateKey(t *testing.T, st idforge.Store) {
	u, ok := st.(idforge.KeyUpdater)
	if !ok {
		t.Skip("the store does not implement idforge.KeyUpdater")
	}
	ctx := context.Background()
	mustCreate(t, st, segKey("orders", 1, 10))
	mustCreate(t, st, idforge.Key{Name: "events", Strategy: idforge.StrategySnowflake, Description: "old"})
	mustClaim(t, st, "orders", 0) // max_id 11

	if err := u.UpdateKey(ctx, "orders", 25, "order numbers, 订单号"); err != nil {
		t.Fatalf("UpdateKey(orders): %v", err)
	}
	checkKey(t, mustKey(t, st, "orders"), idforge.Key{Name: "orders", Strategy: idforge.StrategySegment, Step: 25, MaxID: 11, Description: "order numbers, 订单号"})
	wantSegment(t, mustClaim(t, st, "orders", 0), idforge.Segment{Start: 11, End: 36, Step: 25})

	if err := u.UpdateKey(ctx, "events", 0, "event IDs"); err != nil {
		t.Fatalf("UpdateKey(events): %v", err)
	}
	checkKey(t, mustKey(t, st, "events"), idforge.Key{Name: "events", Strategy: idforge.StrategySnowflake, Description: "event IDs"})
	if err := u.UpdateKey(ctx, "orders", 25, ""); err != nil {
		t.Fatalf("UpdateKey(orders, no description): %v", err)
	}
	if k := mustKey(t, st, "orders"); k.Description != "" {
		t.Errorf("description = %q, want it cleared", k.Description)
	}

	wantErr(t, u.UpdateKey(ctx, "nope", 5, ""), idforge.ErrUnknownKey, "UpdateKey(unknown)")
	wantErr(t, u.UpdateKey(ctx, "orders", 0, ""), idforge.ErrInvalidArgument, "UpdateKey(step 0)")
	wantErr(t, u.UpdateKey(ctx, "orders", idforge.MaxStep+1, ""), idforge.ErrInvalidArgument, "UpdateKey(step too large)")
	wantErr(t, u.UpdateKey(ctx, "events", 5, ""), idforge.ErrInvalidArgument, "UpdateKey(step of a snowflake key)")
	if k := mustKey(t, st, "orders"); k.Step != 25 || k.MaxID != 36 {
		t.Errorf("after refused changes: %+v, want step 25 and max_id 36", k)
	}
}
