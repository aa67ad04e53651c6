package postgres

import (
	"context"

	"github.com/idforge/idforge"
)

// ClaimSegment implements idforge.SegmentStore with Leaf's semantics: it
// adds step (the row's step when step is 0) to key's max_id in one atomic
// UPDATE … RETURNING and returns [new max_id − step, new max_id), so a row
// (max_id 1, step 2000) yields [1, 2001) first. At the server's default
// isolation (READ COMMITTED) concurrent claims from any number of
// processes queue on the row lock, and each adds to the max_id its
// predecessor committed, so no two claims ever overlap. The claim is
// committed when ClaimSegment returns.
//
// A transient failure (see Config.Retries) is retried with backoff within
// the call's deadline. That includes a COMMIT whose outcome is unknown
// because the connection broke: if it did commit, the retry claims the
// next range and the first is never issued, which leaves a gap but can
// never issue a value twice.
//
// Errors, each naming the key: ErrUnknownKey when leaf_alloc has no such
// row (also for a key of another strategy); ErrSpaceExhausted when the new
// max_id would pass the largest int64 (the row is left unchanged);
// ErrInvalidArgument for a negative step, or, when step is 0, a stored
// step that is not positive; ErrClosed after Close; the context's error
// when it ends; otherwise the driver's error after the last attempt.
func (s *Store) ClaimSegment(ctx context.Context, key string, step int64) (idforge.Segment, error) {
	return s.core.ClaimSegment(ctx, key, step)
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
	return s.core.ReturnSegment(ctx, key, from, to)
}
