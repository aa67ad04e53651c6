package timeid

import (
	"context"
	"errors"
	"regexp"
	"testing"
	"testing/quick"

	"github.com/google/uuid"
	"github.com/idforge/idforge"
)

// canonicalV4 is the text of every version 4 UUID: lower-case hex, the
// version digit 4 and a variant digit 8, 9, a or b.
var canonicalV4 = regexp.MustCompile(`\A[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\z`)

// checkV4 fails unless id is a canonical RFC 9562 version 4 UUID.
func checkV4(tb testing.TB, id string) {
	tb.Helper()
	u, err := uuid.Parse(id)
	if err != nil || !canonicalV4.MatchString(id) || u.Version() != 4 || u.Variant() != uuid.RFC4122 || u.String() != id {
		tb.Fatalf("%q is not a canonical version 4 UUID (parse error %v)", id, err)
	}
}

// TestUUIDv4Format issues IDs one by one and in batches: every one is a
// version 4 UUID in canonical form, and none repeats.
func TestUUIDv4Format(t *testing.T) {
	g, err := New(KindUUIDv4, Settings{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	seen := map[string]bool{}
	for _, n := range []int{1, 1, 2, 1000, 10_000} {
		var ids []string
		if n == 1 {
			id, err := g.Next(ctx)
			if err != nil {
				t.Fatal(err)
			}
			ids = []string{id}
		} else if ids, err = g.NextN(ctx, n); err != nil {
			t.Fatal(err)
		}
		if len(ids) != n {
			t.Fatalf("NextN(%d) returned %d IDs", n, len(ids))
		}
		for _, id := range ids {
			checkV4(t, id)
			if seen[id] {
				t.Fatalf("%s issued twice", id)
			}
			seen[id] = true
		}
	}
	if _, err := g.Time(ids(seen)[0]); !errors.Is(err, idforge.ErrInvalidArgument) {
		t.Errorf("Time of a UUIDv4: %v, want an error wrapping ErrInvalidArgument", err)
	}
	if _, err := Time(ids(seen)[0]); !errors.Is(err, idforge.ErrInvalidArgument) {
		t.Errorf("timeid.Time of a UUIDv4: %v, want an error wrapping ErrInvalidArgument", err)
	}
}

func ids(m map[string]bool) []string {
	var out []string
	for id := range m {
		out = append(out, id)
	}
	return out
}

func TestUUIDv4Errors(t *testing.T) {
	g, _ := NewUUIDv4(Settings{})
	for _, n := range []int{0, -1, MaxBatch + 1} {
		if _, err := g.NextN(context.Background(), n); !errors.Is(err, idforge.ErrInvalidCount) {
			t.Errorf("NextN(%d): %v, want ErrInvalidCount", n, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := g.Next(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Next on a done context: %v", err)
	}
	if _, err := g.NextN(ctx, 2); !errors.Is(err, context.Canceled) {
		t.Errorf("NextN on a done context: %v", err)
	}
}

// uuidv4Holds reports whether asUUIDv4 makes a version 4 UUID of random
// and keeps its other 122 bits.
func uuidv4Holds(random [16]byte) bool {
	u := asUUIDv4(random)
	mask := uuid.UUID{6: 0xf0, 8: 0xc0}
	for i := range u {
		if u[i]&^mask[i] != random[i]&^mask[i] {
			return false
		}
	}
	s := u.String()
	return canonicalV4.MatchString(s) && u.Version() == 4 && u.Variant() == uuid.RFC4122
}

// The format holds for every 128-bit input.
func TestUUIDv4Property(t *testing.T) {
	if err := quick.Check(uuidv4Holds, &quick.Config{MaxCount: 100_000}); err != nil {
		t.Error(err)
	}
}

func FuzzUUIDv4(f *testing.F) {
	f.Add(make([]byte, 16))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte("\xf4\x7a\xc1\x0b\x58\xcc\x43\x72\xa5\x67\x0e\x02\xb2\xc3\xd4\x79"))
	f.Fuzz(func(t *testing.T, b []byte) {
		var random [16]byte
		copy(random[:], b)
		if !uuidv4Holds(random) {
			t.Fatalf("asUUIDv4(%x) = %s", random, asUUIDv4(random))
		}
	})
}
