package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/store/internal/sqlstore"
)

// ClaimSegment implements idforge.SegmentStore with Leaf's semantics: it
// adds step (the row's step when step is 0) to key's max_id in one atomic
// UPDATE … RETURNING and returns [new max_id − step, new max_id), so a row
// (max_id 1, step 2000) yields [1, 2001) first. The claim is durable
// (synchronous=FULL) when ClaimSegment returns.
//
// Errors, each naming the key: ErrUnknownKey when leaf_alloc has no such
// row (also for a key of another strategy); ErrSpaceExhausted when the new
// max_id would pass the largest int64 (the row is left unchanged);
// ErrInvalidArgument for a negative step, or a row whose step is not
// positive or whose values are not integers; ErrClosed after Close.
func (s *Store) ClaimSegment(ctx context.Context, key string, step int64) (idforge.Segment, error) {
	if err := s.checkOpen(); err != nil {
		return idforge.Segment{}, err
	}
	if step < 0 {
		return idforge.Segment{}, fmt.Errorf("%w: key %q: negative step %d", idforge.ErrInvalidArgument, key, step)
	}
	// When the UPDATE matches nothing, inspect the row to say why. If the
	// row turns out to be claimable after all, it was inserted between the
	// two statements: try again, a bounded number of times.
	for attempt := 0; ; attempt++ {
		seg, ok, err := s.claim(ctx, key, step)
		if err != nil || ok {
			return seg, err
		}
		if err := s.whyNotClaimed(ctx, key, step); err != nil || attempt == 2 {
			if err == nil {
				err = fmt.Errorf("sqlite: claim segment for key %q: row keeps changing, giving up", key)
			}
			return idforge.Segment{}, err
		}
	}
}

// claim runs claimSQL once. ok is false when it updated no row.
func (s *Store) claim(ctx context.Context, key string, step int64) (seg idforge.Segment, ok bool, err error) {
	rows, err := s.claimStmt.QueryContext(ctx, key, step)
	if err != nil {
		return seg, false, s.wrap(ctx, err, fmt.Sprintf("claim segment for key %q", key))
	}
	// Read to the end rather than stopping at the first row: the
	// autocommit transaction commits when the statement completes, and a
	// failed commit must fail the claim, not be lost in a reset.
	var newMax, rowStep int64
	for rows.Next() {
		if ok {
			rows.Close()
			return idforge.Segment{}, false, fmt.Errorf("sqlite: claim segment for key %q updated more than one row", key)
		}
		if err := rows.Scan(&newMax, &rowStep); err != nil {
			rows.Close()
			return idforge.Segment{}, false, s.wrap(ctx, err, fmt.Sprintf("claim segment for key %q", key))
		}
		ok = true
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return idforge.Segment{}, false, s.wrap(ctx, err, fmt.Sprintf("claim segment for key %q", key))
	}
	if !ok {
		return idforge.Segment{}, false, nil
	}
	return sqlstore.Claimed(newMax, rowStep, step), true, nil
}

// whyNotClaimed explains why claimSQL updated nothing for key. It returns
// nil when the row exists and could be claimed now.
func (s *Store) whyNotClaimed(ctx context.Context, key string, step int64) error {
	var (
		maxID, rowStep    any
		maxType, stepType string
	)
	err := s.r.QueryRowContext(ctx, inspectSQL, key).Scan(&maxID, &rowStep, &maxType, &stepType)
	if errors.Is(err, sql.ErrNoRows) {
		var strategy string
		err := s.r.QueryRowContext(ctx, strategySQL, key).Scan(&strategy)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return fmt.Errorf("%w: %q", idforge.ErrUnknownKey, key)
		case err != nil:
			return s.wrap(ctx, err, fmt.Sprintf("look up key %q", key))
		}
		return fmt.Errorf("%w: %q is a %s key, not a segment key", idforge.ErrUnknownKey, key, strategy)
	}
	if err != nil {
		return s.wrap(ctx, err, fmt.Sprintf("look up key %q", key))
	}
	if maxType != "integer" || stepType != "integer" {
		return fmt.Errorf("%w: key %q: leaf_alloc row holds max_id %v (%s) and step %v (%s); both must be integers",
			idforge.ErrInvalidArgument, key, maxID, maxType, rowStep, stepType)
	}
	// Both are int64: the driver returns SQLite's integers as such.
	return sqlstore.Unclaimable(key, maxID.(int64), rowStep.(int64), step)
}

// ReturnSegment implements idforge.SegmentReturner: it sets key's max_id
// back to from if, and only if, it is still to, in one UPDATE, and
// reports whether it did. from == to succeeds without a change when
// max_id is to. The change is durable when ReturnSegment returns.
//
// Errors: ErrInvalidArgument when from > to or from < 1; ErrUnknownKey
// when leaf_alloc has no such row; ErrClosed after Close.
func (s *Store) ReturnSegment(ctx context.Context, key string, from, to int64) (bool, error) {
	if err := s.checkOpen(); err != nil {
		return false, err
	}
	if from > to || from < 1 {
		return false, fmt.Errorf("%w: key %q: cannot return [%d, %d)", idforge.ErrInvalidArgument, key, from, to)
	}
	what := fmt.Sprintf("return segment [%d, %d) of key %q", from, to, key)
	res, err := s.w.ExecContext(ctx, returnSQL, key, from, to)
	if err != nil {
		return false, s.wrap(ctx, err, what)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, s.wrap(ctx, err, what)
	}
	if n > 0 {
		return true, nil
	}
	var exists bool
	if err := s.r.QueryRowContext(ctx, existsSQL, key).Scan(&exists); err != nil {
		return false, s.wrap(ctx, err, what)
	}
	if !exists {
		return false, fmt.Errorf("%w: %q", idforge.ErrUnknownKey, key)
	}
	return false, nil
}
