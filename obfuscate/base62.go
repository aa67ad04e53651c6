package obfuscate

import (
	"cmp"
	"fmt"
	"math"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/chars"
)

// DefaultBase62Alphabet is the alphabet Base62 uses unless told otherwise:
// digits, then upper-case, then lower-case letters. It is in ASCII order,
// so strings of equal length sort like the numbers they encode.
const DefaultBase62Alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// MaxMinLength is the largest minimum length Base62 (and the decimal and
// hex forms of Format) pad to.
const MaxMinLength = 64

// Base62Settings configures a Base62 codec. The zero value is the default
// alphabet without padding.
type Base62Settings struct {
	// Alphabet is the 62 digits in order of value: 62 distinct printable
	// ASCII characters (no space). Its first character is the zero digit
	// used for padding. Empty means DefaultBase62Alphabet.
	Alphabet string
	// MinLength pads shorter encodings on the left with the zero digit,
	// 0 to MaxMinLength. Zero means no padding. Padding every ID to the
	// length of the largest one (e.g. 7 for values below 2^40) keeps
	// permuted IDs from varying in length.
	MinLength int
}

// Base62 writes non-negative int64 values in base 62 and reads them back.
// Every value has exactly one encoding: Decode accepts only what Encode
// produces, so an ID cannot be spelt in two ways. A Base62 is immutable
// and safe for concurrent use.
type Base62 struct {
	d digits
}

// NewBase62 returns a Base62 codec. It returns an error wrapping
// idforge.ErrInvalidArgument when the alphabet is not 62 distinct
// printable ASCII characters or MinLength is outside [0, MaxMinLength].
func NewBase62(s Base62Settings) (*Base62, error) {
	alphabet := cmp.Or(s.Alphabet, DefaultBase62Alphabet)
	// Characters first: an alphabet is counted in characters only once
	// they are known to be ASCII.
	if err := checkAlphabet("base62", alphabet, 62); err != nil {
		return nil, err
	}
	if len(alphabet) != 62 {
		return nil, fmt.Errorf("%w: base62: alphabet has %d characters, want 62", idforge.ErrInvalidArgument, len(alphabet))
	}
	d, err := newDigits("base62", alphabet, s.MinLength)
	if err != nil {
		return nil, err
	}
	return &Base62{d: d}, nil
}

// Encode returns v in base 62. It returns an error wrapping
// idforge.ErrInvalidArgument when v is negative.
func (b *Base62) Encode(v int64) (string, error) {
	var buf [MaxMinLength]byte
	out, err := b.AppendEncode(buf[:0], v)
	return string(out), err
}

// AppendEncode appends v in base 62 to dst and returns the extended
// buffer; it does not allocate when dst has room. It returns an error
// wrapping idforge.ErrInvalidArgument when v is negative.
func (b *Base62) AppendEncode(dst []byte, v int64) ([]byte, error) {
	if v < 0 {
		return dst, fmt.Errorf("%w: base62: cannot encode negative %d", idforge.ErrInvalidArgument, v)
	}
	return b.d.appendEncode(dst, uint64(v)), nil
}

// Decode returns the value s encodes. It returns an error wrapping
// idforge.ErrInvalidArgument when s is empty, has a character outside the
// alphabet, is shorter than MinLength, has a superfluous leading zero
// digit, or encodes a value above math.MaxInt64.
func (b *Base62) Decode(s string) (int64, error) {
	v, err := b.d.decode(s)
	return int64(v), err
}

// digits is a positional codec for any alphabet of 2 to 94 printable
// ASCII characters; Base62, and Format's decimal and hex forms, are
// digits with particular alphabets.
type digits struct {
	name     string // for error messages and Format.String
	alphabet string
	base     uint64
	min      int
	index    [256]int8 // value of each byte, -1 for bytes outside the alphabet
	maxLen   int       // longest canonical encoding of math.MaxInt64
}

func newDigits(name, alphabet string, min int) (digits, error) {
	d := digits{name: name, alphabet: alphabet, base: uint64(len(alphabet)), min: min}
	if err := checkCodec(name, alphabet, 2, min, MaxMinLength); err != nil {
		return digits{}, err
	}
	for i := range d.index {
		d.index[i] = -1
	}
	for i := 0; i < len(alphabet); i++ {
		d.index[alphabet[i]] = int8(i)
	}
	for v := uint64(math.MaxInt64); v > 0; v /= d.base {
		d.maxLen++
	}
	d.maxLen = max(d.maxLen, min)
	return d, nil
}

// checkCodec checks what every codec is given: a minimum length in
// [0, maxMin] (see checkAlphabet for the alphabet). Errors wrap
// idforge.ErrInvalidArgument and name the codec.
func checkCodec(name, alphabet string, minLen, min, maxMin int) error {
	if min < 0 || min > maxMin {
		return fmt.Errorf("%w: %s: minimum length %d, want 0 to %d", idforge.ErrInvalidArgument, name, min, maxMin)
	}
	return checkAlphabet(name, alphabet, minLen)
}

// checkAlphabet reports whether alphabet has at least minLen distinct
// printable ASCII characters and no space.
func checkAlphabet(name, alphabet string, minLen int) error {
	if r, refused := chars.FirstRefused(alphabet, printableASCII); refused {
		return fmt.Errorf("%w: %s: alphabet %s is not allowed; want printable ASCII without space", idforge.ErrInvalidArgument, name, r)
	}
	if len(alphabet) < minLen {
		return fmt.Errorf("%w: %s: alphabet has %d characters, want at least %d", idforge.ErrInvalidArgument, name, len(alphabet), minLen)
	}
	var seen [128]bool
	for i := 0; i < len(alphabet); i++ {
		c := alphabet[i]
		if seen[c] {
			return fmt.Errorf("%w: %s: alphabet has %q twice", idforge.ErrInvalidArgument, name, c)
		}
		seen[c] = true
	}
	return nil
}

// printableASCII reports whether c may appear in an alphabet or an
// option value: printable ASCII, no space.
func printableASCII(c rune) bool { return ' ' < c && c <= '~' }

func (d *digits) appendEncode(dst []byte, v uint64) []byte {
	var buf [MaxMinLength]byte // 64 ≥ the 63 binary digits of MaxInt64
	i := len(buf)
	for {
		i--
		buf[i] = d.alphabet[v%d.base]
		v /= d.base
		if v == 0 {
			break
		}
	}
	for n := len(buf) - i; n < d.min; n++ {
		dst = append(dst, d.alphabet[0])
	}
	return append(dst, buf[i:]...)
}

func (d *digits) decode(s string) (uint64, error) {
	switch {
	case s == "":
		return 0, fmt.Errorf("%w: %s: empty", idforge.ErrInvalidArgument, d.name)
	case len(s) > d.maxLen:
		return 0, fmt.Errorf("%w: %s: %s is %d characters, at most %d allowed", idforge.ErrInvalidArgument, d.name, clip(s), len(s), d.maxLen)
	case len(s) < d.min:
		return 0, fmt.Errorf("%w: %s: %s is shorter than the minimum length %d", idforge.ErrInvalidArgument, d.name, clip(s), d.min)
	case len(s) > max(d.min, 1) && s[0] == d.alphabet[0]:
		return 0, fmt.Errorf("%w: %s: %s has a superfluous leading zero digit", idforge.ErrInvalidArgument, d.name, clip(s))
	}
	const limit = math.MaxInt64
	var v uint64
	for i := 0; i < len(s); i++ {
		x := d.index[s[i]]
		if x < 0 {
			return 0, fmt.Errorf("%w: %s: %s: %q at %d is not a digit of the alphabet", idforge.ErrInvalidArgument, d.name, clip(s), s[i], i)
		}
		if v > (limit-uint64(x))/d.base {
			return 0, fmt.Errorf("%w: %s: %s is above the largest int64", idforge.ErrInvalidArgument, d.name, clip(s))
		}
		v = v*d.base + uint64(x)
	}
	return v, nil
}

// clip quotes s for an error message, cut to a readable length.
func clip(s string) string {
	const n = 40
	if len(s) > n {
		return fmt.Sprintf("%q…", s[:n])
	}
	return fmt.Sprintf("%q", s)
}
