package obfuscate

import (
	"errors"
	"testing"

	"github.com/idforge/idforge"
)

// testKey returns a distinct 32-byte key for each n.
func testKey(n byte) []byte {
	k := make([]byte, 32)
	for i := range k {
		k[i] = byte(i)*7 + n*31 + 1
	}
	return k
}

// mustNew returns the permutation of key and bits or stops the test.
func mustNew(tb testing.TB, key []byte, bits int) *Permutation {
	tb.Helper()
	p, err := New(key, bits)
	if err != nil {
		tb.Fatalf("New(%d bits): %v", bits, err)
	}
	return p
}

// wantInvalid fails unless err wraps idforge.ErrInvalidArgument.
func wantInvalid(tb testing.TB, err error, what string) {
	tb.Helper()
	if !errors.Is(err, idforge.ErrInvalidArgument) {
		tb.Errorf("%s: error = %v, want one wrapping ErrInvalidArgument", what, err)
	}
}
