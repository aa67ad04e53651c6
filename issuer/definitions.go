package issuer

import (
	"context"
	"errors"
	"fmt"

	"github.com/idforge/idforge"
)

// Definitions serves what operators define through the API rather than
// the configuration: sequence sources and per-period counters kept in
// the store (idforge.DefinitionStore), so that every node sharing it
// serves them without a restart. node.Open builds the one the idforge
// command uses; see package node.
type Definitions interface {
	// Source returns the generator of a source defined in the store,
	// opening it on the first call; an error wrapping
	// idforge.ErrUnknownKey when there is none. A retired source's
	// generator answers idforge.ErrRetired.
	Source(ctx context.Context, name string) (idforge.Generator, error)
	// Counter is Source for per-period counters.
	Counter(ctx context.Context, name string) (idforge.PeriodCounter, error)
	// Define checks a definition (Kind "source" or "counter", Spec its
	// JSON) and stores it: the backend is reached, the composition is
	// sound, the name is free. Errors wrap idforge.ErrInvalidArgument,
	// ErrInvalidKey or ErrKeyExists and change nothing.
	Define(ctx context.Context, d idforge.Definition) error
	// Retire retires a definition made through the API: every node stops
	// issuing from it. A definition from the configuration file cannot
	// be retired (ErrInvalidArgument).
	Retire(ctx context.Context, kind, name string) error
	// Defined returns one definition, from the file or the store.
	Defined(ctx context.Context, kind, name string) (Defined, error)
	// List returns the kind's definitions, the file's and the store's,
	// sorted by name.
	List(ctx context.Context, kind string) ([]Defined, error)
	// Opened returns the live sources defined through the API that this
	// node has open, by name: what each draws from, for Sources. A node
	// opens such a source when it is defined there, and when its
	// re-check of the store finds one another node defined, as it opens
	// the configuration's at start.
	Opened() map[string]idforge.Generator
}

// The kinds of definition Definitions serves.
const (
	KindSource  = "source"
	KindCounter = "counter"
)

// Defined is a definition as listed: where it comes from, and the
// definition itself (for the file's, Spec is the same JSON as the API
// takes, and Updated is zero).
type Defined struct {
	idforge.Definition
	// Origin is idforge.OriginFile or idforge.OriginAPI.
	Origin string
}

// errNoDefinitions answers definition calls on an issuer without
// Definitions (a program that embeds idforge without a node).
var errNoDefinitions = fmt.Errorf("%w: this node serves no definitions made through the API; declare sources and counters in the configuration", idforge.ErrInvalidArgument)

// Define stores a source or counter definition (see Definitions.Define).
func (i *Issuer) Define(ctx context.Context, d idforge.Definition) error {
	if i.set.Definitions == nil {
		return errNoDefinitions
	}
	return i.set.Definitions.Define(ctx, d)
}

// Retire retires a source or counter defined through the API.
func (i *Issuer) Retire(ctx context.Context, kind, name string) error {
	if i.set.Definitions == nil {
		return errNoDefinitions
	}
	return i.set.Definitions.Retire(ctx, kind, name)
}

// Defined returns one source or counter definition.
func (i *Issuer) Defined(ctx context.Context, kind, name string) (Defined, error) {
	if i.set.Definitions == nil {
		return Defined{}, errNoDefinitions
	}
	return i.set.Definitions.Defined(ctx, kind, name)
}

// ListDefined lists the kind's definitions, the file's and the store's.
func (i *Issuer) ListDefined(ctx context.Context, kind string) ([]Defined, error) {
	if i.set.Definitions == nil {
		return nil, errNoDefinitions
	}
	return i.set.Definitions.List(ctx, kind)
}

// definedSource returns the entry of a source defined through the API,
// or ErrUnknownKey (as the store's Key answered: unknownErr).
func (i *Issuer) definedSource(ctx context.Context, key string, unknownErr error) (*entry, error) {
	if i.set.Definitions == nil {
		return nil, unknownErr
	}
	src, err := i.set.Definitions.Source(ctx, key)
	if errors.Is(err, idforge.ErrUnknownKey) {
		return nil, unknownErr
	}
	if err != nil {
		return nil, err
	}
	return i.withLimit(key, &entry{strategy: idforge.StrategySource, gen: BatchOf(src)}), nil
}

// definedCounter returns a counter defined through the API, or nil when
// there is none.
func (i *Issuer) definedCounter(ctx context.Context, name string) (idforge.PeriodCounter, error) {
	if i.set.Definitions == nil {
		return nil, nil
	}
	c, err := i.set.Definitions.Counter(ctx, name)
	if errors.Is(err, idforge.ErrUnknownKey) {
		return nil, nil
	}
	return c, err
}
