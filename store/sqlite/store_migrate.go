package sqlite

import (
	"context"
	"fmt"
)

// Migrate implements idforge.Migrator. Open already creates the tables
// when they are absent, so Migrate only runs the same idempotent CREATE
// TABLE IF NOT EXISTS statements again: existing tables, a Leaf
// leaf_alloc included, are left as they are with their rows. It returns
// an error wrapping idforge.ErrClosed after Close.
func (s *Store) Migrate(ctx context.Context) error {
	if err := s.checkOpen(); err != nil {
		return err
	}
	if _, err := s.w.ExecContext(ctx, schema); err != nil {
		return s.wrap(ctx, err, fmt.Sprintf("migrate %s", s.path))
	}
	return nil
}
