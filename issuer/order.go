package issuer

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/idforge/idforge"
)

// globalOrder reports whether the store can keep a key in
// idforge.OrderGlobal: its claims are linearizable
// (idforge.GlobalOrderStore) and it keeps definitions, where the order is
// recorded. The error wraps idforge.ErrInvalidArgument and says why not.
func (i *Issuer) globalOrder(ctx context.Context) error {
	gs, ok := i.store.(idforge.GlobalOrderStore)
	switch {
	case !ok:
		return fmt.Errorf("%w: this store does not promise linearizable claims", idforge.ErrInvalidArgument)
	case i.definitions() == nil:
		return fmt.Errorf("%w: this store keeps no definitions, where a key's order is recorded", idforge.ErrInvalidArgument)
	}
	return gs.GlobalOrder(ctx)
}

// recordOrder records the order of k, a segment key about to be created,
// in its definition, before its row exists, so that every node that can
// read the row can read its order (see KindKey). def is the definition
// read before; keeps is false when the store keeps no definitions. A
// definition of another order, left by a concurrent or an earlier
// creation of the name, is an error wrapping idforge.ErrKeyExists; a
// store that cannot keep global order, one wrapping
// idforge.ErrInvalidArgument.
func (i *Issuer) recordOrder(ctx context.Context, k idforge.Key, def keyDef, keeps bool) error {
	order := cmp.Or(k.Order, idforge.OrderNode)
	if order == idforge.OrderGlobal {
		if err := i.globalOrder(ctx); err != nil {
			return fmt.Errorf("key %q: order global: %w", k.Name, err)
		}
	}
	if !keeps {
		if order == idforge.OrderGlobal {
			return fmt.Errorf("%w: key %q: order global: this store keeps no definitions, where a key's order is recorded (run `idforge migrate`)", idforge.ErrInvalidArgument, k.Name)
		}
		return nil
	}
	for range 2 {
		if def.found {
			if have := cmp.Or(def.order, idforge.OrderNode); have != order {
				return fmt.Errorf("%w: key %q exists, or is being created, in %s order", idforge.ErrKeyExists, k.Name, have)
			}
			return nil // the same order: creating the row decides
		}
		// A key created before orders were recorded has a row and no
		// definition: it is in node order, and its row answers.
		if _, err := i.store.Key(ctx, k.Name); !errors.Is(err, idforge.ErrUnknownKey) {
			return storeErr(err)
		}
		spec, _ := json.Marshal(keySpec{Order: order})
		err := i.definitions().CreateDefinition(ctx, idforge.Definition{Kind: KindKey, Name: k.Name, Spec: string(spec)})
		switch {
		case err == nil:
			return nil
		case noDefinitions(err) && order == idforge.OrderNode:
			return nil
		case !errors.Is(err, idforge.ErrKeyExists):
			return storeErr(err)
		}
		// Defined meanwhile: compare with that.
		if def, err = i.readKeyDef(ctx, k.Name); err != nil {
			return storeErr(err)
		}
	}
	return fmt.Errorf("%w: key %q is being defined by another request", idforge.ErrUnavailable, k.Name)
}

// checkOrderChange refuses to change the order of k, whose definition is
// def, to the one c asks for: a key's order is fixed when it is created.
// Errors wrap idforge.ErrUnsafeChange, or idforge.ErrInvalidArgument for
// an order that is not one, or one given for a key other than a segment
// key.
func checkOrderChange(k idforge.Key, def keyDef, c idforge.KeyChange) error {
	if c.Order == nil {
		return nil
	}
	want, err := idforge.ParseOrder(string(*c.Order))
	if err != nil {
		return fmt.Errorf("%w (key %q)", err, k.Name)
	}
	if k.Strategy != idforge.StrategySegment {
		return fmt.Errorf("%w: key %q: order applies to segment keys only, and this is a %s key", idforge.ErrInvalidArgument, k.Name, k.Strategy)
	}
	switch have := cmp.Or(def.order, idforge.OrderNode); {
	case want == have:
		return nil
	case have == idforge.OrderNode:
		return fmt.Errorf("%w: key %q is in node order: nodes may hold segments of it, which they would go on issuing below IDs issued in global order, and no node can tell that none does; "+
			"create a new key with order global, its start above this key's max_id to go on from its numbers", idforge.ErrUnsafeChange, k.Name)
	default:
		return fmt.Errorf("%w: key %q is in %s order, which its callers rely on, and node order would break it; create a new key in node order instead", idforge.ErrUnsafeChange, k.Name, have)
	}
}
