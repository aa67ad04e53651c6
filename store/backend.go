package store

import (
	"context"
	"fmt"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/store/internal/claim"
)

// Backend is what every persistent store idforge ships implements,
// beyond the idforge.Store a node needs: the hand-back of unused ranges,
// schema creation for `idforge migrate`, and the serial and operator
// definitions that reach every node sharing the store. Each backend
// asserts it once, so that a capability added here is a compile error in
// every backend that lacks it.
type Backend interface {
	idforge.Store
	idforge.SegmentReturner
	idforge.Migrator
	idforge.SerialStore
	idforge.DefinitionStore
	idforge.KeyUpdater
}

// KeyToUpdate is the first half of every backend's UpdateKey
// (idforge.KeyUpdater): it reads the key from ks and checks that step and
// description may be set on it (idforge.Key.ValidateUpdate), so that
// every backend refuses the same changes with the same errors.
func KeyToUpdate(ctx context.Context, ks idforge.KeyStore, name string, step int64, description string) (idforge.Key, error) {
	k, err := ks.Key(ctx, name)
	if err != nil {
		return k, err
	}
	return k, k.ValidateUpdate(step, description)
}

// WhyUnchanged explains an update (live set) or a retirement of a
// definition that changed no stored record, from the definition read
// back (d, or the error reading it): the read's error (ErrUnknownKey when
// there is none), idforge.ErrRetired when an update found it retired, or
// nil (a retirement of a retired definition, or an update that left it
// as it was).
func WhyUnchanged(d idforge.Definition, err error, live bool) error {
	switch {
	case err != nil:
		return err
	case live && d.Retired:
		return fmt.Errorf("%w: %s", idforge.ErrRetired, claim.DefinitionName(d.Kind, d.Name))
	}
	return nil
}
