package client

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/idforge/idforge"
)

// TestVocabularyClient walks every code of the vocabulary: an *Error
// carrying it wraps the code's sentinel, so errors.Is works with it
// (ErrUnavailable for the two codes that describe the answering node
// rather than the call), and a client fails over on it exactly when the
// code is retryable.
func TestVocabularyClient(t *testing.T) {
	for _, c := range idforge.Codes() {
		e := &Error{Server: "10.0.0.1:8080", Code: c, Message: "m", HTTPStatus: c.HTTPStatus()}
		want := c.Err()
		switch c {
		case idforge.CodeShuttingDown, idforge.CodeTimeout:
			want = idforge.ErrUnavailable
		case idforge.CodeInternal:
			want = nil
		}
		if want == nil {
			if ws := e.Unwrap(); len(ws) != 0 {
				t.Errorf("%s wraps %v, want nothing", c, ws)
			}
		} else if !errors.Is(fmt.Errorf("call: %w", e), want) {
			t.Errorf("%s: errors.Is(err, %v) is false", c, want)
		}
		if got := retriable(fmt.Errorf("call: %w", e)); got != c.Retryable() {
			t.Errorf("%s: retriable %v, want %v", c, got, c.Retryable())
		}
	}
}

// A key that has used up its IDs is idforge.ErrSpaceExhausted in every
// mode, and no client fails over on it: no node can do better.
func TestSpaceExhausted(t *testing.T) {
	for _, v := range variants() {
		t.Run(v.name, func(t *testing.T) {
			st := newStore(t)
			full := idforge.Key{Name: "full", Strategy: idforge.StrategySegment, Step: 100, MaxID: math.MaxInt64 - 150}
			if err := st.CreateKey(context.Background(), full); err != nil {
				t.Fatal(err)
			}
			n := newNode(t, st, 5, 100)
			c := v.mode.new(t, []*node{n}, v.opts...)
			defer c.Close()
			ctx := testCtx(t)
			var err error
			for range 1000 {
				if _, err = c.Next(ctx, "full"); err != nil {
					break
				}
			}
			if !errors.Is(err, idforge.ErrSpaceExhausted) {
				t.Fatalf("Next on a used-up key: %v, want ErrSpaceExhausted", err)
			}
			if _, err := c.NextN(ctx, "full", 2); !errors.Is(err, idforge.ErrSpaceExhausted) {
				t.Fatalf("NextN on a used-up key: %v, want ErrSpaceExhausted", err)
			}
			if v.mode.remote && retriable(err) {
				t.Fatalf("%v is retried", err)
			}
		})
	}
}
