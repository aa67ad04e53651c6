package segment

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/idforge/idforge"
)

// NextInto fills dst with len(dst) strictly increasing IDs, as NextN(ctx,
// len(dst)) would return them, and returns len(dst). It allocates nothing:
// a bulk caller that reuses dst pays a few nanoseconds per batch on top of
// writing the IDs, where Next pays one atomic add per ID. An empty dst is
// an error wrapping idforge.ErrInvalidCount. On error it returns 0 and
// what dst holds is undefined; the IDs taken before a failed claim are a
// gap, as with NextN.
func (a *Allocator) NextInto(ctx context.Context, dst []int64) (int, error) {
	// The fast path, one atomic add and the fill, is kept apart from the
	// loop over buffers so that a batch the current buffer holds pays
	// nothing more per call than Next does.
	b := a.cur.Load()
	lo, hi := b.take(int64(len(dst)))
	if i := fill(dst, lo, hi); i < len(dst) || i == 0 {
		return a.nextIntoSlow(ctx, dst, i, b)
	}
	return len(dst), nil
}

// nextIntoSlow is NextInto once the first i values of dst are written
// and b, the buffer they came from, cannot give the rest.
func (a *Allocator) nextIntoSlow(ctx context.Context, dst []int64, i int, b *buffer) (int, error) {
	if len(dst) == 0 {
		return 0, fmt.Errorf("%w: 0 (want at least 1)", idforge.ErrInvalidCount)
	}
	if a.set.Global {
		err := a.takeGlobal(ctx, int64(len(dst)), math.MaxInt64, func(lo, hi int64) { i = fill(dst, lo, hi) })
		if err == nil && i < len(dst) {
			err = fmt.Errorf("%w: key %q: the store gave %d of %d IDs", idforge.ErrSpaceExhausted, a.key, i, len(dst))
		}
		if err != nil {
			return 0, err
		}
		return i, nil
	}
	for i < len(dst) {
		if err := a.advance(ctx, b); err != nil {
			return 0, err
		}
		b = a.cur.Load()
		lo, hi := b.take(int64(len(dst) - i))
		i += fill(dst[i:], lo, hi)
	}
	return len(dst), nil
}

// NextIntoBelow is NextNBelow(ctx, len(dst), limit) into dst: it fills the
// start of dst with up to len(dst) strictly increasing IDs, all below
// limit, and returns how many. It allocates nothing. Fewer than len(dst)
// only when the next ID would be limit or more; none, with an error
// wrapping idforge.ErrSpaceExhausted that used up no ID, when the very
// next one would.
func (a *Allocator) NextIntoBelow(ctx context.Context, dst []int64, limit int64) (int, error) {
	if len(dst) == 0 {
		return 0, fmt.Errorf("%w: 0 (want at least 1)", idforge.ErrInvalidCount)
	}
	i := 0
	err := a.takeBelow(ctx, int64(len(dst)), limit, func(lo, hi int64) {
		i += fill(dst[i:], lo, hi)
	})
	if err != nil {
		return 0, err
	}
	return i, nil
}

// AppendRangesBelow takes up to n strictly increasing IDs below limit, as
// NextNBelow does, and appends them to dst as ranges of consecutive IDs
// ([Start, End), Step left 0), in the order issued: one range, or a few
// when the batch spans segments. It costs the same whatever n is, so a
// bulk answer of ranges ("form=ranges" over HTTP) issues at memory speed.
// Errors are NextNBelow's; on error dst is returned as it was.
func (a *Allocator) AppendRangesBelow(ctx context.Context, dst []idforge.Segment, n int64, limit int64) ([]idforge.Segment, error) {
	if n < 1 {
		return dst, fmt.Errorf("%w: %d (want at least 1)", idforge.ErrInvalidCount, n)
	}
	out := dst
	err := a.takeBelow(ctx, n, limit, func(lo, hi int64) {
		if k := len(out) - 1; k >= len(dst) && out[k].End == lo {
			out[k].End = hi // the next segment went on where this one ended
			return
		}
		out = append(out, idforge.Segment{Start: lo, End: hi})
	})
	if err != nil {
		return dst, err
	}
	return out, nil
}

// takeBelow takes up to n IDs below limit in ranges, handing each to got
// in order; see NextNBelow for what it returns.
func (a *Allocator) takeBelow(ctx context.Context, n, limit int64, got func(lo, hi int64)) error {
	if a.set.Global {
		return a.takeGlobal(ctx, n, limit, got)
	}
	taken := int64(0)
	for taken < n {
		b := a.cur.Load()
		var lo, hi int64
		var full bool
		if limit == math.MaxInt64 {
			lo, hi = b.take(n - taken) // no limit: one atomic add
		} else {
			lo, hi, full = b.takeBelow(n-taken, limit)
		}
		if full {
			break
		}
		if hi > lo {
			got(lo, hi)
			taken += hi - lo
			continue
		}
		if err := a.advance(ctx, b); err != nil {
			if taken > 0 && errors.Is(err, idforge.ErrSpaceExhausted) {
				break
			}
			return err
		}
	}
	if taken == 0 {
		return fmt.Errorf("%w: key %q: the next ID is %d or more", idforge.ErrSpaceExhausted, a.key, limit)
	}
	return nil
}

// fill writes lo, lo+1, … hi-1 to the start of dst and returns how many.
// It writes eight values a step (one bounds check, one loop test for
// eight stores): three instructions per ID, against four and a quarter
// four a step and about six one a step.
func fill(dst []int64, lo, hi int64) int {
	n := int(hi - lo)
	dst = dst[:n]
	k, v := 0, lo
	for ; k+8 <= n; k, v = k+8, v+8 {
		d := dst[k : k+8 : k+8]
		d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7] = v, v+1, v+2, v+3, v+4, v+5, v+6, v+7
	}
	for ; k < n; k, v = k+1, v+1 {
		dst[k] = v
	}
	return n
}
