package idforge

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Definition is something an operator defines once, through the API or
// the config file, that every node sharing the store then serves without
// a restart: a sequence source, a per-period counter, a refusing plugin's
// settings, the fingerprint recorded for a definition at its first use.
//
// The store keeps definitions as opaque text; the package that owns a
// kind parses and validates Spec. One table of definitions, not one per
// kind, so that a new kind needs no schema change in any backend.
type Definition struct {
	// Kind names what is defined, e.g. "source", "counter", "quota",
	// "fingerprint"; see the Kind constants of the owning packages. It
	// follows the rules of key names.
	Kind string
	// Name identifies the definition within its kind; it follows the
	// rules of key names, except that it may hold one '/' (a fingerprint
	// is recorded as "<kind>/<name>").
	Name string
	// Spec is the definition itself, usually a JSON document, owned by
	// the kind's package.
	Spec string
	// Description is free text for operators.
	Description string
	// Retired marks a definition taken out of service. A retired
	// definition is kept, so that its name is never defined again with a
	// meaning that could repeat values it once issued.
	Retired bool
	// Updated is when the definition last changed, as the store reports it.
	Updated time.Time
}

// Where a definition comes from, as every list of definitions (sources,
// counters, quotas) marks it.
const (
	OriginFile = "file" // the node's configuration file; not kept in the store
	OriginAPI  = "api"  // defined through the API and kept in the store
)

// MaxSpecLen is the longest Spec a store keeps.
const MaxSpecLen = 16 << 10

// Validate checks what a store can check of a definition: kind and name,
// a non-empty Spec of at most MaxSpecLen bytes of UTF-8 text, and the
// description's length. Whether Spec makes sense is the kind's business.
// Errors wrap ErrInvalidKey or ErrInvalidArgument.
func (d Definition) Validate() error {
	if err := ValidateKeyName(d.Kind); err != nil {
		return fmt.Errorf("%w (definition kind)", err)
	}
	name, sub, two := strings.Cut(d.Name, "/")
	if err := ValidateKeyName(name); err != nil {
		return err
	}
	if two {
		if err := ValidateKeyName(sub); err != nil {
			return err
		}
	}
	switch {
	case d.Spec == "":
		return fmt.Errorf("%w: %s %q: empty definition", ErrInvalidArgument, d.Kind, d.Name)
	case len(d.Spec) > MaxSpecLen:
		return fmt.Errorf("%w: %s %q: definition is %d bytes, at most %d allowed", ErrInvalidArgument, d.Kind, d.Name, len(d.Spec), MaxSpecLen)
	case len(d.Description) > MaxDescriptionLen:
		return fmt.Errorf("%w: %s %q: description is %d bytes, at most %d allowed", ErrInvalidArgument, d.Kind, d.Name, len(d.Description), MaxDescriptionLen)
	case !utf8.ValidString(d.Spec) || !utf8.ValidString(d.Description),
		strings.ContainsRune(d.Spec+d.Description, 0):
		return fmt.Errorf("%w: %s %q: not valid UTF-8 text", ErrInvalidArgument, d.Kind, d.Name)
	}
	return nil
}

// DefinitionStore is implemented by stores that keep operators'
// definitions, so that a definition made through the API on one node
// reaches every node sharing the store.
type DefinitionStore interface {
	// CreateDefinition stores d (Retired and Updated are ignored). A
	// (Kind, Name) already taken, by a live or a retired definition, is
	// an error wrapping ErrKeyExists.
	CreateDefinition(ctx context.Context, d Definition) error
	// UpdateDefinition replaces the Spec and Description of a live
	// definition. It returns an error wrapping ErrUnknownKey when there is
	// none, and ErrRetired when it is retired. Whether a change is safe is
	// the kind's business, decided before calling.
	UpdateDefinition(ctx context.Context, d Definition) error
	// RetireDefinition marks a definition retired; retiring a retired
	// one is not an error. It returns an error wrapping ErrUnknownKey
	// when there is none.
	RetireDefinition(ctx context.Context, kind, name string) error
	// Definition returns one definition, retired or not, or an error
	// wrapping ErrUnknownKey.
	Definition(ctx context.Context, kind, name string) (Definition, error)
	// Definitions returns every definition of kind, retired ones
	// included, sorted by name.
	Definitions(ctx context.Context, kind string) ([]Definition, error)
}
