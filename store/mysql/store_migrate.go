package mysql

import (
	"context"
	"database/sql"
)

// Migrate implements idforge.Migrator: it creates leaf_alloc,
// idforge_keys and idforge_serials when they do not exist (CREATE TABLE
// IF NOT EXISTS), and then checks them as Open does. An existing table,
// Leaf's leaf_alloc included, is left as it is with its rows, its
// collation and its column named desc rather than description if it has
// one; a database migrated by an older idforge gains idforge_serials. It
// is idempotent and safe to run while nodes serve, from several processes
// at once. It needs the CREATE privilege, and is bounded by ctx only (not
// Config.Timeout).
//
// It returns an error wrapping idforge.ErrClosed after Close, and an
// error naming the columns when an existing table is not the one idforge
// expects.
func (s *Store) Migrate(ctx context.Context) error {
	return s.core.Migrate(ctx)
}

// createTables is sqlstore.Dialect.CreateTables: CREATE TABLE IF NOT
// EXISTS, which leaves an existing table as it is.
func createTables(ctx context.Context, db *sql.DB) error {
	for _, ddl := range []string{createLeafAllocSQL, createKeysSQL, createSerialsSQL} {
		if _, err := db.ExecContext(ctx, ddl); err != nil {
			return err
		}
	}
	return nil
}
