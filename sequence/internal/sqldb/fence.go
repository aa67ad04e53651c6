package sqldb

import (
	"context"
	"fmt"

	"github.com/idforge/idforge/internal/sqlfence"
)

// Fence returns the failover fence of db's database (internal/sqlfence):
// nil for SQLite, which has no replica to fail over to, and nil when the
// database has no table idforge_fence and create is false (the schema
// belongs to administrators and was not migrated: the source is then not
// fenced). With create it creates the table, recording the server it runs
// on, when it is missing.
func (db *DB) Fence(ctx context.Context, create bool) (*sqlfence.Fence, error) {
	flavor := sqlfence.MySQL
	switch db.Dialect {
	case SQLite:
		return nil, nil
	case Postgres:
		flavor = sqlfence.Postgres
	}
	f, err := sqlfence.New(ctx, db, flavor)
	if err != nil {
		return nil, err
	}
	if create {
		if err := f.Create(ctx, db.DB); err != nil {
			return nil, err
		}
		return f, nil
	}
	ok, err := f.Exists(ctx, db)
	if err != nil || !ok {
		return nil, err
	}
	return f, nil
}

// HasTable tells whether db's database has the table.
func (db *DB) HasTable(ctx context.Context, table string) (bool, error) {
	query := `SELECT EXISTS (SELECT 1 FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?)`
	switch db.Dialect {
	case Postgres:
		query = `SELECT to_regclass($1) IS NOT NULL`
	case SQLite:
		query = `SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?)`
	}
	var ok bool
	err := db.QueryRowContext(ctx, query, table).Scan(&ok)
	if err != nil {
		return false, fmt.Errorf("%s: look for table %s: %w", db.Where, table, err)
	}
	return ok, nil
}
