package issuer

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/store/memstore"
)

func globalKey(name string) idforge.Key {
	return WithDefaults(idforge.Key{Name: name, Step: 100, Order: idforge.OrderGlobal})
}

// A key created in global order is served in it on every node sharing
// the store: a second node claims above what the first returned, with no
// buffer in between, and every surface reads the order.
func TestGlobalOrderKey(t *testing.T) {
	iss, st := newIssuer(t, false)
	ctx := context.Background()
	if err := iss.CreateKey(ctx, globalKey("tx")); err != nil {
		t.Fatal(err)
	}
	other := New(st, nil, Settings{Logger: quiet})
	t.Cleanup(func() { other.Close() })
	var last int64
	for k := range 6 {
		node := []*Issuer{iss, other}[k%2]
		ids, err := node.NextN(ctx, "tx", 3)
		if err != nil {
			t.Fatal(err)
		}
		if ids[0] != last+1 {
			t.Fatalf("call %d got %v after %d: want the next values, nothing buffered", k, ids, last)
		}
		last = ids[2]
	}
	if k, err := other.Key(ctx, "tx"); err != nil || k.Order != idforge.OrderGlobal || k.Segment == nil || k.Segment.Buffered != 0 {
		t.Fatalf("Key = %+v, %v", k, err)
	}
	keys, err := iss.Keys(ctx)
	if err != nil || len(keys) != 1 || keys[0].Order != idforge.OrderGlobal {
		t.Fatalf("Keys = %+v, %v", keys, err)
	}
	// A Tinyid range would be handed out by its holder, out of order.
	if _, err := iss.ClaimRange(ctx, "tx", 10); !errors.Is(err, idforge.ErrWrongStrategy) || !strings.Contains(err.Error(), "global order") {
		t.Fatalf("ClaimRange = %v, want ErrWrongStrategy", err)
	}
	// Take claims exactly what it returns, after the call began.
	if ids, err := other.Take(ctx, "tx", 2); err != nil || ids[0] != last+1 {
		t.Fatalf("Take = %v, %v", ids, err)
	}
}

// A key's order is fixed when it is created.
func TestOrderCannotChange(t *testing.T) {
	iss, _ := newIssuer(t, true)
	ctx := context.Background()
	for _, k := range []idforge.Key{globalKey("tx"), WithDefaults(idforge.Key{Name: "order"}), {Name: "msg", Strategy: idforge.StrategySnowflake}} {
		if err := iss.CreateKey(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	node, global := idforge.OrderNode, idforge.OrderGlobal
	for name, tc := range map[string]struct {
		key   string
		order idforge.Order
		want  error
		says  string
	}{
		"node to global": {"order", global, idforge.ErrUnsafeChange, "create a new key with order global"},
		"global to node": {"tx", node, idforge.ErrUnsafeChange, "callers rely on"},
		"unknown order":  {"tx", "strict", idforge.ErrInvalidArgument, "want node or global"},
		"snowflake":      {"msg", global, idforge.ErrInvalidArgument, "segment keys only"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := iss.UpdateKey(ctx, tc.key, idforge.KeyChange{Order: &tc.order})
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("UpdateKey: %v, want %v saying %q", err, tc.want, tc.says)
			}
		})
	}
	// The same order is no change; other changes keep the order.
	got, err := iss.UpdateKey(ctx, "tx", idforge.KeyChange{Order: &global, MinStep: ptr(int64(5))})
	if err != nil || got.Order != global || got.Bounds.MinStep != 5 {
		t.Fatalf("UpdateKey = %+v, %v", got, err)
	}
	if got, err := iss.UpdateKey(ctx, "order", idforge.KeyChange{Order: &node}); err != nil || got.Order != node {
		t.Fatalf("UpdateKey = %+v, %v", got, err)
	}
	// A name is created in one order: the other is refused, whichever
	// came first, and the config file's declaration must match.
	if err := iss.CreateKey(ctx, WithDefaults(idforge.Key{Name: "tx"})); !errors.Is(err, idforge.ErrKeyExists) || !strings.Contains(err.Error(), "global order") {
		t.Fatalf("CreateKey in node order over a global key = %v", err)
	}
	if err := iss.EnsureKey(ctx, WithDefaults(idforge.Key{Name: "tx"})); !errors.Is(err, idforge.ErrKeyExists) || !strings.Contains(err.Error(), "declared in node order") {
		t.Fatalf("EnsureKey in node order over a global key = %v", err)
	}
	if err := iss.EnsureKey(ctx, globalKey("order")); !errors.Is(err, idforge.ErrKeyExists) {
		t.Fatalf("EnsureKey in global order over a node key = %v", err)
	}
	if err := iss.EnsureKey(ctx, globalKey("tx")); err != nil {
		t.Fatalf("EnsureKey as stored = %v", err)
	}
}

// A key created before orders were recorded (a row without a definition,
// as Leaf's tables hold) is in node order, and cannot be made global by
// creating it again.
func TestKeyWithoutDefinitionIsNodeOrder(t *testing.T) {
	iss, st := newIssuer(t, false)
	ctx := context.Background()
	if err := st.CreateKey(ctx, idforge.Key{Name: "old", Strategy: idforge.StrategySegment, Step: 10, MaxID: 1}); err != nil {
		t.Fatal(err)
	}
	if err := iss.CreateKey(ctx, globalKey("old")); !errors.Is(err, idforge.ErrKeyExists) {
		t.Fatalf("CreateKey = %v, want ErrKeyExists", err)
	}
	if k, err := iss.Key(ctx, "old"); err != nil || k.Order != idforge.OrderNode {
		t.Fatalf("Key = %+v, %v", k, err)
	}
	if _, err := st.Definition(ctx, KindKey, "old"); !errors.Is(err, idforge.ErrUnknownKey) {
		t.Fatalf("the refused creation left a definition: %v", err)
	}
}

// noGlobal is a store that does not implement idforge.GlobalOrderStore:
// its GlobalOrder, of another signature, hides memstore's.
type noGlobal struct{ *memstore.Store }

func (noGlobal) GlobalOrder() {}

// A store that cannot keep global order refuses the key with a 400 that
// says why; a node on such a store does not serve a global key that
// another node created.
func TestGlobalOrderNeedsTheStore(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	iss := New(noGlobal{st}, nil, Settings{Logger: quiet})
	t.Cleanup(func() { iss.Close() })
	if err := iss.CreateKey(ctx, globalKey("tx")); !errors.Is(err, idforge.ErrInvalidArgument) || !strings.Contains(err.Error(), "linearizable") {
		t.Fatalf("CreateKey = %v", err)
	}
	able := New(st, nil, Settings{Logger: quiet})
	t.Cleanup(func() { able.Close() })
	if err := able.CreateKey(ctx, globalKey("tx")); err != nil {
		t.Fatal(err)
	}
	if _, err := iss.Next(ctx, "tx"); !errors.Is(err, idforge.ErrUnavailable) || !strings.Contains(err.Error(), "cannot keep") {
		t.Fatalf("Next on a node whose store cannot keep global order = %v", err)
	}
	if err := iss.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := iss.Next(ctx, "tx"); !errors.Is(err, idforge.ErrUnavailable) {
		t.Fatalf("Next after Refresh = %v", err)
	}
}

// failingDefs is a store whose definitions cannot be read.
type failingDefs struct{ *memstore.Store }

func (failingDefs) Definition(context.Context, string, string) (idforge.Definition, error) {
	return idforge.Definition{}, errors.New("connection reset")
}

func (failingDefs) Definitions(context.Context, string) ([]idforge.Definition, error) {
	return nil, errors.New("connection reset")
}

// unmigrated is a store whose database was not migrated to keep
// definitions.
type unmigrated struct{ *memstore.Store }

func (unmigrated) Definition(context.Context, string, string) (idforge.Definition, error) {
	return idforge.Definition{}, fmt.Errorf("%w: no table idforge_definitions: run idforge migrate", idforge.ErrInvalidArgument)
}

func (unmigrated) CreateDefinition(context.Context, idforge.Definition) error {
	return fmt.Errorf("%w: no table idforge_definitions: run idforge migrate", idforge.ErrInvalidArgument)
}

// A store that keeps no definitions has every key in node order: a key in
// global order, whose order could not be recorded, is refused.
func TestGlobalOrderNeedsDefinitions(t *testing.T) {
	ctx := context.Background()
	iss := New(unmigrated{memstore.New()}, nil, Settings{Logger: quiet})
	t.Cleanup(func() { iss.Close() })
	if err := iss.CreateKey(ctx, globalKey("tx")); !errors.Is(err, idforge.ErrInvalidArgument) || !strings.Contains(err.Error(), "idforge migrate") {
		t.Fatalf("CreateKey in global order = %v", err)
	}
	if err := iss.CreateKey(ctx, WithDefaults(idforge.Key{Name: "order"})); err != nil {
		t.Fatalf("CreateKey in node order = %v", err)
	}
	if k, err := iss.Key(ctx, "order"); err != nil || k.Order != idforge.OrderNode {
		t.Fatalf("Key = %+v, %v", k, err)
	}
}

// A node that cannot read a key's definition does not know its order, so
// it does not serve the key, rather than buffer a key in global order.
func TestUnknownOrderIsNotServed(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	able := New(st, nil, Settings{Logger: quiet})
	t.Cleanup(func() { able.Close() })
	if err := able.CreateKey(ctx, globalKey("tx")); err != nil {
		t.Fatal(err)
	}
	iss := New(failingDefs{st}, nil, Settings{Logger: quiet})
	t.Cleanup(func() { iss.Close() })
	if err := iss.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := iss.Next(ctx, "tx"); !errors.Is(err, idforge.ErrUnavailable) || !strings.Contains(err.Error(), "its order") {
		t.Fatalf("Next = %v, want ErrUnavailable", err)
	}
	if _, ok := iss.lookup("tx"); ok {
		t.Fatal("the key was set up without its order")
	}
}
