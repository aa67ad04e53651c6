package obfuscate

import (
	"math"
	"strings"
	"testing"
)

func mustBase62(tb testing.TB, s Base62Settings) *Base62 {
	tb.Helper()
	b, err := NewBase62(s)
	if err != nil {
		tb.Fatalf("NewBase62(%+v): %v", s, err)
	}
	return b
}

func TestBase62Known(t *testing.T) {
	b := mustBase62(t, Base62Settings{})
	for _, tc := range []struct {
		v    int64
		want string
	}{
		{0, "0"},
		{9, "9"},
		{10, "A"},
		{61, "z"},
		{62, "10"},
		{1001, "G9"},
		{62*62 - 1, "zz"},
		{math.MaxInt64, "AzL8n0Y58m7"},
	} {
		got, err := b.Encode(tc.v)
		if err != nil || got != tc.want {
			t.Errorf("Encode(%d) = %q, %v; want %q", tc.v, got, err, tc.want)
		}
		if v, err := b.Decode(tc.want); err != nil || v != tc.v {
			t.Errorf("Decode(%q) = %d, %v; want %d", tc.want, v, err, tc.v)
		}
	}
}

func TestBase62RoundTrip(t *testing.T) {
	custom := "zyxwvutsrqponmlkjihgfedcbaZYXWVUTSRQPONMLKJIHGFEDCBA9876543210"
	for _, s := range []Base62Settings{
		{},
		{MinLength: 7},
		{MinLength: 11},
		{MinLength: MaxMinLength},
		{Alphabet: custom},
		{Alphabet: custom, MinLength: 9},
	} {
		b := mustBase62(t, s)
		for _, v := range []int64{0, 1, 61, 62, 3843, 3844, 1 << 40, math.MaxInt64 - 1, math.MaxInt64} {
			str, err := b.Encode(v)
			if err != nil {
				t.Fatalf("%+v: Encode(%d): %v", s, v, err)
			}
			if len(str) < s.MinLength {
				t.Errorf("%+v: Encode(%d) = %q, shorter than %d", s, v, str, s.MinLength)
			}
			if got, err := b.Decode(str); err != nil || got != v {
				t.Errorf("%+v: Decode(%q) = %d, %v; want %d", s, str, got, err, v)
			}
		}
	}
}

func TestBase62Padding(t *testing.T) {
	b := mustBase62(t, Base62Settings{MinLength: 7})
	for _, tc := range []struct {
		v    int64
		want string
	}{
		{0, "0000000"},
		{1001, "00000G9"},
		{1<<40 - 1, "JMAIjoV"},
		{62*62*62*62*62*62*62 - 1, "zzzzzzz"},
		{62 * 62 * 62 * 62 * 62 * 62 * 62, "10000000"},
	} {
		if got, _ := b.Encode(tc.v); got != tc.want {
			t.Errorf("Encode(%d) = %q, want %q", tc.v, got, tc.want)
		}
	}
	// Padded strings sort like the numbers in the default alphabet.
	prev := ""
	for _, v := range []int64{0, 9, 10, 35, 36, 61, 62, 1 << 30, 1 << 40} {
		s, _ := b.Encode(v)
		if s <= prev {
			t.Errorf("Encode(%d) = %q sorts before %q", v, s, prev)
		}
		prev = s
	}
}

func TestBase62CustomAlphabet(t *testing.T) {
	alphabet := "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	b := mustBase62(t, Base62Settings{Alphabet: alphabet, MinLength: 3})
	for _, tc := range []struct {
		v    int64
		want string
	}{
		{0, "AAA"},
		{1, "AAB"},
		{61, "AA9"},
		{62, "ABA"},
	} {
		if got, _ := b.Encode(tc.v); got != tc.want {
			t.Errorf("Encode(%d) = %q, want %q", tc.v, got, tc.want)
		}
	}
	if _, err := b.Decode("AA!"); err == nil {
		t.Errorf("Decode accepted a character outside the alphabet")
	}
}

func TestBase62Rejects(t *testing.T) {
	for _, s := range []Base62Settings{
		{Alphabet: "0123456789"},
		{Alphabet: DefaultBase62Alphabet[:61] + "0"}, // a repeat
		{Alphabet: DefaultBase62Alphabet[:61] + " "},
		{Alphabet: DefaultBase62Alphabet[:61] + "\x7f"},
		{Alphabet: DefaultBase62Alphabet[:60] + "é"}, // 62 bytes, not ASCII
		{MinLength: -1},
		{MinLength: MaxMinLength + 1},
	} {
		_, err := NewBase62(s)
		wantInvalid(t, err, "NewBase62")
	}

	b := mustBase62(t, Base62Settings{})
	_, err := b.Encode(-1)
	wantInvalid(t, err, "Encode(-1)")
	for _, s := range []string{
		"",
		"00",           // leading zero digit
		"0G9",          // leading zero digit
		"AzL8n0Y58m8",  // MaxInt64 + 1
		"zzzzzzzzzzz",  // above MaxInt64
		"100000000000", // 12 digits
		"G-9",
		"G9 ",
		"\xffG",
		strings.Repeat("1", 1000),
	} {
		_, err := b.Decode(s)
		wantInvalid(t, err, "Decode("+clip(s)+")")
	}

	padded := mustBase62(t, Base62Settings{MinLength: 4})
	for _, s := range []string{"G9", "0G9", "00G9x", "000G9"} {
		_, err := padded.Decode(s)
		wantInvalid(t, err, "min 4: Decode("+s+")")
	}
	if v, err := padded.Decode("00G9"); err != nil || v != 1001 {
		t.Errorf("min 4: Decode(00G9) = %d, %v; want 1001", v, err)
	}
	if v, err := padded.Decode("10000"); err != nil || v != 62*62*62*62 {
		t.Errorf("min 4: Decode(10000) = %d, %v; want %d", v, err, 62*62*62*62)
	}
}

func TestBase62NoAllocations(t *testing.T) {
	b := mustBase62(t, Base62Settings{MinLength: 7})
	buf := make([]byte, 0, 16)
	s := "008M0kX"
	allocs := testing.AllocsPerRun(100, func() {
		_, _ = b.AppendEncode(buf[:0], 123456789)
		_, _ = b.Decode(s)
	})
	if allocs != 0 {
		t.Errorf("AppendEncode+Decode allocate %.1f times, want 0", allocs)
	}
}
