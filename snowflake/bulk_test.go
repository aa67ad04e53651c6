package snowflake

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/fakeclock"
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

// FuzzNextInto runs any sequence of Next and NextInto calls of any size
// on a fake clock that the input moves forwards and backwards by up to
// 6.3 ms (ticks of 1 ms, 16 sequence numbers each, so batches span
// ticks and the fast path meets used-up and stale ticks). For every
// input: each ID is greater than every one before it (none twice),
// carries the worker ID, and lies in a tick the clock read during the
// call; a call fails only with ErrClockMovedBackwards; Issued counts at
// least the IDs returned.
func FuzzNextInto(f *testing.F) {
	f.Add([]byte{0, 1, 5, 0, 2, 9, 60, 1, 3, 40, 1, 0})
	f.Add([]byte{61, 61, 61, 2, 3, 255, 0, 3, 23, 1, 1, 1, 2, 4, 0})
	f.Add([]byte{1, 157, 1, 157, 1, 157, 3, 7, 1, 157})
	f.Fuzz(func(t *testing.T, ops []byte) {
		l := mustParse(t, "time:49,worker:10,sequence:4,unit=1ms,epoch=2024-01-01T00:00:00Z")
		clk := fakeclock.New(start)
		g := newGen(t, Settings{Layout: l, Worker: 5, Clock: clk})
		ctx := context.Background()
		buf := make([]int64, 64)
		last, returned := int64(-1), int64(0)
		for _, op := range ops {
			arg := int(op >> 2)
			if op&3 >= 2 {
				d := time.Duration(arg) * 100 * time.Microsecond
				if op&3 == 3 {
					d = -d
				}
				clk.Add(d)
				continue
			}
			before := clk.Now()
			var got []int64
			var err error
			if op&3 == 0 {
				var id int64
				if id, err = g.Next(ctx); err == nil {
					got = []int64{id}
				}
			} else {
				var n int
				n, err = g.NextInto(ctx, buf[:1+arg])
				got = buf[:n]
			}
			if err != nil {
				if !errors.Is(err, idforge.ErrClockMovedBackwards) {
					t.Fatalf("error %v, want only ErrClockMovedBackwards", err)
				}
				continue
			}
			after := clk.Now()
			for _, id := range got {
				if id <= last {
					t.Fatalf("ID %d after %d", id, last)
				}
				last = id
				p := mustExplain(t, l, id)
				if p.Worker != 5 {
					t.Fatalf("ID %d carries worker %d, want 5", id, p.Worker)
				}
				if p.Time.After(after) || !p.Time.Add(l.Unit).After(before) {
					t.Fatalf("ID %d in the tick starting %s, issued between %s and %s", id, p.Time, before, after)
				}
			}
			returned += int64(len(got))
		}
		if n := g.Issued(); n < returned {
			t.Fatalf("Issued() = %d, but %d IDs were returned", n, returned)
		}
	})
}
