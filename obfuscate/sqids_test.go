package obfuscate

import (
	"math"
	"strings"
	"testing"
)

func mustSqids(tb testing.TB, s SqidsSettings) *Sqids {
	tb.Helper()
	q, err := NewSqids(s)
	if err != nil {
		tb.Fatalf("NewSqids(%+v): %v", s, err)
	}
	return q
}

// TestSqidsSpecVectors checks the Sqids specification's vectors for
// single numbers with the default settings.
func TestSqidsSpecVectors(t *testing.T) {
	q := mustSqids(t, SqidsSettings{})
	for v, want := range []string{"bM", "Uk", "gb", "Ef", "Vq", "uw", "OI", "AX", "p6", "nJ"} {
		got, err := q.Encode(int64(v))
		if err != nil || got != want {
			t.Errorf("Encode(%d) = %q, %v; want %q", v, got, err, want)
		}
		if d, err := q.Decode(want); err != nil || d != int64(v) {
			t.Errorf("Decode(%q) = %d, %v; want %d", want, d, err, v)
		}
	}
}

// TestSqidsBlocklist checks the specification's blocklist vector: 4572721
// spells "aho1e", which the default list blocks.
func TestSqidsBlocklist(t *testing.T) {
	const v = 4572721
	def := mustSqids(t, SqidsSettings{})
	if s, _ := def.Encode(v); s != "JExTR" {
		t.Errorf("default blocklist: Encode(%d) = %q, want JExTR", v, s)
	}
	// Sqids would read "aho1e" as 4572721 too; only JExTR is the ID.
	_, err := def.Decode("aho1e")
	wantInvalid(t, err, `default blocklist: Decode("aho1e")`)

	none := mustSqids(t, SqidsSettings{Blocklist: []string{}})
	if s, _ := none.Encode(v); s != "aho1e" {
		t.Errorf("no blocklist: Encode(%d) = %q, want aho1e", v, s)
	}
	if d, err := none.Decode("aho1e"); err != nil || d != v {
		t.Errorf("no blocklist: Decode(aho1e) = %d, %v", d, err)
	}

	custom := mustSqids(t, SqidsSettings{Blocklist: []string{"ArUO"}})
	if s, _ := custom.Encode(100000); s == "ArUO" {
		t.Errorf("custom blocklist: Encode(100000) = ArUO, a blocked word")
	}
	if s, _ := custom.Encode(v); s != "aho1e" {
		t.Errorf("custom blocklist: Encode(%d) = %q; the default list should not apply", v, s)
	}
}

func TestSqidsRoundTrip(t *testing.T) {
	for _, s := range []SqidsSettings{
		{},
		{MinLength: 10},
		{MinLength: MaxSqidsMinLength},
		{Alphabet: "abcdefghijkmnpqrstuvwxyz23456789"},
		{Alphabet: "abc"},
		{Alphabet: "0123456789abcdef", MinLength: 12},
		{Blocklist: []string{}},
	} {
		q := mustSqids(t, s)
		alphabet := s.Alphabet
		if alphabet == "" {
			alphabet = DefaultSqidsAlphabet
		}
		seen := map[string]bool{}
		for _, v := range []int64{0, 1, 2, 61, 62, 1000, 1 << 40, math.MaxInt64 - 1, math.MaxInt64} {
			str, err := q.Encode(v)
			if err != nil {
				t.Fatalf("%+v: Encode(%d): %v", s, v, err)
			}
			if len(str) < s.MinLength {
				t.Errorf("%+v: Encode(%d) = %q, shorter than %d", s, v, str, s.MinLength)
			}
			if strings.Trim(str, alphabet) != "" {
				t.Errorf("%+v: Encode(%d) = %q, characters outside the alphabet", s, v, str)
			}
			if seen[str] {
				t.Errorf("%+v: Encode(%d) = %q, given twice", s, v, str)
			}
			seen[str] = true
			if got, err := q.Decode(str); err != nil || got != v {
				t.Errorf("%+v: Decode(%q) = %d, %v; want %d", s, str, got, err, v)
			}
		}
	}
}

func TestSqidsRejects(t *testing.T) {
	for _, s := range []SqidsSettings{
		{Alphabet: "ab"},
		{Alphabet: "abca"},
		{Alphabet: "ab c"},
		{Alphabet: "abcé"},
		{MinLength: -1},
		{MinLength: MaxSqidsMinLength + 1},
	} {
		_, err := NewSqids(s)
		wantInvalid(t, err, "NewSqids")
	}

	q := mustSqids(t, SqidsSettings{})
	_, err := q.Encode(-1)
	wantInvalid(t, err, "Encode(-1)")

	two, _ := q.s.Encode([]uint64{1, 2})
	over, _ := q.s.Encode([]uint64{math.MaxInt64 + 1})
	for _, s := range []string{
		"",
		"b",
		"bM!",
		"bM ",
		two,  // two numbers
		over, // above MaxInt64
		strings.Repeat("x", 300),
	} {
		_, err := q.Decode(s)
		wantInvalid(t, err, "Decode("+clip(s)+")")
	}

	padded := mustSqids(t, SqidsSettings{MinLength: 8})
	id, _ := padded.Encode(7)
	if _, err := padded.Decode(id[:len(id)-1]); err == nil {
		t.Errorf("min 8: Decode accepted %q, one character short of %q", id[:len(id)-1], id)
	}
}
