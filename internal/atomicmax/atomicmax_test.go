package atomicmax

import (
	"sync"
	"sync/atomic"
	"testing"
)

func TestRaiseKeepsTheLargest(t *testing.T) {
	var v atomic.Int64
	var wg sync.WaitGroup
	for i := range int64(64) {
		wg.Go(func() { Raise(&v, i) })
	}
	wg.Wait()
	Raise(&v, 10)
	if got := v.Load(); got != 63 {
		t.Fatalf("after raising to 0..63 and then 10: %d, want 63", got)
	}
}
