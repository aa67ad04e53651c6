package issuer

import (
	"context"
	"errors"
	"strconv"
	"testing"

	"github.com/google/uuid"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/obfuscate"
	"github.com/idforge/idforge/segment"
	"github.com/idforge/idforge/store/memstore"
	"github.com/idforge/idforge/timeid"
)

func TestStringsAndFormats(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	st.CreateKey(ctx, idforge.Key{Name: "order", Strategy: idforge.StrategySegment, Step: 100, MaxID: 1})
	st.CreateKey(ctx, idforge.Key{Name: "plain", Strategy: idforge.StrategySegment, Step: 100, MaxID: 1})
	f, err := obfuscate.ParseFormat("feistel:bits=40+base62:min=7")
	if err != nil {
		t.Fatal(err)
	}
	if f, err = f.WithKey([]byte("0123456789abcdef-order")); err != nil {
		t.Fatal(err)
	}
	iss := New(st, nil, Settings{Logger: quiet, Formats: map[string]obfuscate.Format{"order": f}})
	defer iss.Close()

	// A permuted, base62 key: short strings that decode back, in no
	// visible order.
	got, err := iss.NextStrings(ctx, "order", 3, "")
	if err != nil {
		t.Fatal(err)
	}
	for k, s := range got {
		if len(s) < 7 {
			t.Fatalf("%q shorter than the format's minimum", s)
		}
		id, err := iss.Decode(ctx, "order", s, "")
		if err != nil || id != int64(k+1) {
			t.Fatalf("Decode(%q) = %d, %v; want %d", s, id, err, k+1)
		}
	}
	// Another text form per request keeps the key's permutation.
	hex, err := iss.NextStrings(ctx, "order", 1, "hex")
	if err != nil {
		t.Fatal(err)
	}
	if id, err := iss.Decode(ctx, "order", hex[0], "hex"); err != nil || id != 4 {
		t.Fatalf("hex round trip: %d, %v", id, err)
	}
	// A plain key is decimal unless asked otherwise.
	if got, err := iss.NextStrings(ctx, "plain", 2, ""); err != nil || got[0] != "1" || got[1] != "2" {
		t.Fatalf("plain = %v, %v", got, err)
	}
	if got, err := iss.NextStrings(ctx, "plain", 1, "base62"); err != nil || got[0] != "3" {
		t.Fatalf("plain base62 = %v, %v", got, err)
	}
	// A request cannot ask for a permutation: the key is configuration.
	if _, err := iss.NextStrings(ctx, "plain", 1, "feistel:bits=40"); !errors.Is(err, idforge.ErrInvalidArgument) {
		t.Fatalf("per-request permutation: %v", err)
	}
	if _, err := iss.NextStrings(ctx, "plain", 1, "base64"); !errors.Is(err, idforge.ErrInvalidArgument) {
		t.Fatalf("unknown format: %v", err)
	}
	if _, err := iss.Decode(ctx, "plain", "12x", ""); !errors.Is(err, idforge.ErrInvalidArgument) {
		t.Fatalf("bad decimal: %v", err)
	}
	// Decoding is a call on a key like any other: an unknown key is
	// ErrUnknownKey, not a number.
	if _, err := iss.Decode(ctx, "nosuch", "1", ""); !errors.Is(err, idforge.ErrUnknownKey) {
		t.Fatalf("Decode on an unknown key: %v, want ErrUnknownKey", err)
	}
	if _, err := iss.Decode(ctx, "a b", "1", ""); !errors.Is(err, idforge.ErrInvalidKey) {
		t.Fatalf("Decode on a bad key name: %v, want ErrInvalidKey", err)
	}
	if err := iss.CreateKey(ctx, idforge.Key{Name: "trace", Strategy: idforge.StrategyULID}); err != nil {
		t.Fatal(err)
	}
	if _, err := iss.Decode(ctx, "trace", "1", ""); !errors.Is(err, idforge.ErrWrongStrategy) {
		t.Fatalf("Decode on a ulid key: %v, want ErrWrongStrategy", err)
	}
	// A snowflake key decodes on a node without a generator (this one).
	if err := iss.CreateKey(ctx, idforge.Key{Name: "evt", Strategy: idforge.StrategySnowflake}); err != nil {
		t.Fatal(err)
	}
	if id, err := iss.Decode(ctx, "evt", "77", ""); err != nil || id != 77 {
		t.Fatalf("Decode on a snowflake key: %d, %v", id, err)
	}
}

func TestTimeOrderedStrategies(t *testing.T) {
	ctx := context.Background()
	iss := New(memstore.New(), nil, Settings{Logger: quiet})
	defer iss.Close()
	for _, s := range []idforge.Strategy{idforge.StrategyUUIDv7, idforge.StrategyULID} {
		if err := iss.CreateKey(ctx, idforge.Key{Name: string(s), Strategy: s}); err != nil {
			t.Fatal(err)
		}
		ids, err := iss.NextStrings(ctx, string(s), 50, "")
		if err != nil {
			t.Fatal(err)
		}
		for k := 1; k < len(ids); k++ {
			if ids[k] <= ids[k-1] {
				t.Fatalf("%s: %q after %q", s, ids[k], ids[k-1])
			}
		}
		if _, err := timeid.Time(ids[0]); err != nil {
			t.Fatalf("%s: %q has no time: %v", s, ids[0], err)
		}
		if _, err := iss.Next(ctx, string(s)); !errors.Is(err, idforge.ErrWrongStrategy) {
			t.Fatalf("%s: an integer from a string key: %v", s, err)
		}
		if _, err := iss.NextStrings(ctx, string(s), 1, "base62"); !errors.Is(err, idforge.ErrWrongStrategy) {
			t.Fatalf("%s: a format for a string key: %v", s, err)
		}
	}
}

// A uuidv4 key issues version 4 UUIDs through the same paths as the
// time-ordered ones: no integers, no format, plugins that see strings.
func TestUUIDv4Strategy(t *testing.T) {
	ctx := context.Background()
	iss := New(memstore.New(), nil, Settings{Logger: quiet})
	defer iss.Close()
	if err := iss.CreateKey(ctx, idforge.Key{Name: "req", Strategy: idforge.StrategyUUIDv4}); err != nil {
		t.Fatal(err)
	}
	ids, err := iss.NextStrings(ctx, "req", 100, "")
	if err != nil || len(ids) != 100 {
		t.Fatalf("NextStrings: %d IDs, %v", len(ids), err)
	}
	seen := map[string]bool{}
	for _, id := range ids {
		if u, err := uuid.Parse(id); err != nil || u.Version() != 4 || u.String() != id || seen[id] {
			t.Fatalf("%q is not a new canonical version 4 UUID (%v)", id, err)
		}
		seen[id] = true
	}
	if _, err := iss.Next(ctx, "req"); !errors.Is(err, idforge.ErrWrongStrategy) {
		t.Fatalf("an integer from a uuidv4 key: %v", err)
	}
	if _, err := iss.Decode(ctx, "req", "1", ""); !errors.Is(err, idforge.ErrWrongStrategy) {
		t.Fatalf("Decode on a uuidv4 key: %v", err)
	}
	f, _ := obfuscate.ParseFormat("base62")
	if err := CheckKey(idforge.Key{Name: "req", Strategy: idforge.StrategyUUIDv4}, &f); !errors.Is(err, idforge.ErrInvalidArgument) {
		t.Fatalf("a format on a uuidv4 key: %v", err)
	}
}

// A key whose format permutes has one set of IDs on every path: integer
// calls return the permuted values that /v1/ids shows as text, so a raw
// value from one call can never equal a permuted value from another, and
// a range (which would be raw) is refused.
func TestPermutedKeyIsOneSetOfIDs(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	st.CreateKey(ctx, idforge.Key{Name: "order", Strategy: idforge.StrategySegment, Step: 100, MaxID: 1})
	f, err := obfuscate.ParseFormat("feistel:bits=12+base62")
	if err != nil {
		t.Fatal(err)
	}
	if f, err = f.WithKey([]byte("0123456789abcdef-order")); err != nil {
		t.Fatal(err)
	}
	// Segments of 100 at most: Take claims from the store beside the
	// buffered segments, and larger ones would leave most of the 12-bit
	// space in buffers.
	iss := New(st, nil, Settings{Logger: quiet, Formats: map[string]obfuscate.Format{"order": f},
		Segment: segment.Settings{MaxStep: 100}})
	defer iss.Close()

	seen := map[int64]string{}
	record := func(id int64, how string) {
		t.Helper()
		if prev, ok := seen[id]; ok {
			t.Fatalf("ID %d from %s was already issued by %s", id, how, prev)
		}
		seen[id] = how
		raw, err := f.Permute.Decode(id)
		if err != nil || raw < 1 || raw > 4095 {
			t.Fatalf("%s gave %d, which is not a permuted ID (raw %d, %v)", how, id, raw, err)
		}
	}
	if _, err := iss.ClaimRange(ctx, "order", 10); !errors.Is(err, idforge.ErrWrongStrategy) {
		t.Fatalf("ClaimRange on a permuted key: %v, want ErrWrongStrategy", err)
	}
	// Mix every path until the 12-bit space runs out: no repeat, and at
	// its end a clear error, never a collision.
	var stop error
	for stop == nil {
		var id int64
		if id, stop = iss.Next(ctx, "order"); stop != nil {
			break
		}
		record(id, "Next")
		var ids []int64
		if ids, stop = iss.NextN(ctx, "order", 3); stop != nil {
			break
		}
		for _, id := range ids {
			record(id, "NextN")
		}
		var strs []string
		if strs, stop = iss.NextStrings(ctx, "order", 2, "decimal"); stop != nil {
			break
		}
		for _, s := range strs {
			id, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			record(id, "NextStrings")
			if raw, err := iss.Decode(ctx, "order", s, "decimal"); err != nil || raw < 1 {
				t.Fatalf("Decode(%s) = %d, %v", s, raw, err)
			}
		}
		if ids, stop = iss.Take(ctx, "order", 1); stop != nil {
			break
		}
		record(ids[0], "Take")
	}
	if !errors.Is(stop, idforge.ErrSpaceExhausted) || idforge.ErrorCode(stop) != "space_exhausted" {
		t.Fatalf("past 12 bits: %v (code %s), want ErrSpaceExhausted and nothing else", stop, idforge.ErrorCode(stop))
	}
	if len(seen) < 2000 {
		t.Fatalf("only %d IDs before the space ran out", len(seen))
	}
}
