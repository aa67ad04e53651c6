// Package wait owns the one context-aware sleep that retry loops, back-offs
// and clock waits across idforge share.
package wait

import (
	"context"
	"time"
)

// For sleeps for d or until ctx is done, and then returns ctx.Err(): nil
// when the whole of d passed. A context that can never be done (Done is
// nil, as for context.Background) sleeps without a timer.
func For(ctx context.Context, d time.Duration) error {
	if ctx.Done() == nil {
		time.Sleep(d)
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
