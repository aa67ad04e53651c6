package redis

import (
	"context"
	"fmt"

	"github.com/idforge/idforge"
)

// Serial definitions and operators' definitions live in the database
// store, when it keeps them (implements idforge.SerialStore,
// idforge.DefinitionStore); Redis holds none. Each method below is the
// database's, with its errors (ErrKeyExists, ErrUnknownKey, ErrRetired,
// ErrInvalidKey, …), plus an error wrapping idforge.ErrInvalidArgument
// when the database keeps no such definitions and idforge.ErrClosed
// after Close.

// CreateSerial implements idforge.SerialStore.
func (s *Store) CreateSerial(ctx context.Context, def idforge.Serial) error {
	return do(s, "serial definitions", func(db idforge.SerialStore) error { return db.CreateSerial(ctx, def) })
}

// Serial implements idforge.SerialStore.
func (s *Store) Serial(ctx context.Context, name string) (idforge.Serial, error) {
	return get(s, "serial definitions", func(db idforge.SerialStore) (idforge.Serial, error) { return db.Serial(ctx, name) })
}

// Serials implements idforge.SerialStore.
func (s *Store) Serials(ctx context.Context) ([]idforge.Serial, error) {
	return get(s, "serial definitions", func(db idforge.SerialStore) ([]idforge.Serial, error) { return db.Serials(ctx) })
}

// CreateDefinition implements idforge.DefinitionStore.
func (s *Store) CreateDefinition(ctx context.Context, d idforge.Definition) error {
	return do(s, "definitions", func(db idforge.DefinitionStore) error { return db.CreateDefinition(ctx, d) })
}

// UpdateDefinition implements idforge.DefinitionStore.
func (s *Store) UpdateDefinition(ctx context.Context, d idforge.Definition) error {
	return do(s, "definitions", func(db idforge.DefinitionStore) error { return db.UpdateDefinition(ctx, d) })
}

// RetireDefinition implements idforge.DefinitionStore.
func (s *Store) RetireDefinition(ctx context.Context, kind, name string) error {
	return do(s, "definitions", func(db idforge.DefinitionStore) error { return db.RetireDefinition(ctx, kind, name) })
}

// Definition implements idforge.DefinitionStore.
func (s *Store) Definition(ctx context.Context, kind, name string) (idforge.Definition, error) {
	return get(s, "definitions", func(db idforge.DefinitionStore) (idforge.Definition, error) { return db.Definition(ctx, kind, name) })
}

// Definitions implements idforge.DefinitionStore.
func (s *Store) Definitions(ctx context.Context, kind string) ([]idforge.Definition, error) {
	return get(s, "definitions", func(db idforge.DefinitionStore) ([]idforge.Definition, error) { return db.Definitions(ctx, kind) })
}

// get calls the database as a DB (idforge.SerialStore or
// idforge.DefinitionStore) once the Store is known open and the database
// known to keep what.
func get[DB, T any](s *Store, what string, call func(DB) (T, error)) (T, error) {
	var zero T
	if err := s.checkOpen(); err != nil {
		return zero, err
	}
	db, ok := s.db.(DB)
	if !ok {
		return zero, fmt.Errorf("%w: redisseg: the database store (%T) keeps no %s", idforge.ErrInvalidArgument, s.db, what)
	}
	return call(db)
}

// do is get for a call that returns only an error.
func do[DB any](s *Store, what string, call func(DB) error) error {
	_, err := get(s, what, func(db DB) (struct{}, error) { return struct{}{}, call(db) })
	return err
}
