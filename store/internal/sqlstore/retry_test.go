package sqlstore

import (
	"context"
	"testing"
	"time"
)

func TestBackoff(t *testing.T) {
	start := time.Now()
	if !backoff(context.Background(), 0) {
		t.Fatal("backoff without a deadline gave up")
	}
	if d := time.Since(start); d < retryBackoff || d > 3*retryBackoff {
		t.Errorf("first backoff took %v, want %v to %v", d, retryBackoff, 3*retryBackoff)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	start = time.Now()
	if backoff(ctx, 0) {
		t.Fatal("backoff past the deadline went ahead")
	}
	if d := time.Since(start); d > 10*time.Millisecond {
		t.Errorf("backoff that cannot finish before the deadline waited %v", d)
	}

	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(10*time.Millisecond, cancel)
	if backoff(ctx, 3) {
		t.Fatal("backoff went ahead after cancel")
	}
}
