package postgres

import (
	"context"
	"database/sql"
	"hash/fnv"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/store/internal/sqlstore"
)

// CreateKey implements idforge.KeyStore. A segment key becomes a
// leaf_alloc row (max_id = k.MaxID, the first ID issued; step = k.Step);
// any other key becomes an idforge_keys row. The name must be free in both
// tables: in one transaction, an advisory lock per name (see nameLock)
// serialises creators in every process, and each table's primary key backs
// it up against rows inserted by other means (an operator).
//
// Errors: those of idforge.Key.Validate; ErrKeyExists when the name is
// taken, whatever the strategy; an error saying to run `idforge migrate`
// for a key of another strategy when the database has no idforge_keys
// table; ErrClosed after Close.
func (s *Store) CreateKey(ctx context.Context, k idforge.Key) error {
	return s.core.CreateKey(ctx, k)
}

// withNameLock is sqlstore.Dialect.WithNameLock: it runs fn in a
// transaction that holds the advisory lock for name (see lockSQL), and
// commits it if fn succeeds.
func withNameLock(ctx context.Context, db *sql.DB, name string, fn func(sqlstore.Querier) error) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() // no-op after Commit
	if _, err := tx.ExecContext(ctx, lockSQL, nameLock(name)); err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// nameLock returns the advisory lock key for a key name: a 64-bit FNV-1a
// hash. Two names sharing a hash merely wait for each other.
func nameLock(name string) int64 {
	h := fnv.New64a()
	h.Write([]byte("idforge:key:"))
	h.Write([]byte(name))
	return int64(h.Sum64())
}

// Key implements idforge.KeyStore. It returns an error wrapping
// idforge.ErrUnknownKey when neither table has the name, and ErrClosed
// after Close. The key's Name is as stored, which differs from name only
// under a case-insensitive collation (an existing Leaf table). Should a
// name be in both tables (only possible by editing them by hand), the
// segment key wins, because that is the row ClaimSegment uses.
func (s *Store) Key(ctx context.Context, name string) (idforge.Key, error) {
	return s.core.Key(ctx, name)
}

// Keys implements idforge.KeyStore: every key of both tables, sorted by
// name in byte order (whatever the tables' collations). It returns an
// error wrapping ErrClosed after Close.
func (s *Store) Keys(ctx context.Context) ([]idforge.Key, error) {
	return s.core.Keys(ctx)
}
