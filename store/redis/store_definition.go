package redis

import (
	"context"
	"fmt"

	"github.com/idforge/idforge"
)

// CreateDefinition stores the definition in the database, when the
// database keeps definitions (implements idforge.DefinitionStore); Redis
// holds none. Errors are the database's (ErrKeyExists, ErrInvalidKey, …);
// an error wrapping idforge.ErrInvalidArgument when the database keeps no
// definitions; idforge.ErrClosed after Close.
func (s *Store) CreateDefinition(ctx context.Context, d idforge.Definition) error {
	ds, err := s.definitions()
	if err != nil {
		return err
	}
	return ds.CreateDefinition(ctx, d)
}

// UpdateDefinition changes the database's definition. Its errors are
// CreateDefinition's, with ErrUnknownKey and ErrRetired as the database
// reports them.
func (s *Store) UpdateDefinition(ctx context.Context, d idforge.Definition) error {
	ds, err := s.definitions()
	if err != nil {
		return err
	}
	return ds.UpdateDefinition(ctx, d)
}

// RetireDefinition retires the database's definition. Its errors are
// CreateDefinition's, with ErrUnknownKey for a definition the database
// lacks.
func (s *Store) RetireDefinition(ctx context.Context, kind, name string) error {
	ds, err := s.definitions()
	if err != nil {
		return err
	}
	return ds.RetireDefinition(ctx, kind, name)
}

// Definition returns the database's definition. Its errors are
// CreateDefinition's, with ErrUnknownKey for a definition the database
// lacks.
func (s *Store) Definition(ctx context.Context, kind, name string) (idforge.Definition, error) {
	ds, err := s.definitions()
	if err != nil {
		return idforge.Definition{}, err
	}
	return ds.Definition(ctx, kind, name)
}

// Definitions returns the database's definitions of kind, sorted by
// name. Its errors are CreateDefinition's.
func (s *Store) Definitions(ctx context.Context, kind string) ([]idforge.Definition, error) {
	ds, err := s.definitions()
	if err != nil {
		return nil, err
	}
	return ds.Definitions(ctx, kind)
}

// definitions returns the database as an idforge.DefinitionStore.
func (s *Store) definitions() (idforge.DefinitionStore, error) {
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	ds, ok := s.db.(idforge.DefinitionStore)
	if !ok {
		return nil, fmt.Errorf("%w: redisseg: the database store (%T) keeps no definitions", idforge.ErrInvalidArgument, s.db)
	}
	return ds, nil
}
