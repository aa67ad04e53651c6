package snowflake

import (
	"context"
	"fmt"

	"github.com/idforge/idforge"
)

// NextInto fills dst with len(dst) new IDs in increasing order, as
// NextN(ctx, len(dst)) would return them, without allocating; a bulk
// caller reuses dst from batch to batch. len(dst) must be 1 to MaxBatch
// (else an error wrapping idforge.ErrInvalidCount). On error it returns 0,
// and the IDs written so far are skipped (gaps are allowed).
func (g *Generator) NextInto(ctx context.Context, dst []int64) (int, error) {
	if len(dst) < 1 || len(dst) > MaxBatch {
		return 0, fmt.Errorf("%w: %d IDs asked for, want 1 to %d", idforge.ErrInvalidCount, len(dst), MaxBatch)
	}
	if _, err := g.fill(ctx, dst); err != nil {
		return 0, err
	}
	return len(dst), nil
}
