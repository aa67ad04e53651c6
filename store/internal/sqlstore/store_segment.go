package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/sqldb"
	"github.com/idforge/idforge/store/internal/claim"
)

// ClaimSegment implements idforge.SegmentStore with Leaf's semantics: it
// adds step (the row's step when step is 0) to key's max_id and returns
// [new max_id − step, new max_id), so a row (max_id 1, step 2000) yields
// [1, 2001) first. The row's lock (the file's write lock in SQLite) makes
// concurrent claims from any number of processes queue, so no two claims
// ever overlap; the engine's statements (Dialect.Returning) say how.
// The claim is committed when ClaimSegment returns.
//
// A transient failure (see claim.Transient) is retried with backoff, up to
// Settings.Retries times, within the call's deadline. That includes a
// COMMIT whose outcome is unknown because the connection broke: if it did
// commit, the retry claims the next range and the first is never issued,
// which leaves a gap but can never issue a value twice.
//
// Errors, each naming the key: ErrUnknownKey when leaf_alloc has no such
// row (also for a key of another strategy); ErrSpaceExhausted when the new
// max_id would pass the largest int64 (the row is left unchanged);
// ErrStoreFailedOver when the failover fence (sqldb.Fence) names
// another server than the one the claim ran on: nothing was claimed;
// ErrInvalidArgument for a negative step, a row whose max_id or step is
// not an integer, or, when step is 0, a stored step that is not positive;
// ErrClosed after Close; the context's error when it ends; otherwise the
// driver's error after the last attempt.
func (s *Store) ClaimSegment(ctx context.Context, key string, step int64) (idforge.Segment, error) {
	return claim.Segment(ctx, s.retry, key, step, s.claim)
}

// claim makes one attempt. It returns the driver's error unwrapped, so
// that the caller can tell whether to retry.
func (s *Store) claim(ctx context.Context, key string, step int64) (idforge.Segment, error) {
	sch, err := s.ready(ctx)
	if err != nil {
		return idforge.Segment{}, err
	}
	switch {
	case s.d.Returning:
		return s.claimReturning(ctx, sch, key, step)
	case s.d.ClaimInsertID && step > 0:
		return s.claimInsertID(ctx, sch, key, step)
	}
	return s.claimThenRead(ctx, sch, key, step)
}

// claimInsertID claims step values with one autocommitted UPDATE whose
// new max_id is its insert ID (Dialect.ClaimInsertID). The row's stored
// step, which only tells the allocator of a change an operator made, is
// read afterwards, outside the claim; when that read fails the claim
// stands, reporting no step.
func (s *Store) claimInsertID(ctx context.Context, sch *schema, key string, step int64) (idforge.Segment, error) {
	st, args := sch.claimArgs(key, step)
	res, err := st.exec(ctx, s.db, args...)
	if err != nil {
		return idforge.Segment{}, err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return idforge.Segment{}, err
	}
	if err := s.claimedRows(ctx, sch, key, step, n); err != nil {
		return idforge.Segment{}, err
	}
	newMax, err := res.LastInsertId()
	if err != nil {
		return idforge.Segment{}, err
	}
	var maxID, rowStep int64
	if sch.read.queryRow(ctx, s.db, key).Scan(&maxID, &rowStep) != nil {
		rowStep = 0
	}
	return claim.Claimed(newMax, rowStep, step), nil
}

// claimArgs returns the claim statement for step and its arguments.
func (sch *schema) claimArgs(key string, step int64) (statement, []any) {
	if step == 0 {
		return sch.claimStored, []any{key}
	}
	return sch.claimStep, []any{step, key, step}
}

// claimReturning claims with one UPDATE … RETURNING, atomic on its own.
func (s *Store) claimReturning(ctx context.Context, sch *schema, key string, step int64) (idforge.Segment, error) {
	st, args := sch.claimArgs(key, step)
	rows, err := st.query(ctx, s.db, args...)
	if err != nil {
		return idforge.Segment{}, err
	}
	defer rows.Close()
	// Read to the end rather than stopping at the first row: an
	// autocommit statement commits when it completes, and a failed commit
	// must fail the claim, not be lost when the rows are closed.
	var newMax, rowStep int64
	n := 0
	for ; rows.Next(); n++ {
		if err := rows.Scan(&newMax, &rowStep); err != nil {
			return idforge.Segment{}, err
		}
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return idforge.Segment{}, err
	}
	if err := s.claimedRows(ctx, sch, key, step, int64(n)); err != nil {
		return idforge.Segment{}, err
	}
	return claim.Claimed(newMax, rowStep, step), nil
}

// claimedRows checks the number of rows a claim's UPDATE changed: one, or
// none and the reason why (whyNotClaimed).
func (s *Store) claimedRows(ctx context.Context, sch *schema, key string, step, n int64) error {
	switch n {
	case 0:
		return s.whyNotClaimed(ctx, sch, key, step)
	case 1:
		return nil
	}
	// Only possible if biz_tag lost its primary key.
	return fmt.Errorf("%w: key %q: claim matched %d leaf_alloc rows; biz_tag must be the primary key",
		idforge.ErrInvalidArgument, key, n)
}

// claimThenRead claims as Leaf does: in one transaction, the UPDATE, then
// a SELECT of what it wrote. The UPDATE takes the row's exclusive lock,
// held until COMMIT, so the SELECT reads exactly the value this claim set.
func (s *Store) claimThenRead(ctx context.Context, sch *schema, key string, step int64) (idforge.Segment, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return idforge.Segment{}, err
	}
	defer tx.Rollback() // no-op after Commit

	st, args := sch.claimArgs(key, step)
	res, err := st.exec(ctx, tx, args...)
	if err != nil {
		return idforge.Segment{}, err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return idforge.Segment{}, err
	}
	if n == 0 {
		tx.Rollback()
	}
	if err := s.claimedRows(ctx, sch, key, step, n); err != nil {
		return idforge.Segment{}, err
	}
	var newMax, rowStep int64
	if err := sch.read.queryRow(ctx, tx, key).Scan(&newMax, &rowStep); err != nil {
		return idforge.Segment{}, err
	}
	if err := tx.Commit(); err != nil {
		return idforge.Segment{}, err
	}
	return claim.Claimed(newMax, rowStep, step), nil
}

// whyNotClaimed explains why the claim's UPDATE matched nothing: a verdict
// error naming the key, claim.ErrChanged when the row could be claimed now,
// or a driver error.
func (s *Store) whyNotClaimed(ctx context.Context, sch *schema, key string, step int64) error {
	if sch.fenced {
		if err := s.fence.Check(ctx, s.db, s.life.DB); err != nil {
			if errors.Is(err, idforge.ErrStoreFailedOver) {
				s.life.Log.Error(s.d.Name+": claim refused: the store failed over", "db", s.life.DB, "key", key, "err", err)
			}
			return err
		}
	}
	var maxID, rowStep sql.NullInt64
	err := sch.read.queryRow(ctx, s.db, key).Scan(&maxID, &rowStep)
	if errors.Is(err, sql.ErrNoRows) {
		return s.notSegmentKey(ctx, key)
	}
	if err != nil {
		return err
	}
	if !maxID.Valid || !rowStep.Valid {
		return errNotIntegers(key)
	}
	if err := claim.Unclaimable(key, maxID.Int64, rowStep.Int64, step); err != nil {
		return err
	}
	return claim.ErrChanged
}

// errNotIntegers is the error for a leaf_alloc row whose max_id or step
// (as Statements.Read reads them) is NULL, or in SQLite not an integer: a
// hand edit got it wrong.
func errNotIntegers(key string) error {
	return fmt.Errorf("%w: key %q: leaf_alloc row holds a max_id or step that is NULL or not an integer", idforge.ErrInvalidArgument, key)
}

// notSegmentKey returns the ErrUnknownKey error for a key leaf_alloc does
// not have, saying so when it is a key of another strategy (if that can be
// found out; the verdict does not depend on it).
func (s *Store) notSegmentKey(ctx context.Context, key string) error {
	var strategy string
	if has, err := s.keysTable(ctx); err == nil && has {
		s.rdb.QueryRowContext(ctx, s.sql.Strategy, key).Scan(&strategy)
	}
	return claim.NotSegmentKey(key, strategy)
}

// ReturnSegment implements idforge.SegmentReturner: it sets key's max_id
// back to from if, and only if, it is still to, in one UPDATE, and
// reports whether it did. from == to succeeds without a change when
// max_id is to.
//
// Errors: ErrInvalidArgument when from > to or from < 1; ErrUnknownKey
// when leaf_alloc has no such row; ErrClosed after Close; the driver's
// error otherwise (not retried: a lost hand-back only leaves a gap).
func (s *Store) ReturnSegment(ctx context.Context, key string, from, to int64) (bool, error) {
	return s.life.Return(ctx, key, from, to, s.readyErr, func(ctx context.Context) (bool, error) {
		res, err := s.db.ExecContext(ctx, s.sql.Return, from, key, to)
		if err != nil {
			return false, err
		}
		n, err := res.RowsAffected()
		return n > 0, err
	}, func(ctx context.Context) (bool, error) {
		var rows int
		err := s.rdb.QueryRowContext(ctx, s.sql.Exists, key).Scan(&rows)
		return rows > 0, err
	})
}

// GlobalOrder implements idforge.GlobalOrderStore. A claim is one UPDATE
// of the key's row, which takes the row's lock (the file's write lock in
// SQLite), committed on the primary before ClaimSegment returns: a claim
// that begins after another returned sees its max_id. On a database
// server that holds only while the failover fence is in place: without
// idforge_fence a promoted replica that lacks the last claims would hand
// out values below ones already returned, so global order is refused
// until `idforge migrate` creates it (and the nodes restart).
func (s *Store) GlobalOrder(ctx context.Context) error {
	sch, err := s.ready(ctx)
	if err != nil {
		return err
	}
	if s.fence != nil && !sch.fenced {
		return fmt.Errorf("%w: %s has no table %s, so its claims are not fenced against a fail-over to a replica that lacks the last of them: run `idforge migrate`, then restart the nodes",
			idforge.ErrInvalidArgument, s.life.DB, sqldb.FenceTable)
	}
	return nil
}
