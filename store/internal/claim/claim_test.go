package claim

import (
	"context"
	"testing"
	"time"
)

func TestBackoff(t *testing.T) {
	start := time.Now()
	if !Backoff(context.Background(), 0) {
		t.Fatal("backoff without a deadline gave up")
	}
	// At least the backoff (no upper bound: timers fire late on a loaded
	// machine).
	if d := time.Since(start); d < retryBackoff {
		t.Errorf("first backoff took %v, want at least %v", d, retryBackoff)
	}

	// Attempt 5 waits 1.6 to 2.4 s, more than the 1 s the context has
	// left: backoff gives up at once, with the context still live.
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if Backoff(ctx, 5) {
		t.Fatal("backoff past the deadline went ahead")
	}
	if ctx.Err() != nil {
		t.Error("backoff that cannot finish before the deadline waited for it")
	}

	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(10*time.Millisecond, cancel)
	if Backoff(ctx, 3) {
		t.Fatal("backoff went ahead after cancel")
	}
}
