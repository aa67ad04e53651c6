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
