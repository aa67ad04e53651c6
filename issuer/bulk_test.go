package issuer

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/store/memstore"
)

func TestNextIntoAndRanges(t *testing.T) {
	st := memstore.New()
	ctx := context.Background()
	if err := st.CreateKey(ctx, idforge.Key{Name: "order", Strategy: idforge.StrategySegment, Step: 10, MaxID: 1}); err != nil {
		t.Fatal(err)
	}
	iss := New(st, nil, Settings{})
	defer iss.Close()
	buf := make([]int64, 4)
	if n, err := iss.NextInto(ctx, "order", buf); err != nil || n != 4 || !reflect.DeepEqual(buf, []int64{1, 2, 3, 4}) {
		t.Fatalf("NextInto = %d, %v, %v", n, buf, err)
	}
	segs, err := iss.NextRanges(ctx, "order", 30, nil)
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	next := int64(5)
	for _, s := range segs {
		if s.Start < next {
			t.Fatalf("ranges %v overlap what was issued", segs)
		}
		next, total = s.End, total+s.Len()
	}
	if total != 30 {
		t.Fatalf("ranges %v hold %d IDs, want 30", segs, total)
	}
	if _, err := iss.NextInto(ctx, "order", nil); err == nil {
		t.Fatal("NextInto of an empty slice succeeded")
	}
	got := AppendRuns(nil, []int64{1, 2, 3, 7, 8, 5})
	want := []idforge.Segment{{Start: 1, End: 4}, {Start: 7, End: 9}, {Start: 5, End: 6}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("AppendRuns = %v, want %v", got, want)
	}
}

// A bulk consumer of a segment key: IDs into one reused slice, or ranges
// whose cost does not grow with the count.
func ExampleIssuer_NextRanges() {
	st := memstore.New()
	ctx := context.Background()
	st.CreateKey(ctx, idforge.Key{Name: "order", Strategy: idforge.StrategySegment, Step: 1000, MaxID: 1})
	iss := New(st, nil, Settings{})
	defer iss.Close()

	buf := make([]int64, 3)
	n, _ := iss.NextInto(ctx, "order", buf)
	fmt.Println(buf[:n])

	ranges, _ := iss.NextRanges(ctx, "order", 10_000, nil)
	for _, r := range ranges {
		fmt.Println(r.Start, r.Len())
	}
	// Output:
	// [1 2 3]
	// 4 10000
}
