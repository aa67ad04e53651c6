package chars

import (
	"testing"
	"unicode/utf8"
)

func isASCIILetter(c rune) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

func TestFirstRefused(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"订单", "character 1 '订' (U+8BA2)"},
		{"ab单", "character 3 '单' (U+5355)"},
		{"aé", "character 2 'é' (U+00E9)"},
		{"a b", "character 2 ' ' (U+0020)"},
		{"a\x00", `character 2 '\x00' (U+0000)`},
		{"a\xe8x", "character 2 (byte 0xE8, which is not UTF-8)"},
	} {
		got, ok := FirstRefused(tc.in, isASCIILetter)
		if !ok || got.String() != tc.want {
			t.Errorf("FirstRefused(%q) = %q, %v; want %q", tc.in, got, ok, tc.want)
		}
	}
	if got, ok := FirstRefused("abc", isASCIILetter); ok {
		t.Errorf("FirstRefused(abc) = %v, want none", got)
	}
}

// FuzzFirstRefused checks for every string that the character named is
// the one at that position, counted in characters.
func FuzzFirstRefused(f *testing.F) {
	for _, s := range []string{"", "abc", "订单", "a\xffb", "ab单c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, ok := FirstRefused(s, isASCIILetter)
		if !ok {
			for _, c := range s {
				if !isASCIILetter(c) {
					t.Fatalf("%q: %q allowed", s, c)
				}
			}
			return
		}
		pos := 0
		for i, c := range s {
			pos++
			if pos < r.Pos {
				if !isASCIILetter(c) {
					t.Fatalf("%q: character %d %q was refused later than it should", s, pos, c)
				}
				continue
			}
			if r.NotUTF8 {
				if c != utf8.RuneError || s[i] != r.Byte {
					t.Fatalf("%q: %v names byte 0x%02X, but position %d holds %q", s, r, r.Byte, pos, c)
				}
			} else if c != r.Char {
				t.Fatalf("%q: %v, but position %d holds %q", s, r, pos, c)
			}
			return
		}
		t.Fatalf("%q: %v is past the end", s, r)
	})
}
