package obfuscate

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/idforge/idforge"
)

const customBase62 = "zyxwvutsrqponmlkjihgfedcbaZYXWVUTSRQPONMLKJIHGFEDCBA9876543210"

func TestParseFormat(t *testing.T) {
	for _, tc := range []struct {
		spec string
		want string // canonical String()
		bits int
		v    int64  // encoded without a feistel stage when enc is set
		enc  string // Encode(v), "" to skip
	}{
		{spec: "", want: "decimal", v: 1001, enc: "1001"},
		{spec: "decimal", want: "decimal", v: 1001, enc: "1001"},
		{spec: "decimal:min=8", want: "decimal:min=8", v: 1001, enc: "00001001"},
		{spec: "decimal:min=0", want: "decimal", v: 0, enc: "0"},
		{spec: "hex", want: "hex", v: 1001, enc: "3e9"},
		{spec: "hex:min=16", want: "hex:min=16", v: math.MaxInt64, enc: "7fffffffffffffff"},
		{spec: "base62", want: "base62", v: 1001, enc: "G9"},
		{spec: "base62:min=8", want: "base62:min=8", v: 1001, enc: "000000G9"},
		{spec: "base62:min=7,alphabet=" + DefaultBase62Alphabet, want: "base62:min=7", v: 1001, enc: "00000G9"},
		{spec: "base62:alphabet=" + customBase62 + ",min=3", want: "base62:min=3,alphabet=" + customBase62, v: 1001, enc: "zjq"},
		{spec: "base62:alphabet=" + strings.Replace(customBase62, "z", "=", 1), want: "base62:alphabet=" + strings.Replace(customBase62, "z", "=", 1), v: 0, enc: "="},
		{spec: "sqids", want: "sqids", v: 0, enc: "bM"},
		{spec: "sqids:blocklist=default", want: "sqids", v: 4572721, enc: "JExTR"},
		{spec: "sqids:blocklist=none", want: "sqids:blocklist=none", v: 4572721, enc: "aho1e"},
		{spec: "sqids:min=10,alphabet=abcdefghijkmnpqrstuvwxyz23456789", want: "sqids:min=10,alphabet=abcdefghijkmnpqrstuvwxyz23456789"},
		{spec: "sqids:alphabet=" + DefaultSqidsAlphabet, want: "sqids", v: 1, enc: "Uk"},
		{spec: "feistel:bits=40", want: "feistel:bits=40+decimal", bits: 40},
		{spec: "feistel:bits=40+decimal", want: "feistel:bits=40+decimal", bits: 40},
		{spec: "feistel:bits=40+base62:min=7", want: "feistel:bits=40+base62:min=7", bits: 40},
		{spec: "feistel:bits=1+hex", want: "feistel:bits=1+hex", bits: 1},
		{spec: "feistel:bits=63+sqids:min=12", want: "feistel:bits=63+sqids:min=12", bits: 63},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			f, err := ParseFormat(tc.spec)
			if err != nil {
				t.Fatalf("ParseFormat: %v", err)
			}
			if got := f.String(); got != tc.want {
				t.Errorf("String() = %q, want %q", got, tc.want)
			}
			if f.Bits() != tc.bits {
				t.Errorf("Bits() = %d, want %d", f.Bits(), tc.bits)
			}
			again, err := ParseFormat(f.String())
			if err != nil || again.String() != f.String() {
				t.Errorf("ParseFormat(String()) = %q, %v", again.String(), err)
			}
			if tc.enc != "" {
				if got, err := f.Encode(tc.v); err != nil || got != tc.enc {
					t.Errorf("Encode(%d) = %q, %v; want %q", tc.v, got, err, tc.enc)
				}
				if got, err := f.Decode(tc.enc); err != nil || got != tc.v {
					t.Errorf("Decode(%q) = %d, %v; want %d", tc.enc, got, err, tc.v)
				}
			}
		})
	}
}

func TestParseFormatRejects(t *testing.T) {
	for _, spec := range []string{
		"Base62", "BASE62", "base32", "uuid", " base62", "base62 ", "base 62",
		"base62:", "base62:min", "base62:min=", "base62:=7", "base62:min=-1",
		"base62:min=65", "base62:min=07", "base62:min=+7", "base62:min=7x",
		"base62:min=99999999999999999999", "base62:min=7,min=8", "base62:min=7,",
		"base62:,min=7", "base62:foo=1", "base62:Min=7", "base62:alphabet=abc",
		"base62:alphabet=" + DefaultBase62Alphabet[:61] + "0",
		"base62:alphabet=" + DefaultBase62Alphabet[:60] + "é",
		"base62:alphabet=" + DefaultBase62Alphabet[:61] + "\t",
		"decimal:alphabet=0123456789", "hex:alphabet=0123456789abcdef", "decimal:min=65",
		"sqids:blocklist=maybe", "sqids:blocklist=", "sqids:min=256", "sqids:alphabet=ab",
		"sqids:alphabet=abca", "sqids:alphabet=ab d",
		"feistel", "feistel:", "feistel:bits=0", "feistel:bits=64", "feistel:bits=-1",
		"feistel:bits=40,key=secret", "feistel:rounds=8", "feistel:bits=40,bits=40",
		"feistel:bits=40+feistel:bits=40", "base62+feistel:bits=40", "feistel:bits=40+base62+hex",
		"feistel:bits=40+", "+base62", "+", "base62+", "base62+hex", ":", "::", "base62::min=7",
	} {
		t.Run(spec, func(t *testing.T) {
			f, err := ParseFormat(spec)
			if err == nil {
				t.Fatalf("ParseFormat accepted it as %q", f.String())
			}
			wantInvalid(t, err, "ParseFormat")
		})
	}
}

func TestFormatKeys(t *testing.T) {
	f, err := ParseFormat("feistel:bits=40+base62:min=7")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Encode(1); !errors.Is(err, ErrNoKey) {
		t.Errorf("Encode without a key: %v, want ErrNoKey", err)
	}
	if _, err := f.Decode("0000001"); !errors.Is(err, ErrNoKey) {
		t.Errorf("Decode without a key: %v, want ErrNoKey", err)
	}
	if err := f.Validate(); !errors.Is(err, ErrNoKey) {
		t.Errorf("Validate without a key: %v, want ErrNoKey", err)
	}
	if _, err := f.WithKey([]byte("short")); !errors.Is(err, idforge.ErrInvalidArgument) {
		t.Errorf("WithKey(short): %v, want ErrInvalidArgument", err)
	}

	wrong := f
	wrong.Permute = mustNew(t, testKey(1), 41)
	if err := wrong.Validate(); !errors.Is(err, ErrNoKey) {
		t.Errorf("Validate with a 41-bit permutation: %v, want ErrNoKey", err)
	}

	plain, _ := ParseFormat("base62")
	if _, err := plain.WithKey(testKey(1)); !errors.Is(err, idforge.ErrInvalidArgument) {
		t.Errorf("WithKey on a format without feistel: %v, want ErrInvalidArgument", err)
	}
	plain.Permute = mustNew(t, testKey(1), 40)
	if _, err := plain.Encode(1); !errors.Is(err, ErrNoKey) {
		t.Errorf("Encode with an unwanted permutation: %v, want ErrNoKey", err)
	}

	keyed, err := f.WithKey(testKey(1))
	if err != nil {
		t.Fatal(err)
	}
	if err := keyed.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	if f.Permute != nil {
		t.Errorf("WithKey changed the original")
	}
}

// Max is the largest ID a format encodes, the permutation's own Max for a
// feistel stage: what a key's definition is held within.
func TestFormatMax(t *testing.T) {
	for _, tt := range []struct {
		spec string
		want int64
	}{
		{"", math.MaxInt64},
		{"sqids:min=10", math.MaxInt64},
		{"feistel:bits=1", 1},
		{"feistel:bits=40+base62:min=7", 1<<40 - 1},
		{"feistel:bits=63+hex", math.MaxInt64},
	} {
		f, err := ParseFormat(tt.spec)
		if err != nil {
			t.Fatal(err)
		}
		if got := f.Max(); got != tt.want {
			t.Errorf("%q: Max() = %d, want %d", tt.spec, got, tt.want)
		}
		if f.Bits() == 0 {
			continue
		}
		keyed, err := f.WithKey(testKey(1))
		if err != nil {
			t.Fatal(err)
		}
		if keyed.Permute.Max() != f.Max() {
			t.Errorf("%q: Max() = %d, the permutation's %d", tt.spec, f.Max(), keyed.Permute.Max())
		}
		if _, err := keyed.Encode(f.Max()); err != nil {
			t.Errorf("%q: Encode(Max()): %v", tt.spec, err)
		}
	}
}

// TestFormatFeistel checks that a keyed format writes the permuted value
// with its text stage, at a constant length, and reads it back.
func TestFormatFeistel(t *testing.T) {
	f, _ := ParseFormat("feistel:bits=40+base62:min=7")
	f, err := f.WithKey(testKey(1))
	if err != nil {
		t.Fatal(err)
	}
	text, _ := NewBase62(Base62Settings{MinLength: 7})
	r := rand.New(rand.NewPCG(5, 6))
	seen := map[string]bool{}
	for i := range 3000 {
		v := int64(i)
		if i >= 1000 {
			v = r.Int64N(1 << 40)
		}
		s, err := f.Encode(v)
		if err != nil {
			t.Fatalf("Encode(%d): %v", v, err)
		}
		c, _ := f.Permute.Encode(v)
		if want, _ := text.Encode(c); s != want {
			t.Fatalf("Encode(%d) = %q, want base62 of the permuted %d, %q", v, s, c, want)
		}
		if len(s) != 7 || seen[s] {
			t.Fatalf("Encode(%d) = %q: want 7 characters, never repeated", v, s)
		}
		seen[s] = true
		if d, err := f.Decode(s); err != nil || d != v {
			t.Fatalf("Decode(%q) = %d, %v; want %d", s, d, err, v)
		}
	}

	for _, v := range []int64{-1, 1 << 40, math.MaxInt64} {
		_, err := f.Encode(v)
		wantInvalid(t, err, "Encode out of range")
	}
	// Valid base62 of 7 characters, but above 2^40: not an ID of the format.
	for _, s := range []string{"zzzzzzz", "JMAIjoW", "00000G9x", "G9", ""} {
		_, err := f.Decode(s)
		wantInvalid(t, err, "Decode("+s+")")
	}
}

func TestFormatRoundTrip(t *testing.T) {
	for _, spec := range []string{
		"", "decimal:min=20", "hex", "hex:min=3", "base62", "base62:min=11",
		"base62:alphabet=" + customBase62, "sqids", "sqids:min=20,alphabet=abcdefghijkmnpqrstuvwxyz23456789",
		"feistel:bits=63", "feistel:bits=63+base62:min=11", "feistel:bits=33+hex:min=9",
		"feistel:bits=63+sqids:blocklist=none", "feistel:bits=5+decimal:min=2",
	} {
		f, err := ParseFormat(spec)
		if err != nil {
			t.Fatalf("ParseFormat(%q): %v", spec, err)
		}
		if f.Bits() > 0 {
			f, _ = f.WithKey(testKey(2))
		}
		limit := int64(math.MaxInt64)
		if f.Bits() > 0 {
			limit = f.Permute.Max()
		}
		for _, v := range []int64{0, 1, 2, 30, 31, 1000, limit / 3, limit - 1, limit} {
			if v > limit {
				continue
			}
			s, err := f.Encode(v)
			if err != nil {
				t.Fatalf("%q: Encode(%d): %v", spec, v, err)
			}
			if d, err := f.Decode(s); err != nil || d != v {
				t.Errorf("%q: Decode(%q) = %d, %v; want %d", spec, s, d, err, v)
			}
		}
	}
}

func TestFormatNoAllocations(t *testing.T) {
	f, _ := ParseFormat("feistel:bits=40+base62:min=7")
	f, _ = f.WithKey(testKey(1))
	buf := make([]byte, 0, 16)
	s, _ := f.Encode(12345)
	allocs := testing.AllocsPerRun(100, func() {
		_, _ = f.AppendEncode(buf[:0], 12345)
		_, _ = f.Decode(s)
	})
	if allocs != 0 {
		t.Errorf("AppendEncode+Decode allocate %.1f times, want 0", allocs)
	}
}

// TestFormatRefusalNamesTheCharacter: a character outside printable ASCII
// in an alphabet or an option value is named as the user typed it, with
// its position in characters, not as a raw byte.
func TestFormatRefusalNamesTheCharacter(t *testing.T) {
	if _, err := ParseFormat("base62:min=订"); err == nil || !strings.Contains(err.Error(), "option min: character 1 '订' (U+8BA2) is not allowed") {
		t.Errorf("option value: %v", err)
	}
	_, err := NewBase62(Base62Settings{Alphabet: "0123456789订" + customBase62[11:]})
	if err == nil || !strings.Contains(err.Error(), "alphabet character 11 '订' (U+8BA2) is not allowed") {
		t.Errorf("alphabet: %v", err)
	}
}
