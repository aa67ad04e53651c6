package wait

import (
	"context"
	"errors"
	"testing"
)

func TestForReturnsTheContextsError(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := For(ctx, 1<<62); !errors.Is(err, context.Canceled) {
		t.Fatalf("For on a cancelled context = %v, want context.Canceled", err)
	}
}

func TestForSleepsOutALiveContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, c := range []context.Context{context.Background(), ctx} {
		if err := For(c, 0); err != nil {
			t.Fatalf("For(%v, 0) = %v, want nil", c, err)
		}
	}
}
