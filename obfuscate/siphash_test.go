package obfuscate

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// sipHashRef is a plain SipHash-2-4 of any message, written for clarity
// to check sipHash64 against.
func sipHashRef(k0, k1 uint64, msg []byte) uint64 {
	v0 := k0 ^ 0x736f6d6570736575
	v1 := k1 ^ 0x646f72616e646f6d
	v2 := k0 ^ 0x6c7967656e657261
	v3 := k1 ^ 0x7465646279746573
	compress := func(m uint64) {
		v3 ^= m
		v0, v1, v2, v3 = sipRound(v0, v1, v2, v3)
		v0, v1, v2, v3 = sipRound(v0, v1, v2, v3)
		v0 ^= m
	}
	n := len(msg)
	for len(msg) >= 8 {
		compress(binary.LittleEndian.Uint64(msg))
		msg = msg[8:]
	}
	var last [8]byte
	copy(last[:], msg)
	last[7] = byte(n)
	compress(binary.LittleEndian.Uint64(last[:]))
	v2 ^= 0xff
	for range 4 {
		v0, v1, v2, v3 = sipRound(v0, v1, v2, v3)
	}
	return v0 ^ v1 ^ v2 ^ v3
}

// TestSipHashVectors checks against the reference vectors of the SipHash
// paper and its reference code: key 00 01 … 0f, message 00 01 … (n-1).
func TestSipHashVectors(t *testing.T) {
	k0, k1 := uint64(0x0706050403020100), uint64(0x0f0e0d0c0b0a0908)
	msg := make([]byte, 16)
	for i := range msg {
		msg[i] = byte(i)
	}
	for _, tc := range []struct {
		n    int
		want uint64
	}{
		{0, 0x726fdb47dd0e0e31},
		{1, 0x74f839c593dc67fd},
		{2, 0x0d6c8009d9a94f5a},
		{8, 0x93f5f5799a932462},
		{15, 0xa129ca6149be45e5}, // the paper's Appendix A example
	} {
		if got := sipHashRef(k0, k1, msg[:tc.n]); got != tc.want {
			t.Errorf("SipHash-2-4 of %d bytes = %#016x, want %#016x", tc.n, got, tc.want)
		}
	}
	if got := sipHash64(k0, k1, 0x0706050403020100); got != 0x93f5f5799a932462 {
		t.Errorf("sipHash64 of 00…07 = %#016x, want 0x93f5f5799a932462", got)
	}
}

// TestSipHash64MatchesReference checks the one-block fast path against the
// general function on random keys and messages.
func TestSipHash64MatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var b [8]byte
	for range 10000 {
		k0, k1, m := r.Uint64(), r.Uint64(), r.Uint64()
		binary.LittleEndian.PutUint64(b[:], m)
		if got, want := sipHash64(k0, k1, m), sipHashRef(k0, k1, b[:]); got != want {
			t.Fatalf("sipHash64(%#x, %#x, %#x) = %#x, want %#x", k0, k1, m, got, want)
		}
	}
}
