// Package periodic owns the background loops of a node: a task run every
// interval until its context ends, each run bounded by the interval so
// that a store that hangs delays the next run instead of piling runs up.
// The issuer's key refresh, the quotas' refresh and the recheck of
// definitions made through the API all run this way.
package periodic

import (
	"context"
	"time"
)

// Run calls task every interval until ctx ends, each call with a context
// that ends after interval (or with ctx). It hands a task's error to
// onErr, when not nil; the loop goes on either way: a node keeps serving
// what it knows and tries again.
func Run(ctx context.Context, interval time.Duration, task func(context.Context) error, onErr func(error)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		rctx, cancel := context.WithTimeout(ctx, interval)
		err := task(rctx)
		cancel()
		if err != nil && onErr != nil {
			onErr(err)
		}
	}
}
