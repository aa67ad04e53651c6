package snowflake

import "context"

// NextInto fills dst with len(dst) new IDs in increasing order, as
// NextN(ctx, len(dst)) would return them, without allocating; a bulk
// caller reuses dst from batch to batch. len(dst) must be 1 to MaxBatch
// (else an error wrapping idforge.ErrInvalidCount). On error it returns 0,
// and the IDs written so far are skipped (gaps are allowed).
//
// As much of the batch as the open tick has sequence numbers left for is
// reserved in one atomic add, without the lock, as Next takes one
// number (see Generator); only the rest, from the next tick on, goes
// through the lock and the checks of a tick opening. So a batch costs
// about one Next plus writing the IDs.
func (g *Generator) NextInto(ctx context.Context, dst []int64) (int, error) {
	if err := checkBatch(len(dst)); err != nil {
		return 0, err
	}
	n := 0
	if id, k := g.take(int64(len(dst))); k > 0 {
		n = g.putRun(dst[:k], id)
	}
	if n < len(dst) {
		if _, err := g.fill(ctx, dst[n:]); err != nil {
			return 0, err
		}
	}
	return len(dst), nil
}
