package tickets_test

import (
	"context"
	"testing"

	"github.com/idforge/idforge/sequence"
)

// The source reports each server's state, calls and highest ticket.
func TestStatus(t *testing.T) {
	srv := servers(t, 2)
	expand(t, srv, 2)
	src := open(t, clientURL(t, srv, "rescue=1h"))
	ctx := context.Background()
	highest := map[int64]int64{} // by server: position 1 odd, 2 even
	for range 10 {
		v, err := src.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		highest[1-v%2] = max(highest[1-v%2], v)
	}
	st, ok := sequence.StatusOf(src)
	if !ok || st.Kind != "tickets" || st.Health != sequence.Up || st.Calls != 10 || len(st.Members) != 2 {
		t.Fatalf("status: %+v", st)
	}
	for i, m := range st.Members {
		if m.State != "admitted" || m.Highest != highest[int64(i)] {
			t.Errorf("server %d: %+v, want highest %d", i, m, highest[int64(i)])
		}
	}
}
