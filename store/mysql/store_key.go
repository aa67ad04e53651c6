package mysql

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"fmt"
	"math"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/store/internal/sqlstore"
)

// CreateKey implements idforge.KeyStore. A segment key becomes a
// leaf_alloc row (max_id = k.MaxID, the first ID issued; step = k.Step);
// any other key becomes an idforge_keys row. The name must be free in both
// tables: a named server lock (GET_LOCK) per name serialises creators in
// every process, and each table's primary key backs it up against rows
// inserted by other means (Leaf's console, an operator).
//
// Errors: those of idforge.Key.Validate; ErrKeyExists when the name is
// taken, whatever the strategy (with a case-insensitive collation on an
// existing Leaf table, a name differing only in case is taken too); an
// error saying to run `idforge migrate` for a key of another strategy
// when the database has no idforge_keys table; ErrClosed after Close.
func (s *Store) CreateKey(ctx context.Context, k idforge.Key) error {
	return s.core.CreateKey(ctx, k)
}

// nameLocker takes MySQL's named locks for key names in one database.
type nameLocker struct{ dbName string }

// withLock is sqlstore.Dialect.WithNameLock: it runs fn on a connection
// of its own that holds the server's named lock for name, waiting for the
// lock as long as ctx allows. Lock names are at most 64 characters, so
// the name is hashed, together with the database, whose keys are the only
// ones that conflict.
func (l nameLocker) withLock(ctx context.Context, db *sql.DB, name string, fn func(sqlstore.Querier) error) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	sum := sha256.Sum256([]byte(l.dbName + "\x00" + name))
	lock := lockPrefix + hex.EncodeToString(sum[:20])
	wait := 1.0
	if dl, ok := ctx.Deadline(); ok {
		wait = max(1, math.Ceil(time.Until(dl).Seconds()))
	}
	var got sql.NullInt64
	if err := conn.QueryRowContext(ctx, lockSQL, lock, int64(wait)).Scan(&got); err != nil {
		return err
	}
	if got.Int64 != 1 {
		return fmt.Errorf("lock %s not granted within %vs (GET_LOCK returned %v)", lock, wait, got)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
		var released sql.NullInt64
		if err := conn.QueryRowContext(ctx, unlockSQL, lock).Scan(&released); err != nil {
			// The server drops the lock with the session: make sure the
			// connection is closed rather than reused while holding it.
			conn.Raw(func(any) error { return driver.ErrBadConn })
		}
	}()
	return fn(conn)
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
