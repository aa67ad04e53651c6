package postgres

import (
	"context"

	"github.com/idforge/idforge"
)

// CreateSerial implements idforge.SerialStore: it adds an idforge_serials
// row. Serial names are a namespace of their own, compared byte for byte
// in the table Migrate creates: a key of the same name does not take one.
//
// Errors: those of idforge.Serial.Validate; ErrKeyExists when a serial of
// that name exists (the table's primary key decides, also between
// creators in several processes); an error wrapping ErrInvalidArgument
// that says to run `idforge migrate` when the database has no
// idforge_serials table; ErrClosed after Close.
func (s *Store) CreateSerial(ctx context.Context, def idforge.Serial) error {
	return s.core.CreateSerial(ctx, def)
}

// Serial implements idforge.SerialStore. It returns an error wrapping
// idforge.ErrUnknownKey when there is no serial of that name, one wrapping
// ErrInvalidArgument that says to run `idforge migrate` when the database
// has no idforge_serials table, and ErrClosed after Close.
func (s *Store) Serial(ctx context.Context, name string) (idforge.Serial, error) {
	return s.core.Serial(ctx, name)
}

// Serials implements idforge.SerialStore: every serial definition, sorted
// by name in byte order. Its errors are Serial's, but for ErrUnknownKey.
func (s *Store) Serials(ctx context.Context) ([]idforge.Serial, error) {
	return s.core.Serials(ctx)
}
