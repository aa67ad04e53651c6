package client

import (
	"errors"
	"testing"

	"github.com/idforge/idforge"
)

// Stream hands out batches of increasing, unique IDs in every mode, ends
// when the loop breaks, and refuses a bad batch or key before asking.
func TestStream(t *testing.T) {
	for _, v := range variants() {
		t.Run(v.name, func(t *testing.T) {
			n := newNode(t, newStore(t), 5, 100)
			c := v.mode.new(t, []*node{n}, v.opts...)
			defer c.Close()
			var all []int64
			for ids, err := range c.Stream(testCtx(t), "order", 70) {
				if err != nil {
					t.Fatal(err)
				}
				if len(ids) < 1 || len(ids) > 70 {
					t.Fatalf("a batch of %d IDs, want 1..70", len(ids))
				}
				all = append(all, ids...)
				if len(all) >= 500 {
					break
				}
			}
			for k := 1; k < len(all); k++ {
				if all[k] <= all[k-1] {
					t.Fatalf("ID %d after %d", all[k], all[k-1])
				}
			}
			for _, bad := range []struct {
				key   string
				batch int
				want  error
			}{{"order", 0, idforge.ErrInvalidCount}, {"bad key", 10, idforge.ErrInvalidKey}, {"nokey", 10, idforge.ErrUnknownKey}} {
				for _, err := range c.Stream(testCtx(t), bad.key, bad.batch) {
					if !errors.Is(err, bad.want) {
						t.Fatalf("Stream(%q, %d): %v, want %v", bad.key, bad.batch, err, bad.want)
					}
				}
			}
		})
	}
}

// A node that stops mid-stream is set aside and the stream goes on from
// the next one, with no ID twice.
func TestStreamFailsOver(t *testing.T) {
	for _, m := range remoteModes() {
		t.Run(m.name, func(t *testing.T) {
			st := newStore(t)
			a, b := newNode(t, st, 5, 100), newNode(t, st, 6, 100)
			c := m.new(t, []*node{a, b})
			defer c.Close()
			var all []int64
			batches := 0
			for ids, err := range c.Stream(testCtx(t), "order", 50) {
				if err != nil {
					t.Fatal(err)
				}
				all = append(all, ids...)
				if batches++; batches == 3 {
					a.stop()
				}
				if batches == 10 {
					break
				}
			}
			checkUnique(t, all)
		})
	}
}
