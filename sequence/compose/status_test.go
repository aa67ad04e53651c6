package compose_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/idforge/idforge/sequence"
	"github.com/idforge/idforge/sequence/compose"
)

// A Balanced reports Up, Degraded with a member ejected (its rescue time
// left, last error and when) and Down with none left; an Expanded over it
// reports its prefetch buffer and the Balanced as its inner status.
func TestStatus(t *testing.T) {
	cs := []*counter{newCounter(0), newCounter(0)}
	const rescue = time.Hour
	bal, err := compose.NewBalanced(gens(cs...), compose.BalancedOptions{RescueAfter: rescue, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for range 4 {
		if _, err := bal.Next(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if st := bal.Status(); st.Health != sequence.Up || st.Calls != 4 || st.Failures != 0 || len(st.Members) != 2 || st.LastError != "" {
		t.Fatalf("all up: %+v", st)
	}

	cs[1].fail.Store(true)
	before := time.Now()
	for bal.Stats()[1].State != compose.Ejected {
		if _, err := bal.Next(ctx); err != nil {
			t.Fatal(err)
		}
	}
	st := bal.Status()
	m := st.Members[1]
	if st.Health != sequence.Degraded || st.Failures != 1 || m.State != "ejected" || m.Failures != 1 || m.Ejections != 1 ||
		m.RescueIn <= 0 || m.RescueIn > rescue || !strings.Contains(m.LastError, "fake source: down") ||
		m.LastErrorAt.Before(before.Add(-time.Second)) || !strings.HasPrefix(st.LastError, "source 1: ") || st.LastErrorAt != m.LastErrorAt {
		t.Fatalf("one ejected: %+v", st)
	}

	e := newExpanded(t, bal, compose.ExpandedOptions{MemoryBits: 4})
	if _, err := e.Next(ctx); err != nil {
		t.Fatal(err)
	}
	es := e.Status()
	if es.Kind != "expanded" || es.Health != sequence.Degraded || es.Inner == nil || es.Inner.Kind != "balanced" ||
		es.Prefetch == nil || es.Prefetch.IDs < 15 || es.Calls == 0 {
		t.Fatalf("expanded over the degraded Balanced: %+v (prefetch %+v)", es, es.Prefetch)
	}

	cs[0].fail.Store(true)
	if _, err := bal.Next(ctx); err == nil {
		t.Fatal("issued with every member failing")
	}
	if st := bal.Status(); st.Health != sequence.Down {
		t.Fatalf("none left: %+v", st)
	}
}
