package snowflake

import (
	"context"
	"errors"
	"testing"

	"github.com/idforge/idforge"
)

func TestNextInto(t *testing.T) {
	g, err := New(Settings{Worker: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	buf := make([]int64, 1000)
	last := int64(0)
	for range 5 {
		n, err := g.NextInto(context.Background(), buf)
		if err != nil || n != len(buf) {
			t.Fatalf("NextInto = %d, %v", n, err)
		}
		for _, id := range buf {
			if id <= last {
				t.Fatalf("ID %d after %d", id, last)
			}
			last = id
		}
	}
	if _, err := g.NextInto(context.Background(), nil); !errors.Is(err, idforge.ErrInvalidCount) {
		t.Fatalf("empty slice: %v, want ErrInvalidCount", err)
	}
}
