package issuer

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/snowflake"
	"github.com/idforge/idforge/store/sqlite"
)

func ptr[T any](v T) *T { return &v }

func TestUpdateKey(t *testing.T) {
	iss, st := newIssuer(t, true)
	ctx := context.Background()
	if err := iss.CreateKey(ctx, idforge.Key{Name: "order", Strategy: idforge.StrategySegment, Step: 10, MaxID: 1}); err != nil {
		t.Fatal(err)
	}
	if err := iss.CreateKey(ctx, idforge.Key{Name: "msg", Strategy: idforge.StrategySnowflake}); err != nil {
		t.Fatal(err)
	}
	if _, err := iss.Next(ctx, "order"); err != nil {
		t.Fatal(err)
	}
	got, err := iss.UpdateKey(ctx, "order", idforge.KeyChange{Step: ptr(int64(50)), Description: ptr("orders"), MinStep: ptr(int64(20)), MaxStep: ptr(int64(500))})
	if err != nil {
		t.Fatal(err)
	}
	if got.Step != 50 || got.Description != "orders" || got.Bounds != (KeyBounds{20, 500}) || got.MaxID != 11 {
		t.Fatalf("after UpdateKey: %+v", got)
	}
	// Only what is given changes.
	if got, err = iss.UpdateKey(ctx, "order", idforge.KeyChange{MaxStep: ptr(int64(0))}); err != nil || got.Step != 50 || got.Bounds != (KeyBounds{MinStep: 20}) {
		t.Fatalf("clearing max_step: %+v, %v", got, err)
	}
	if got, err = iss.UpdateKey(ctx, "msg", idforge.KeyChange{Description: ptr("events")}); err != nil || got.Description != "events" {
		t.Fatalf("snowflake key's description: %+v, %v", got, err)
	}
	// A second node sharing the store takes the bounds at its Refresh.
	other := New(st, nil, Settings{Logger: quiet})
	t.Cleanup(func() { other.Close() })
	if _, err := other.Next(ctx, "order"); err != nil {
		t.Fatal(err)
	}
	if ks, _ := other.Key(ctx, "order"); ks.Bounds.MinStep != 20 {
		t.Fatalf("the other node's view: %+v", ks)
	}

	for name, tc := range map[string]struct {
		key  string
		c    idforge.KeyChange
		want error
		says string
	}{
		"unknown key":         {"nope", idforge.KeyChange{Step: ptr(int64(5))}, idforge.ErrUnknownKey, "nope"},
		"nothing to change":   {"order", idforge.KeyChange{}, idforge.ErrInvalidArgument, "nothing to change"},
		"step 0":              {"order", idforge.KeyChange{Step: ptr(int64(0))}, idforge.ErrInvalidArgument, "step 0 out of range"},
		"step too large":      {"order", idforge.KeyChange{Step: ptr(int64(idforge.MaxStep) + 1)}, idforge.ErrInvalidArgument, "out of range"},
		"step of snowflake":   {"msg", idforge.KeyChange{Step: ptr(int64(5))}, idforge.ErrInvalidArgument, "segment keys only"},
		"bounds of snowflake": {"msg", idforge.KeyChange{MinStep: ptr(int64(5))}, idforge.ErrInvalidArgument, "segment keys only"},
		"negative bound":      {"order", idforge.KeyChange{MaxStep: ptr(int64(-1))}, idforge.ErrInvalidArgument, "want 0"},
		"min above max":       {"order", idforge.KeyChange{MinStep: ptr(int64(100)), MaxStep: ptr(int64(50))}, idforge.ErrInvalidArgument, "above max_step"},
		"bad name":            {"a b", idforge.KeyChange{Step: ptr(int64(5))}, idforge.ErrInvalidKey, "not allowed"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := iss.UpdateKey(ctx, tc.key, tc.c)
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("UpdateKey: %v, want %v saying %q", err, tc.want, tc.says)
			}
		})
	}
	if k, _ := st.Key(ctx, "order"); k.Step != 50 {
		t.Fatalf("refused changes changed the key: %+v", k)
	}
}

func TestRetireKey(t *testing.T) {
	iss, st := newIssuer(t, true)
	ctx := context.Background()
	for _, k := range []idforge.Key{
		{Name: "order", Strategy: idforge.StrategySegment, Step: 10, MaxID: 1},
		{Name: "msg", Strategy: idforge.StrategySnowflake},
		{Name: "u7", Strategy: idforge.StrategyUUIDv7},
	} {
		if err := iss.CreateKey(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	otherSnow, err := snowflake.New(snowflake.Settings{Worker: 2, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { otherSnow.Close() })
	other := New(st, otherSnow, Settings{Logger: quiet})
	t.Cleanup(func() { other.Close() })
	if _, err := iss.Next(ctx, "order"); err != nil {
		t.Fatal(err)
	}
	first, err := other.Next(ctx, "order") // the other node holds [11, 21)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := iss.NextStrings(ctx, "u7", 1, ""); err != nil {
		t.Fatal(err)
	}
	// The other node issues from every key, itself and through a serial.
	if _, err := other.NextStrings(ctx, "u7", 1, ""); err != nil {
		t.Fatal(err)
	}
	if err := other.CreateSerial(ctx, idforge.Serial{Name: "m", Template: "M@{seq:msg}"}); err != nil {
		t.Fatal(err)
	}
	if _, err := other.NextSerial(ctx, "m", 1, nil); err != nil {
		t.Fatal(err)
	}
	before, _ := st.Key(ctx, "order")

	for _, key := range []string{"order", "msg", "u7"} {
		if err := iss.RetireKey(ctx, key); err != nil {
			t.Fatalf("RetireKey(%s): %v", key, err)
		}
	}
	if err := iss.RetireKey(ctx, "order"); err != nil {
		t.Fatalf("retiring again: %v", err)
	}
	// This node at once.
	if _, err := iss.Next(ctx, "order"); !errors.Is(err, idforge.ErrRetired) {
		t.Fatalf("Next(order) after RetireKey: %v, want ErrRetired", err)
	}
	if _, err := iss.Next(ctx, "msg"); !errors.Is(err, idforge.ErrRetired) {
		t.Fatalf("Next(msg): %v, want ErrRetired", err)
	}
	if _, err := iss.NextStrings(ctx, "u7", 1, ""); !errors.Is(err, idforge.ErrRetired) {
		t.Fatalf("NextStrings(u7): %v, want ErrRetired", err)
	}
	if _, err := iss.Take(ctx, "order", 3); !errors.Is(err, idforge.ErrRetired) {
		t.Fatalf("Take(order): %v, want ErrRetired", err)
	}
	if _, err := iss.ClaimRange(ctx, "order", 3); !errors.Is(err, idforge.ErrRetired) {
		t.Fatalf("ClaimRange(order): %v, want ErrRetired", err)
	}
	// The other node issues what it holds, but claims nothing more…
	claims := st.Claims()
	for {
		v, err := other.Next(ctx, "order")
		if err != nil {
			if !errors.Is(err, idforge.ErrRetired) {
				t.Fatalf("the other node: %v, want ErrRetired", err)
			}
			break
		}
		if v < first || v >= before.MaxID {
			t.Fatalf("the other node issued %d, outside what it claimed before the retirement", v)
		}
	}
	if st.Claims() != claims {
		t.Fatalf("the other node claimed %d segments for a retired key", st.Claims()-claims)
	}
	// …and after Refresh answers retired for every key.
	if err := other.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Next(ctx, "order"); !errors.Is(err, idforge.ErrRetired) {
		t.Fatalf("the other node after Refresh: %v", err)
	}
	if _, err := other.NextStrings(ctx, "u7", 1, ""); !errors.Is(err, idforge.ErrRetired) {
		t.Fatalf("the other node's u7 after Refresh: %v", err)
	}
	if _, err := other.NextSerial(ctx, "m", 1, nil); !errors.Is(err, idforge.ErrRetired) {
		t.Fatalf("the other node's serial over msg after Refresh: %v", err)
	}
	// The stored max never goes down, not even on Close.
	iss.Close()
	other.Close()
	if after, _ := st.Key(ctx, "order"); after.MaxID < before.MaxID {
		t.Fatalf("max_id went down from %d to %d", before.MaxID, after.MaxID)
	}
	// The name is never created again.
	iss2 := New(st, nil, Settings{Logger: quiet})
	t.Cleanup(func() { iss2.Close() })
	err = iss2.CreateKey(ctx, idforge.Key{Name: "order", Strategy: idforge.StrategySegment, Step: 10, MaxID: 1})
	if !errors.Is(err, idforge.ErrKeyExists) || !strings.Contains(err.Error(), "retired") {
		t.Fatalf("CreateKey(retired name): %v, want ErrKeyExists saying it is retired", err)
	}
	st.Delete("order") // even with its row deleted by hand
	err = iss2.CreateKey(ctx, idforge.Key{Name: "order", Strategy: idforge.StrategySegment, Step: 10, MaxID: 1})
	if !errors.Is(err, idforge.ErrKeyExists) {
		t.Fatalf("CreateKey(retired name, row deleted): %v, want ErrKeyExists", err)
	}
	if ks, err := iss2.Key(ctx, "msg"); err != nil || !ks.Retired {
		t.Fatalf("Key(msg) = %+v, %v; want it marked retired", ks, err)
	}
	if _, err := iss2.UpdateKey(ctx, "msg", idforge.KeyChange{Description: ptr("x")}); !errors.Is(err, idforge.ErrRetired) {
		t.Fatalf("UpdateKey(retired): %v, want ErrRetired", err)
	}
	if err := iss2.RetireKey(ctx, "nope"); !errors.Is(err, idforge.ErrUnknownKey) {
		t.Fatalf("RetireKey(unknown): %v, want ErrUnknownKey", err)
	}
}

// The same on SQLite, which keeps the key in Leaf's leaf_alloc table and
// the retirement and bounds in idforge_definitions: two issuers share the
// database as two nodes would.
func TestKeyAdminSQLite(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "idforge.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	a := New(st, nil, Settings{Logger: quiet})
	b := New(st, nil, Settings{Logger: quiet})
	t.Cleanup(func() { a.Close(); b.Close() })
	if err := a.CreateKey(ctx, idforge.Key{Name: "order", Strategy: idforge.StrategySegment, Step: 10, MaxID: 1}); err != nil {
		t.Fatal(err)
	}
	ks, err := a.UpdateKey(ctx, "order", idforge.KeyChange{Step: ptr(int64(20)), Description: ptr("orders"), MaxStep: ptr(int64(100))})
	if err != nil || ks.Step != 20 || ks.Bounds.MaxStep != 100 {
		t.Fatalf("UpdateKey: %+v, %v", ks, err)
	}
	if _, err := b.Next(ctx, "order"); err != nil {
		t.Fatal(err)
	}
	if ks, _ := b.Key(ctx, "order"); ks.Description != "orders" || ks.Bounds.MaxStep != 100 || ks.MaxID != 21 {
		t.Fatalf("the other node sees %+v", ks)
	}
	if err := a.RetireKey(ctx, "order"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Next(ctx, "order"); !errors.Is(err, idforge.ErrRetired) {
		t.Fatalf("Next here: %v", err)
	}
	for range 30 { // the other node's 20 buffered values, then the refused claim
		if _, err = b.Next(ctx, "order"); err != nil {
			break
		}
	}
	if !errors.Is(err, idforge.ErrRetired) {
		t.Fatalf("the other node: %v, want ErrRetired at its next claim", err)
	}
	if k, _ := st.Key(ctx, "order"); k.MaxID != 21 {
		t.Fatalf("max_id %d, want 21: no claim after the retirement", k.MaxID)
	}
	err = a.CreateKey(ctx, idforge.Key{Name: "order", Strategy: idforge.StrategySegment, Step: 10, MaxID: 1})
	if !errors.Is(err, idforge.ErrKeyExists) || !strings.Contains(err.Error(), "retired") {
		t.Fatalf("CreateKey(retired name): %v", err)
	}
}
