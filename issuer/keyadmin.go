package issuer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/idforge/idforge"
)

// KindKey is the idforge.Definition kind that holds what a key's row in
// Leaf's leaf_alloc table has no column for: its order and its own
// adaptive-step bounds (keySpec, as Spec) and its retirement (Retired).
// Name is the key's.
//
// A segment key's order is written once, when the key is created and
// before its row, and never changed: every node that can read the row can
// read the order, and a node that cannot read it does not serve the key.
// A key without a definition, or whose definition names no order, is in
// idforge.OrderNode.
const KindKey = "key"

// KeyBounds are a segment key's own adaptive-step bounds, which take the
// place of the node's (segment.Settings MinStep and MaxStep, the
// [segment] min_step and max_step of the configuration) on every node;
// 0 falls back to the node's. They only size claims: no bound can make a
// value repeat.
type KeyBounds struct {
	MinStep int64 `json:"min_step,omitempty"`
	MaxStep int64 `json:"max_step,omitempty"`
}

// keySpec is the Spec of a key's definition.
type keySpec struct {
	KeyBounds
	Order idforge.Order `json:"order,omitempty"`
}

// keyDef is what the store's definitions say of a key.
type keyDef struct {
	bounds KeyBounds
	// order is as written, "" for none (idforge.OrderNode); a Spec that
	// does not parse gives unreadableOrder, which no node serves.
	order   idforge.Order
	retired bool
	found   bool
}

// unreadableOrder stands for the order of a key whose definition's Spec
// does not parse: unknown, so the key is not served.
const unreadableOrder idforge.Order = "(unreadable)"

// definitions returns the store as an idforge.DefinitionStore, or nil.
func (i *Issuer) definitions() idforge.DefinitionStore {
	ds, _ := i.store.(idforge.DefinitionStore)
	return ds
}

// readKeyDef reads key's definition; none is the zero keyDef.
func (i *Issuer) readKeyDef(ctx context.Context, key string) (keyDef, error) {
	ds := i.definitions()
	if ds == nil {
		return keyDef{}, nil
	}
	d, err := ds.Definition(ctx, KindKey, key)
	if errors.Is(err, idforge.ErrUnknownKey) {
		return keyDef{}, nil
	}
	if err != nil {
		return keyDef{}, err
	}
	return parseKeyDef(d), nil
}

// keyDefs reads the definitions of every key that has one, by name. A
// store that cannot answer (a database not migrated to keep definitions,
// or down) leaves them out, with a warning: keys are listed as before,
// and the node that retired a key refuses it anyway. known is false when
// the store could have definitions it did not give (it is down, not
// unmigrated): then no key's order is known.
func (i *Issuer) keyDefs(ctx context.Context) (defs map[string]keyDef, known bool) {
	defs = map[string]keyDef{}
	ds := i.definitions()
	if ds == nil {
		return defs, true
	}
	all, err := ds.Definitions(ctx, KindKey)
	if err != nil {
		i.defsFailed(err, "")
		return defs, noDefinitions(err)
	}
	for _, d := range all {
		defs[d.Name] = parseKeyDef(d)
	}
	return defs, true
}

// noDefinitions reports whether err, a failed read of definitions, says
// that the store keeps none (a database not migrated to keep them, an
// error wrapping idforge.ErrInvalidArgument): then no key has an order
// other than idforge.OrderNode, as none could have been recorded.
func noDefinitions(err error) bool { return errors.Is(err, idforge.ErrInvalidArgument) }

// keyDefToServe is readKeyDef for the path that sets a key up to serve
// it: a store that keeps no definitions has none, but one that fails to
// answer is an error, since the key's order is not known without it.
func (i *Issuer) keyDefToServe(ctx context.Context, key string) (keyDef, error) {
	def, err := i.readKeyDef(ctx, key)
	if err != nil {
		i.defsFailed(err, key)
		if !noDefinitions(err) {
			return keyDef{}, fmt.Errorf("key %q: reading its definition (its order): %w", key, storeErr(err))
		}
	}
	return def, nil
}

// keyDefOrNone is readKeyDef for the paths that serve keys: a definition
// the store cannot give is none, with a warning, as for keyDefs.
func (i *Issuer) keyDefOrNone(ctx context.Context, key string) keyDef {
	def, err := i.readKeyDef(ctx, key)
	if err != nil {
		i.defsFailed(err, key)
	}
	return def
}

// defsFailed logs a failed read of keys' definitions: a warning, or only
// a debug line for a database not migrated to keep definitions (an error
// wrapping idforge.ErrInvalidArgument), which holds none.
func (i *Issuer) defsFailed(err error, key string) {
	level := slog.LevelWarn
	if noDefinitions(err) {
		level = slog.LevelDebug
	}
	i.set.Logger.Log(context.Background(), level, "reading keys' definitions (bounds, retirements) failed; going without them", "key", key, "err", err)
}

// parseKeyDef reads a stored definition of kind KindKey. A Spec this node
// cannot read (written by hand) leaves the node's bounds, and an order
// no node serves; the retirement is honoured whatever Spec says.
func parseKeyDef(d idforge.Definition) keyDef {
	def := keyDef{retired: d.Retired, found: true}
	var spec keySpec
	if err := json.Unmarshal([]byte(d.Spec), &spec); err != nil {
		def.order = unreadableOrder
		return def
	}
	def.bounds, def.order = spec.KeyBounds, spec.Order
	return def
}

// errRetired is what a retired key answers.
func errRetired(key string) error {
	return fmt.Errorf("%w: key %q was retired: it issues nothing more, and its name is never used again", idforge.ErrRetired, key)
}

// claimCheckTimeout bounds checkClaim's read of a key's definition. A
// store that cannot answer that fast (its database slow or down, as
// behind a Redis store that still claims) lets the claim go ahead instead
// of delaying it: a retirement made elsewhere then takes effect at this
// node's next Refresh.
const claimCheckTimeout = 250 * time.Millisecond

// checkClaim is every segment allocator's segment.Settings.Check: a key
// retired on any node claims no more. A definition the store cannot give
// lets the claim go ahead (see keyDefOrNone): a store that cannot read
// its definitions could not have recorded a retirement either, unless it
// is down, and then the claim fails too.
func (i *Issuer) checkClaim(ctx context.Context, key string) error {
	ctx, cancel := context.WithTimeout(ctx, claimCheckTimeout)
	defer cancel()
	if i.keyDefOrNone(ctx, key).retired {
		return errRetired(key)
	}
	return nil
}

// applyKeyDef brings e, the entry of key, in line with its definition:
// a retired key's entry answers errRetired from now on (its allocator
// retired, dropping what it buffered), a live key's allocator takes its
// bounds.
func applyKeyDef(key string, e *entry, def keyDef) {
	switch {
	case e.retiredErr() != nil:
	case def.retired:
		if e.alloc != nil {
			e.alloc.Retire(errRetired(key))
		}
		e.retire(errRetired(key))
	case e.alloc != nil:
		e.alloc.SetBounds(def.bounds.MinStep, def.bounds.MaxStep)
	}
}

// UpdateKey changes a key's step, description and own adaptive-step
// bounds (idforge.KeyChange), and returns it as changed. The key's max_id is never
// touched, so no change can make it issue a value again. This node
// applies the change at once; other nodes from their next claim (the
// stored step) or their next Refresh (the bounds).
//
// Errors: idforge.ErrUnknownKey for no such key; ErrRetired for a retired
// one; ErrInvalidArgument for an empty change, a step out of [1,
// idforge.MaxStep], a step or bounds for a key other than a segment key,
// a bound below 0 or a minimum above the maximum, a description Key.Validate
// refuses, or a store that cannot keep the change.
func (i *Issuer) UpdateKey(ctx context.Context, name string, c idforge.KeyChange) (KeyState, error) {
	if err := idforge.ValidateKeyName(name); err != nil {
		return KeyState{}, err
	}
	if c == (idforge.KeyChange{}) {
		return KeyState{}, fmt.Errorf("%w: key %q: nothing to change (give step, description, min_step, max_step or order)", idforge.ErrInvalidArgument, name)
	}
	k, err := i.store.Key(ctx, name)
	if err != nil {
		return KeyState{}, storeErr(err)
	}
	def, err := i.readKeyDef(ctx, name)
	if err != nil {
		return KeyState{}, storeErr(err)
	}
	if def.retired {
		return KeyState{}, errRetired(name)
	}
	if err := checkOrderChange(k, def, c); err != nil {
		return KeyState{}, err
	}
	step, desc, bounds := k.Step, k.Description, def.bounds
	if c.Step != nil {
		step = *c.Step
	}
	if c.Description != nil {
		desc = *c.Description
	}
	if c.MinStep != nil {
		bounds.MinStep = *c.MinStep
	}
	if c.MaxStep != nil {
		bounds.MaxStep = *c.MaxStep
	}
	if err := k.ValidateUpdate(step, desc); err != nil {
		return KeyState{}, err
	}
	if err := checkBounds(k, bounds); err != nil {
		return KeyState{}, err
	}
	if step != k.Step || desc != k.Description {
		u, ok := i.store.(idforge.KeyUpdater)
		if !ok {
			return KeyState{}, fmt.Errorf("%w: key %q: this store cannot change keys", idforge.ErrInvalidArgument, name)
		}
		if err := u.UpdateKey(ctx, name, step, desc); err != nil {
			return KeyState{}, storeErr(err)
		}
	}
	if bounds != def.bounds {
		if err := i.writeKeyDef(ctx, name, def, bounds); err != nil {
			return KeyState{}, err
		}
	}
	if e, ok := i.lookup(name); ok && e.alloc != nil {
		e.alloc.SetStoredStep(step)
		e.alloc.SetBounds(bounds.MinStep, bounds.MaxStep)
	}
	return i.Key(ctx, name)
}

// checkBounds refuses bounds a key cannot take: bounds for a key other
// than a segment key, a negative one, a minimum above the maximum.
// Errors wrap idforge.ErrInvalidArgument.
func checkBounds(k idforge.Key, b KeyBounds) error {
	switch {
	case b == KeyBounds{}:
		return nil
	case k.Strategy != idforge.StrategySegment:
		return fmt.Errorf("%w: key %q: min_step and max_step apply to segment keys only, and this is a %s key", idforge.ErrInvalidArgument, k.Name, k.Strategy)
	case b.MinStep < 0 || b.MaxStep < 0:
		return fmt.Errorf("%w: key %q: min_step %d / max_step %d: want 0 (the node's) or more", idforge.ErrInvalidArgument, k.Name, b.MinStep, b.MaxStep)
	case b.MaxStep > 0 && b.MinStep > b.MaxStep:
		return fmt.Errorf("%w: key %q: min_step %d is above max_step %d", idforge.ErrInvalidArgument, k.Name, b.MinStep, b.MaxStep)
	}
	return nil
}

// writeKeyDef stores key's bounds beside the order of def, its
// definition, creating it when there was none.
func (i *Issuer) writeKeyDef(ctx context.Context, key string, def keyDef, b KeyBounds) error {
	ds := i.definitions()
	if ds == nil {
		return fmt.Errorf("%w: key %q: this store keeps no definitions, so a key cannot have bounds of its own; set the node's [segment] min_step and max_step", idforge.ErrInvalidArgument, key)
	}
	spec, err := json.Marshal(keySpec{KeyBounds: b, Order: def.order})
	if err != nil {
		return err
	}
	d := idforge.Definition{Kind: KindKey, Name: key, Spec: string(spec)}
	if def.found {
		err = ds.UpdateDefinition(ctx, d)
	} else {
		err = ds.CreateDefinition(ctx, d)
	}
	if errors.Is(err, idforge.ErrRetired) {
		return errRetired(key)
	}
	return storeErr(err)
}

// RetireKey retires a key: it issues nothing more, on this node at once
// (its buffered segments dropped, not handed back) and on every other
// node sharing the store before its next claim, or within its refresh
// interval (Refresh; the server's refresh_keys) for what it has
// buffered. The key stays in the store with its max_id, which never goes
// down, so its name can never be created again (CreateKey answers
// ErrKeyExists, saying that it is retired) and no value it issued can
// repeat. Retiring a retired key is not an error.
//
// Errors: idforge.ErrUnknownKey for no such key (sources of the
// configuration included: they are not the store's); ErrInvalidArgument
// when the store keeps no definitions.
func (i *Issuer) RetireKey(ctx context.Context, name string) error {
	if err := idforge.ValidateKeyName(name); err != nil {
		return err
	}
	k, err := i.store.Key(ctx, name)
	if err != nil {
		return storeErr(err)
	}
	ds := i.definitions()
	if ds == nil {
		return fmt.Errorf("%w: key %q: this store keeps no definitions, so it cannot record a retirement", idforge.ErrInvalidArgument, name)
	}
	err = ds.CreateDefinition(ctx, idforge.Definition{Kind: KindKey, Name: name, Spec: "{}"})
	if err != nil && !errors.Is(err, idforge.ErrKeyExists) {
		return storeErr(err)
	}
	if err := ds.RetireDefinition(ctx, KindKey, name); err != nil {
		return storeErr(err)
	}
	// Under mu, so that a request resolving the key for the first time
	// (with a definition read before the retirement) finds this entry
	// rather than storing a live one.
	i.mu.Lock()
	e, ok := i.lookup(name)
	if !ok {
		e = &entry{strategy: k.Strategy}
		i.keys.store(name, e)
	}
	applyKeyDef(name, e, keyDef{retired: true})
	i.mu.Unlock()
	i.set.Logger.Info("key retired", "key", name)
	return nil
}

func retiredNameErr(name string) error {
	return fmt.Errorf("%w: %q is the name of a retired key, which is never used again so that no ID it issued can repeat; choose a new name", idforge.ErrKeyExists, name)
}
