package obfuscate

import (
	"errors"
	"testing"

	"github.com/idforge/idforge"
)

// FuzzParseFormat checks that ParseFormat never panics, that every error
// wraps idforge.ErrInvalidArgument, that what parses prints a canonical
// spec that parses to itself, and that the format round-trips the edges
// of its range.
func FuzzParseFormat(f *testing.F) {
	for _, s := range []string{
		"", "decimal", "decimal:min=8", "hex:min=16", "base62", "base62:min=7",
		"base62:alphabet=" + customBase62 + ",min=3", "sqids", "sqids:min=10,alphabet=abc,blocklist=none",
		"feistel:bits=40", "feistel:bits=40+base62:min=7", "feistel:bits=63+sqids",
		"feistel:bits=1+hex", "base62:min=07", "feistel:bits=40+feistel:bits=40", "a:b=c,d=e+f:g=h",
	} {
		f.Add(s)
	}
	key := testKey(1)
	f.Fuzz(func(t *testing.T, spec string) {
		format, err := ParseFormat(spec)
		if err != nil {
			if !errors.Is(err, idforge.ErrInvalidArgument) {
				t.Fatalf("ParseFormat(%q): %v does not wrap ErrInvalidArgument", spec, err)
			}
			return
		}
		canon := format.String()
		again, err := ParseFormat(canon)
		if err != nil || again.String() != canon {
			t.Fatalf("ParseFormat(%q).String() = %q, which parses to %q, %v", spec, canon, again.String(), err)
		}
		limit := int64(1<<63 - 1)
		if format.Bits() > 0 {
			if format, err = format.WithKey(key); err != nil {
				t.Fatalf("WithKey: %v", err)
			}
			limit = format.Permute.Max()
		}
		for _, v := range []int64{0, 1, limit / 2, limit} {
			s, err := format.Encode(v)
			if err != nil {
				t.Fatalf("%q: Encode(%d): %v", canon, v, err)
			}
			if d, err := format.Decode(s); err != nil || d != v {
				t.Fatalf("%q: Decode(%q) = %d, %v; want %d", canon, s, d, err, v)
			}
		}
	})
}

// decoder is one Decode function under fuzzing, with its Encode.
type decoder struct {
	name   string
	decode func(string) (int64, error)
	encode func(int64) (string, error)
}

func fuzzDecoders(tb testing.TB) []decoder {
	tb.Helper()
	var ds []decoder
	for _, s := range []Base62Settings{{}, {MinLength: 7}, {Alphabet: customBase62, MinLength: 3}} {
		b := mustBase62(tb, s)
		ds = append(ds, decoder{"base62", b.Decode, b.Encode})
	}
	for _, s := range []SqidsSettings{{}, {MinLength: 10}, {Alphabet: "abc", Blocklist: []string{}}} {
		q := mustSqids(tb, s)
		ds = append(ds, decoder{"sqids", q.Decode, q.Encode})
	}
	for _, spec := range []string{"", "hex:min=4", "feistel:bits=40+base62:min=7", "feistel:bits=63+sqids", "feistel:bits=20"} {
		f, err := ParseFormat(spec)
		if err != nil {
			tb.Fatal(err)
		}
		if f.Bits() > 0 {
			f, _ = f.WithKey(testKey(1))
		}
		ds = append(ds, decoder{spec, f.Decode, f.Encode})
	}
	return ds
}

// FuzzDecode checks every Decode (Base62, Sqids, Format) on arbitrary
// strings: no panic, errors wrap idforge.ErrInvalidArgument, and whatever
// decodes is non-negative and is exactly what Encode gives for it.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		"", "0", "00", "G9", "00000G9", "zzzzzzz", "AzL8n0Y58m7", "AzL8n0Y58m8", "bM", "aho1e", "JExTR",
		"86Rf07", "abcabcabc", "3e9", "003e9", "9223372036854775807", "9223372036854775808", "-1", "+1", "\xff",
	} {
		f.Add(s)
	}
	decoders := fuzzDecoders(f)
	f.Fuzz(func(t *testing.T, s string) {
		for _, d := range decoders {
			v, err := d.decode(s)
			if err != nil {
				if !errors.Is(err, idforge.ErrInvalidArgument) {
					t.Fatalf("%s: Decode(%q): %v does not wrap ErrInvalidArgument", d.name, s, err)
				}
				continue
			}
			if v < 0 {
				t.Fatalf("%s: Decode(%q) = %d, negative", d.name, s, v)
			}
			if again, err := d.encode(v); err != nil || again != s {
				t.Fatalf("%s: Decode(%q) = %d, which encodes as %q, %v", d.name, s, v, again, err)
			}
		}
	})
}

// FuzzPermutation checks that any key and width either is rejected with
// ErrInvalidArgument or gives a permutation that keeps v in range and
// round-trips it.
func FuzzPermutation(f *testing.F) {
	f.Add(testKey(1), 40, int64(1001))
	f.Add(testKey(2), 63, int64(1<<62))
	f.Add(make([]byte, MinKeyLen), 1, int64(1))
	f.Add([]byte("short"), 40, int64(0))
	f.Fuzz(func(t *testing.T, key []byte, bits int, v int64) {
		p, err := New(key, bits)
		if err != nil {
			if !errors.Is(err, idforge.ErrInvalidArgument) {
				t.Fatalf("New(%d bits): %v does not wrap ErrInvalidArgument", bits, err)
			}
			return
		}
		if v < 0 || v > p.Max() {
			if _, err := p.Encode(v); !errors.Is(err, idforge.ErrInvalidArgument) {
				t.Fatalf("Encode(%d) with %d bits: %v, want ErrInvalidArgument", v, bits, err)
			}
			v &= p.Max()
		}
		c, err := p.Encode(v)
		if err != nil || c < 0 || c > p.Max() {
			t.Fatalf("Encode(%d) with %d bits = %d, %v", v, bits, c, err)
		}
		if d, err := p.Decode(c); err != nil || d != v {
			t.Fatalf("Decode(%d) with %d bits = %d, %v; want %d", c, bits, d, err, v)
		}
	})
}
