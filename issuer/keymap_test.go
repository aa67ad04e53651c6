package issuer

import (
	"strconv"
	"testing"
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
