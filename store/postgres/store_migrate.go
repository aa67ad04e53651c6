package postgres

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"time"
)

// Migrate implements idforge.Migrator: it creates leaf_alloc,
// idforge_keys and idforge_serials when the search path finds no table of
// that name (in one transaction, under an advisory lock so that
// concurrent runs cannot collide), and then checks them as Open does. An
// existing table, a Leaf leaf_alloc included, is left as it is, in
// whatever schema it is, with its rows and its column named desc rather
// than description if it has one; a database migrated by an older idforge
// gains idforge_serials. It is idempotent and safe to run while nodes
// serve. New tables go
// to the first schema of the search path, which needs the CREATE
// privilege. Migrate is bounded by ctx only (not Config.Timeout).
//
// It returns an error wrapping idforge.ErrClosed after Close, and an
// error naming the columns when an existing table is not the one idforge
// expects.
func (s *Store) Migrate(ctx context.Context) error {
	return s.core.Migrate(ctx)
}

// createTables is sqlstore.Dialect.CreateTables: in one transaction,
// under the session-level advisory lock migrateLock, it creates each table
// the search path does not find.
func createTables(ctx context.Context, db *sql.DB) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	// A session-level lock, taken before the transaction begins: a
	// transaction sees the tables an earlier Migrate committed only if it
	// starts after that commit (the backend refreshes its catalog caches
	// when a transaction starts, not when an advisory lock is granted).
	if _, err := conn.ExecContext(ctx, lockSessionSQL, migrateLock); err != nil {
		return err
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
		if _, err := conn.ExecContext(ctx, unlockSessionSQL, migrateLock); err != nil {
			// The server drops the lock with the session: make sure the
			// connection is closed rather than reused while holding it.
			conn.Raw(func(any) error { return driver.ErrBadConn })
		}
	}()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() // no-op after Commit
	// CREATE TABLE IF NOT EXISTS only looks in the schema it would create
	// the table in, the first of the search path: a Leaf table in a later
	// one (public, behind "$user") would be shadowed by a new, empty
	// leaf_alloc, and every key would start again from 1. So a table is
	// created only if the search path finds none.
	var hasLeaf, hasKeys, hasSerials bool
	if err := tx.QueryRowContext(ctx, tablesSQL).Scan(&hasLeaf, &hasKeys, &hasSerials); err != nil {
		return err
	}
	for _, t := range []struct {
		exists bool
		ddl    string
	}{{hasLeaf, createLeafAllocSQL}, {hasKeys, createKeysSQL}, {hasSerials, createSerialsSQL}} {
		if t.exists {
			continue
		}
		if _, err := tx.ExecContext(ctx, t.ddl); err != nil {
			return err
		}
	}
	return tx.Commit()
}
