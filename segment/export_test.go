package segment

import "context"

// Warm claims the first segment now instead of on the first call. In
// global order, which buffers nothing, it does nothing.
func (a *Allocator) Warm(ctx context.Context) error {
	for !a.set.Global {
		b := a.cur.Load()
		if !b.empty() {
			return nil
		}
		if err := a.advance(ctx, b); err != nil {
			return err
		}
	}
	return nil
}
