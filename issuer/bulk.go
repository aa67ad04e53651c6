package issuer

import (
	"context"
	"errors"
	"fmt"

	"github.com/idforge/idforge"
)

// NextInto is NextN(ctx, key, len(dst)) into dst: it fills the start of
// dst with up to len(dst) IDs and returns how many, with NextN's meaning
// and errors. A segment key whose format does not permute its IDs, on an
// Issuer without plugins, and a snowflake key, are filled in place
// without allocating, which is what the bulk transports (gRPC Stream)
// reuse one buffer for; any other key goes through NextN and is copied.
func (i *Issuer) NextInto(ctx context.Context, key string, dst []int64) (int, error) {
	if err := checkCount(len(dst)); err != nil {
		return 0, err
	}
	e, err := i.resolveInts(ctx, key)
	if err != nil {
		return 0, err
	}
	if i.set.Plugins.Idle() && i.permutation(key) == nil {
		switch {
		case e.alloc != nil:
			n, err := e.alloc.NextIntoBelow(ctx, dst, above(e.limit))
			return n, i.exhausted(key, e, err)
		case e.strategy == idforge.StrategySnowflake && e.limitBy == "" && i.snow != nil:
			return i.snow.NextInto(ctx, dst)
		}
	}
	ids, err := i.many(ctx, key, e.strategy, len(dst), func() ([]int64, error) { return i.drawN(ctx, key, e, len(dst)) })
	if err != nil {
		return 0, err
	}
	return copy(dst, ids), nil
}

// exhausted names what limits a segment key whose allocator ran out below
// that limit (as drawN does); other errors pass through.
func (i *Issuer) exhausted(key string, e *entry, err error) error {
	if err != nil && e.limitBy != "" && errors.Is(err, idforge.ErrSpaceExhausted) {
		return fmt.Errorf("%w: key %q has issued every ID %s takes (up to %d)", idforge.ErrSpaceExhausted, key, e.limitBy, e.limit)
	}
	return err
}

// NextRanges issues up to n IDs of key, as NextN does, and appends them
// to dst as runs of consecutive IDs, [Start, End) each (Step 0), in the
// order issued. For a segment key whose format does not permute its IDs,
// on an Issuer without plugins, it takes the ranges from the allocator
// (segment.Allocator.AppendRangesBelow) at a cost that does not grow with
// n: one range, or a few when the batch spans segments. Any other key
// issues its IDs as NextN does and folds consecutive ones together
// (snowflake IDs within one tick are consecutive; permuted IDs make runs
// of one). Errors are NextN's; on error dst is returned as it was.
func (i *Issuer) NextRanges(ctx context.Context, key string, n int, dst []idforge.Segment) ([]idforge.Segment, error) {
	if err := checkCount(n); err != nil {
		return dst, err
	}
	e, err := i.resolveInts(ctx, key)
	if err != nil {
		return dst, err
	}
	if e.alloc != nil && i.set.Plugins.Idle() && i.permutation(key) == nil {
		out, err := e.alloc.AppendRangesBelow(ctx, dst, int64(n), above(e.limit))
		return out, i.exhausted(key, e, err)
	}
	ids, err := i.many(ctx, key, e.strategy, n, func() ([]int64, error) { return i.drawN(ctx, key, e, n) })
	if err != nil {
		return dst, err
	}
	return AppendRuns(dst, ids), nil
}

// AppendRuns appends ids to dst as runs of consecutive values, [Start,
// End) each, folding a value that follows the last run's end into it.
func AppendRuns(dst []idforge.Segment, ids []int64) []idforge.Segment {
	first := len(dst)
	for _, v := range ids {
		if k := len(dst) - 1; k >= first && dst[k].End == v {
			dst[k].End++
			continue
		}
		dst = append(dst, idforge.Segment{Start: v, End: v + 1})
	}
	return dst
}
