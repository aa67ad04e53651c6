package issuer

import (
	"context"
	"errors"
	"strconv"
	"testing"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/store/memstore"
)

func TestKeyMap(t *testing.T) {
	m := newKeyMap()
	entries := map[string]*entry{}
	for n := range 1000 {
		name := "k" + strconv.Itoa(n)
		entries[name] = &entry{}
		m.store(name, entries[name])
		// Every key is found at once, published or recent, and so are
		// the ones before it.
		for _, back := range []int{n, n / 2, 0} {
			name := "k" + strconv.Itoa(back)
			if e, ok := m.load(name); !ok || e != entries[name] {
				t.Fatalf("after %d keys, %s not found", n+1, name)
			}
		}
	}
	if _, ok := m.load("k1000"); ok {
		t.Fatal("a key never stored was found")
	}
	m.store("late", &entry{})
	m.remove([]string{"k1", "k2"})
	all := m.all()
	if len(all) != 999 || all["k1"] != nil || all["late"] == nil {
		t.Fatalf("all() has %d entries after removing two of 1001", len(all))
	}
	if _, ok := m.load("k2"); ok {
		t.Fatal("a removed key was found")
	}
	// Replacing a published entry is seen at once.
	fresh := &entry{}
	m.store("k500", fresh)
	if e, _ := m.load("k500"); e != fresh {
		t.Fatal("a replaced entry still answers the old one")
	}
}

// BenchmarkKeyMapAdd adds keys one by one: the cost per key stays flat
// as the map grows.
func BenchmarkKeyMapAdd(b *testing.B) {
	m := newKeyMap()
	n := 0
	for b.Loop() {
		m.store("k"+strconv.Itoa(n), &entry{})
		n++
	}
}

// TestUnusedKeysAreNotActive: a key Refresh set up but nobody asked for
// has no segment state, so it neither shows in Active nor makes the node
// unavailable while the store is down and the used keys have IDs left.
func TestUnusedKeysAreNotActive(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	for _, name := range []string{"used", "idle"} {
		if err := st.CreateKey(ctx, idforge.Key{Name: name, Strategy: idforge.StrategySegment, Step: 100, MaxID: 1}); err != nil {
			t.Fatal(err)
		}
	}
	iss := New(st, nil, Settings{Logger: quiet})
	defer iss.Close()
	if _, err := iss.Next(ctx, "used"); err != nil {
		t.Fatal(err)
	}
	if err := iss.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	active := iss.Active()
	if len(active) != 2 || active[0].Name != "idle" || active[0].Segment != nil || active[1].Segment == nil {
		t.Fatalf("Active: %+v; want idle without segment state and used with it", active)
	}
	st.Fail(errors.New("down"))
	if r := iss.Readiness(ctx); r.Status != Degraded || len(r.Keys) != 1 {
		t.Fatalf("readiness with the store down: %s over %d keys; want degraded over the used key", r.Status, len(r.Keys))
	}
}
