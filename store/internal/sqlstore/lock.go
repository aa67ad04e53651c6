package sqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"time"
)

// InTx runs fn in a transaction on db and commits it if fn succeeds. It
// returns the errors of the driver and of fn as they are.
func InTx(ctx context.Context, db *sql.DB, fn func(*sql.Tx) error) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() // no-op after Commit
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// Unlock runs query, a statement that releases a session-level lock held
// by conn and returns one row, with a second of its own even when ctx has
// ended. Should it fail, conn is discarded rather than go back to the
// pool holding the lock: the server drops the lock with the session.
func Unlock(ctx context.Context, conn *sql.Conn, query string, args ...any) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer cancel()
	if err := conn.QueryRowContext(ctx, query, args...).Scan(new(any)); err != nil {
		conn.Raw(func(any) error { return driver.ErrBadConn })
	}
}
