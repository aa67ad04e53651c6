package serial

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/segment"
	"github.com/idforge/idforge/store/memstore"
)

var _ BoundedGenerator = (*segment.Allocator)(nil)

// segmentKey returns a segment key's allocator over an in-memory store,
// its first ID start.
func segmentKey(tb testing.TB, name string, start, step int64) *segment.Allocator {
	tb.Helper()
	st := memstore.New()
	if err := st.CreateKey(context.Background(), idforge.Key{Name: name, Strategy: idforge.StrategySegment, Step: step, MaxID: start}); err != nil {
		tb.Fatal(err)
	}
	a := segment.New(st, name, segment.Settings{MaxStep: step, Logger: slog.New(slog.DiscardHandler)})
	tb.Cleanup(func() { a.Close() })
	return a
}

// A segment key at 999,998 under width=6: a batch of five serves the two
// that fit, then every request is refused with ErrSpaceExhausted, and
// none of them uses up an ID: the key's next ID is still 1,000,000.
func TestWidthServesWhatFitsAndWastesNothing(t *testing.T) {
	ctx := context.Background()
	key := segmentKey(t, "small", 999_998, 10)
	tp := mustParse(t, "S@{seq:small,width=6}", Options{Resolver: Sources{"small": {Generator: key}}})

	got, err := tp.NextN(ctx, 5, nil)
	if err != nil || !slices.Equal(got, []string{"S999998", "S999999"}) {
		t.Fatalf("NextN(5) at 999998 = %v, %v; want the two that fit", got, err)
	}
	for range 3 {
		_, err := tp.NextN(ctx, 5, nil)
		wantErr(t, err, idforge.ErrSpaceExhausted, `seq "small"`, "width=6", "999999")
		_, err = tp.Next(ctx, nil)
		wantErr(t, err, idforge.ErrSpaceExhausted, "width=6")
	}
	if id, err := key.Next(ctx); err != nil || id != 1_000_000 {
		t.Fatalf("the key's next ID = %d, %v; want 1000000: an error used up IDs", id, err)
	}
}

// Sources that cannot stop below a limit: the batch is still cut where
// the width runs out, without an error; the number found too wide is
// drawn (a gap, never a duplicate), and a request whose first number does
// not fit is an error wrapping ErrSpaceExhausted.
func TestWidthShortBatchFromOtherSources(t *testing.T) {
	ctx := context.Background()
	day := newCounter(24*time.Hour, time.UTC)
	day.n, day.period = 98, time.Date(2025, 4, 13, 0, 0, 0, 0, time.UTC)
	bg := &batchGen{}
	bg.last.Store(97)
	for _, tc := range []struct {
		name, text string
		src        Source
		want       []string
	}{
		{"generator", "S@{seq:s,width=2}", Source{Generator: newGen(98)}, []string{"S98", "S99"}},
		{"batch generator", "S@{seq:s,width=2}", Source{Generator: bg}, []string{"S98", "S99"}},
		{"period counter", "@{date:yyyyMMdd}@{seq:s,width=2}", Source{Counter: day}, []string{"2025041399"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tp := mustParse(t, tc.text, Options{Resolver: Sources{"s": tc.src}, Clock: clockAt(2025, 4, 13, 12, 0, 0)})
			got, err := tp.NextN(ctx, 5, nil)
			if err != nil || !slices.Equal(got, tc.want) {
				t.Fatalf("NextN(5) = %v, %v; want %v", got, err, tc.want)
			}
			_, err = tp.NextN(ctx, 5, nil)
			wantErr(t, err, idforge.ErrSpaceExhausted, "width=2")
		})
	}
}

// Several bounded sources: the one with the least room cuts the batch
// for all of them. The numbers the others drew past that point are lost
// (a gap): here a's 995 to 999, so the next request finds a out of room
// and is refused before b is asked for anything.
func TestWidthSeveralBoundedSources(t *testing.T) {
	ctx := context.Background()
	a := segmentKey(t, "a", 990, 100)
	b := segmentKey(t, "b", 95, 100)
	tp := mustParse(t, "@{seq:a,width=3}-@{seq:b,width=2}", Options{Resolver: Sources{"a": {Generator: a}, "b": {Generator: b}}})
	got, err := tp.NextN(ctx, 10, nil)
	if err != nil || !slices.Equal(got, []string{"990-95", "991-96", "992-97", "993-98", "994-99"}) {
		t.Fatalf("NextN(10) = %v, %v", got, err)
	}
	_, err = tp.NextN(ctx, 10, nil)
	wantErr(t, err, idforge.ErrSpaceExhausted, `seq "a"`, "width=3")
	if id, err := b.Next(ctx); err != nil || id != 100 {
		t.Fatalf("b's next ID = %d, %v; want 100", id, err)
	}
}

// An error of a bounded source that is not about room passes through as
// it is.
func TestWidthBoundedSourceDown(t *testing.T) {
	down := errors.New("store down")
	tp := mustParse(t, "S@{seq:s,width=6}", Options{Resolver: Sources{"s": {Generator: failingBounded{down}}}})
	for _, n := range []int{1, 3} {
		_, err := tp.NextN(context.Background(), n, nil)
		if !errors.Is(err, down) || errors.Is(err, idforge.ErrSpaceExhausted) {
			t.Fatalf("NextN(%d) = %v, want the source's error", n, err)
		}
	}
}

// failingBounded is a BoundedGenerator whose every call fails.
type failingBounded struct{ err error }

func (f failingBounded) Next(context.Context) (int64, error) { return 0, f.err }
func (f failingBounded) NextNBelow(context.Context, int, int64) ([]int64, error) {
	return nil, f.err
}
