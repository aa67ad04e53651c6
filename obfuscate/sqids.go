package obfuscate

import (
	"cmp"
	"fmt"
	"math"

	"github.com/idforge/idforge"
	"github.com/sqids/sqids-go"
)

// DefaultSqidsAlphabet is the alphabet Sqids uses unless told otherwise
// (the Sqids project's default).
const DefaultSqidsAlphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// MaxSqidsMinLength is the largest minimum length Sqids pads to.
const MaxSqidsMinLength = 255

// SqidsSettings configures a Sqids codec. The zero value is the Sqids
// defaults: the default alphabet, no padding, the default blocklist.
type SqidsSettings struct {
	// Alphabet is at least 3 distinct printable ASCII characters (no
	// space); Sqids shuffles it, so its order matters but is not the order
	// of value. Empty means DefaultSqidsAlphabet.
	Alphabet string
	// MinLength pads shorter IDs to this length, 0 to MaxSqidsMinLength.
	MinLength int
	// Blocklist lists words no ID may contain (an ID that would contain
	// one is re-encoded differently). Nil means the Sqids default list of
	// profanities; an empty, non-nil slice means no blocklist.
	Blocklist []string
}

// Sqids writes non-negative int64 values as short, URL-safe strings with
// the Sqids algorithm (github.com/sqids/sqids-go) and reads them back.
//
// Sqids is an encoding, not a secret: anyone who knows the alphabet can
// decode, and consecutive numbers give related strings. To hide order and
// volume, permute first (Format "feistel:bits=…+sqids").
//
// Decode accepts only the one string Encode produces for a value: Sqids
// itself decodes many other strings to the same number. A Sqids is safe
// for concurrent use; each call allocates.
type Sqids struct {
	s         *sqids.Sqids
	minLength int
}

// NewSqids returns a Sqids codec. It returns an error wrapping
// idforge.ErrInvalidArgument when the alphabet is not at least 3 distinct
// printable ASCII characters or MinLength is outside [0, MaxSqidsMinLength].
func NewSqids(s SqidsSettings) (*Sqids, error) {
	alphabet := cmp.Or(s.Alphabet, DefaultSqidsAlphabet)
	if err := checkCodec("sqids", alphabet, 3, s.MinLength, MaxSqidsMinLength); err != nil {
		return nil, err
	}
	q, err := sqids.New(sqids.Options{Alphabet: alphabet, MinLength: uint8(s.MinLength), Blocklist: s.Blocklist})
	if err != nil {
		return nil, fmt.Errorf("%w: sqids: %v", idforge.ErrInvalidArgument, err)
	}
	return &Sqids{s: q, minLength: s.MinLength}, nil
}

// Encode returns the Sqids string of v. It returns an error wrapping
// idforge.ErrInvalidArgument when v is negative, and an error when every
// variant of the string hits the blocklist (practically never).
func (q *Sqids) Encode(v int64) (string, error) {
	if v < 0 {
		return "", fmt.Errorf("%w: sqids: cannot encode negative %d", idforge.ErrInvalidArgument, v)
	}
	s, err := q.s.Encode([]uint64{uint64(v)})
	if err != nil {
		return "", fmt.Errorf("sqids: encode %d: %w", v, err)
	}
	return s, nil
}

// Decode returns the value s encodes. It returns an error wrapping
// idforge.ErrInvalidArgument unless s is exactly the string Encode gives
// for a value in [0, math.MaxInt64].
func (q *Sqids) Decode(s string) (int64, error) {
	// No canonical ID of one number is longer than the minimum length or
	// 1 + 64 digits (the longest, with a 3-character alphabet).
	if s == "" || len(s) > max(q.minLength, 65) {
		return 0, fmt.Errorf("%w: sqids: %s is not an ID of this alphabet", idforge.ErrInvalidArgument, clip(s))
	}
	ns := q.s.Decode(s)
	if len(ns) != 1 || ns[0] > math.MaxInt64 {
		return 0, fmt.Errorf("%w: sqids: %s is not an ID of one int64", idforge.ErrInvalidArgument, clip(s))
	}
	// Sqids reads padding, wrong separators and overflowing digits
	// leniently; only the canonical spelling is an ID.
	if again, err := q.s.Encode(ns); err != nil || again != s {
		return 0, fmt.Errorf("%w: sqids: %s is not the canonical ID of %d", idforge.ErrInvalidArgument, clip(s), ns[0])
	}
	return int64(ns[0]), nil
}
