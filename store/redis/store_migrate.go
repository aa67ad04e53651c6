package redis

import (
	"context"
	"fmt"

	"github.com/idforge/idforge"
)

// Migrate runs the database's Migrate, if it has one; Redis needs none.
// It returns an error wrapping idforge.ErrClosed after Close.
func (s *Store) Migrate(ctx context.Context) error {
	if err := s.checkOpen(); err != nil {
		return err
	}
	m, ok := s.db.(idforge.Migrator)
	if !ok {
		return nil
	}
	if err := m.Migrate(ctx); err != nil {
		return fmt.Errorf("redisseg: %w", err)
	}
	return nil
}

// MigrateTables is Migrate that also returns the tables the database's
// store created, when it can say (the SQL stores); otherwise it migrates
// and returns nil.
func (s *Store) MigrateTables(ctx context.Context) ([]string, error) {
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	r, ok := s.db.(interface {
		MigrateTables(context.Context) ([]string, error)
	})
	if !ok {
		return nil, s.Migrate(ctx)
	}
	created, err := r.MigrateTables(ctx)
	if err != nil {
		return nil, fmt.Errorf("redisseg: %w", err)
	}
	return created, nil
}
