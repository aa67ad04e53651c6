package periodic

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

func TestRunStopsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var runs, errs atomic.Int32
	done := make(chan struct{})
	go func() {
		defer close(done)
		Run(ctx, time.Millisecond, func(ctx context.Context) error {
			if _, ok := ctx.Deadline(); !ok {
				t.Error("a run's context has no deadline")
			}
			if runs.Add(1) == 3 {
				cancel()
			}
			return errors.New("store down")
		}, func(error) { errs.Add(1) })
	}()
	<-done
	if runs.Load() < 3 || errs.Load() != runs.Load() {
		t.Fatalf("%d runs, %d errors handed on; want at least 3, one each", runs.Load(), errs.Load())
	}
}
