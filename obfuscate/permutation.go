package obfuscate

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"fmt"

	"github.com/idforge/idforge"
)

// Rounds is the number of Feistel rounds a Permutation runs. Four rounds
// already make a strong pseudorandom permutation in the Luby–Rackoff
// sense, but that bound is in terms of the half width: for a 40-bit ID the
// halves are 20 bits and four rounds only resist about 2^10 chosen
// inputs. More rounds push the bound towards the full domain (Patarin), so
// Rounds follows NIST's FF1 format-preserving cipher, which uses ten
// rounds on domains of this size. Changing it would change every encoded
// ID, so it is a constant, not a setting. It must stay even (see encode).
const Rounds = 10

// MinKeyLen is the shortest key New accepts, in bytes (128 bits). Use
// random bytes, e.g. from `openssl rand -hex 32`, not a word or a phrase:
// whoever guesses the key can decode and count every ID.
const MinKeyLen = 16

// MaxBits is the widest permutation: every non-negative int64.
const MaxBits = 63

// keyLabel separates the key derived for the round function from any
// other use of the same configured key.
const keyLabel = "idforge/obfuscate/feistel-siphash24/v1"

// Permutation is a keyed, reversible shuffle of the integers [0, 2^bits):
// Encode maps each of them to a distinct integer of the same range and
// Decode maps it back. Without the key, consecutive inputs give outputs
// that look unrelated, so outsiders can learn neither the order in which
// IDs were issued nor how many were.
//
// It is an alternating (unbalanced when bits is odd) Feistel network of
// Rounds rounds over exactly bits bits, so every output is in range without
// cycle-walking. The round function is SipHash-2-4 under a 128-bit key
// derived from the configured key with HMAC-SHA256. The same key and width
// always give the same permutation; different keys or widths give
// unrelated ones.
//
// A Permutation is immutable and safe for concurrent use; Encode and
// Decode do not allocate.
type Permutation struct {
	k0, k1 uint64
	bits   uint   // total width
	hi, lo uint   // widths of the high (left) and low (right) halves
	size   uint64 // 1 << bits
}

// New returns the permutation of [0, 2^bits) that key selects. It returns
// an error wrapping idforge.ErrInvalidArgument when bits is outside
// [1, MaxBits] or key is shorter than MinKeyLen bytes.
func New(key []byte, bits int) (*Permutation, error) {
	if bits < 1 || bits > MaxBits {
		return nil, fmt.Errorf("%w: obfuscate: %d bits, want 1 to %d", idforge.ErrInvalidArgument, bits, MaxBits)
	}
	if len(key) < MinKeyLen {
		return nil, fmt.Errorf("%w: obfuscate: key is %d bytes, want at least %d random bytes", idforge.ErrInvalidArgument, len(key), MinKeyLen)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(keyLabel))
	sum := mac.Sum(nil)
	w := uint(bits)
	return &Permutation{
		k0:   binary.LittleEndian.Uint64(sum[0:8]),
		k1:   binary.LittleEndian.Uint64(sum[8:16]),
		bits: w,
		hi:   w - w/2,
		lo:   w / 2,
		size: 1 << w,
	}, nil
}

// Bits returns the width of the permutation: it permutes [0, 2^Bits()).
func (p *Permutation) Bits() int { return int(p.bits) }

// Max returns the largest value the permutation accepts and returns,
// 2^Bits() - 1.
func (p *Permutation) Max() int64 { return int64(p.size - 1) }

// Encode returns the image of v. It returns an error wrapping
// idforge.ErrInvalidArgument when v is outside [0, 2^Bits()).
func (p *Permutation) Encode(v int64) (int64, error) {
	if uint64(v) >= p.size {
		return 0, p.rangeError("encode", v)
	}
	return int64(p.encode(uint64(v))), nil
}

// Decode returns the value whose image is c: Decode(Encode(v)) == v. It
// returns an error wrapping idforge.ErrInvalidArgument when c is outside
// [0, 2^Bits()).
func (p *Permutation) Decode(c int64) (int64, error) {
	if uint64(c) >= p.size {
		return 0, p.rangeError("decode", c)
	}
	return int64(p.decode(uint64(c))), nil
}

func (p *Permutation) rangeError(op string, v int64) error {
	return fmt.Errorf("%w: obfuscate: cannot %s %d: outside [0, 2^%d)", idforge.ErrInvalidArgument, op, v, p.bits)
}

// encode runs the network forwards. The state is a pair (l, r) of widths
// (wl, wr), starting with the high and low halves of x. A round maps it
// to (r, l XOR F(r)), whose widths are (wr, wl): the halves trade places
// and widths, so with unequal halves (odd bits) every value stays exactly
// in range. After an even number of rounds the widths are back where
// they started.
func (p *Permutation) encode(x uint64) uint64 {
	wl, wr := p.hi, p.lo
	l, r := x>>wr, x&mask(wr)
	for i := range uint64(Rounds) {
		l, r = r, l^(p.round(i, r)&mask(wl))
		wl, wr = wr, wl
	}
	return l<<wr | r
}

// decode undoes encode's rounds in reverse order: from (l', r') =
// (r, l XOR F(r)) it recovers (l, r) = (r' XOR F(l'), l').
func (p *Permutation) decode(c uint64) uint64 {
	wl, wr := p.hi, p.lo
	l, r := c>>wr, c&mask(wr)
	for i := uint64(Rounds); i > 0; i-- {
		// wr is the width the left half had before round i-1.
		l, r = r^(p.round(i-1, l)&mask(wr)), l
		wl, wr = wr, wl
	}
	return l<<wr | r
}

// round is the round function: a PRF of the round number, the width and a
// half (at most 32 bits), so that rounds and widths never share inputs.
func (p *Permutation) round(i, half uint64) uint64 {
	return sipHash64(p.k0, p.k1, half|i<<32|uint64(p.bits)<<40)
}

// mask returns a mask of the low w bits (w ≤ 32 here).
func mask(w uint) uint64 { return 1<<w - 1 }
