package redis

import (
	"context"
	"fmt"

	"github.com/idforge/idforge"
)

// CreateSerial stores the definition in the database, when the database
// keeps serials (implements idforge.SerialStore); Redis holds none.
// Errors are the database's (ErrKeyExists, ErrInvalidKey, …); an error
// wrapping idforge.ErrInvalidArgument when the database keeps no serials;
// idforge.ErrClosed after Close.
func (s *Store) CreateSerial(ctx context.Context, def idforge.Serial) error {
	ss, err := s.serials()
	if err != nil {
		return err
	}
	return ss.CreateSerial(ctx, def)
}

// Serial returns the database's definition of that name. Its errors are
// CreateSerial's, with ErrUnknownKey for a name the database lacks.
func (s *Store) Serial(ctx context.Context, name string) (idforge.Serial, error) {
	ss, err := s.serials()
	if err != nil {
		return idforge.Serial{}, err
	}
	return ss.Serial(ctx, name)
}

// Serials returns the database's definitions, sorted by name. Its errors
// are CreateSerial's.
func (s *Store) Serials(ctx context.Context) ([]idforge.Serial, error) {
	ss, err := s.serials()
	if err != nil {
		return nil, err
	}
	return ss.Serials(ctx)
}

// serials returns the database as an idforge.SerialStore.
func (s *Store) serials() (idforge.SerialStore, error) {
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	ss, ok := s.db.(idforge.SerialStore)
	if !ok {
		return nil, fmt.Errorf("%w: redisseg: the database store (%T) keeps no serial definitions", idforge.ErrInvalidArgument, s.db)
	}
	return ss, nil
}
