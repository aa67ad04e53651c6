package snowflake

import (
	"context"
	"errors"
	"fmt"
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

// A bulk consumer reuses one slice: no allocation per batch.
func ExampleGenerator_NextInto() {
	g, err := New(Settings{Worker: 1})
	if err != nil {
		panic(err)
	}
	defer g.Close()
	buf := make([]int64, 1000)
	n, err := g.NextInto(context.Background(), buf)
	fmt.Println(n, err, buf[0] < buf[n-1])
	// Output: 1000 <nil> true
}
