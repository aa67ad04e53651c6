package sqlstore

import (
	"context"
	"fmt"
)

// Migrate creates the tables that do not exist (Dialect.CreateTables) and
// then checks them as Open does. It is bounded by ctx only, not by
// Settings.Timeout: DDL may legitimately wait for locks.
func (s *Store) Migrate(ctx context.Context) error {
	if err := s.checkOpen(); err != nil {
		return err
	}
	if err := s.d.CreateTables(ctx, s.db); err != nil {
		return s.wrap(ctx, err, fmt.Sprintf("migrate %s", s.name))
	}
	if _, err := s.load(ctx); err != nil {
		return err
	}
	s.log.Info(s.d.Name+": schema is up to date", "db", s.name)
	return nil
}
