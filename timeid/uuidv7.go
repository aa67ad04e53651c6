package timeid

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/google/uuid"
	"github.com/idforge/idforge"
)

// counterBits is the width of the per-millisecond counter: all 12 bits of
// rand_a and the top 30 of rand_b, the most RFC 9562 §6.2 allows for a
// fixed-length dedicated counter. The 32 bits below it are fresh random
// bits in every ID.
const counterBits = 42

// UUIDv7 issues RFC 9562 version 7 UUIDs that strictly increase, as bytes
// and as strings (in the canonical lower-case form), in the order the
// generator returns them:
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                    unix_ts_ms (48 bits)                       |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|          unix_ts_ms           |  ver=7|  counter bits 41..30  |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|var|             counter bits 29..0                            |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                     random (32 bits)                          |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// This is the fixed-length dedicated counter of RFC 9562 §6.2 (method 1):
// in a new millisecond the 42-bit counter starts at a random value whose
// top bit is 0 (the rollover guard, leaving at least 2^41 IDs per
// millisecond), and each further ID in that millisecond adds one. If the
// counter ever overflows, the timestamp moves one millisecond ahead of the
// clock and the counter is seeded again, as §6.2 allows.
//
// When the clock goes backwards, the generator keeps the timestamp of its
// last ID and counts on: IDs keep increasing, and carry that timestamp
// until the clock passes it again. It never waits and never refuses (only
// a time outside 1970..10889 is an error). Order is kept within one
// generator only; uniqueness across generators and restarts rests on the
// random bits: a 41-bit random counter start per millisecond and 32 fresh
// random bits in every ID.
//
// A UUIDv7 is safe for concurrent use; randomness comes from a ChaCha8
// stream seeded from the operating system.
type UUIDv7 struct {
	gen[uuid.UUID] // Next and NextN; next makes one UUID

	rng     *rand.ChaCha8
	ms      int64  // timestamp of the last ID, -1 before the first
	counter uint64 // counter of the last ID
}

// NewUUIDv7 returns a UUIDv7 generator. It returns no error today; the
// error is there for settings to come.
func NewUUIDv7(s Settings) (*UUIDv7, error) {
	g := &UUIDv7{rng: newRand(), ms: -1}
	g.clock, g.one = s.clock(), g.next
	return g, nil
}

// Time returns the time id carries; see UUIDv7Time.
func (g *UUIDv7) Time(id string) (time.Time, error) { return UUIDv7Time(id) }

// next makes one UUID at the clock reading ms; g.mu is held.
func (g *UUIDv7) next(ms int64) (uuid.UUID, error) {
	switch {
	case ms > g.ms:
		g.ms, g.counter = ms, g.seed()
	case g.counter < 1<<counterBits-1:
		g.counter++ // the same millisecond, or the clock went back
	default:
		if g.ms >= maxMS {
			return uuid.UUID{}, fmt.Errorf("%w: the counter of the last millisecond a UUIDv7 holds is used up", idforge.ErrLayoutExpired)
		}
		g.ms, g.counter = g.ms+1, g.seed()
	}
	var u uuid.UUID
	binary.BigEndian.PutUint64(u[0:8], uint64(g.ms)<<16|0x7<<12|g.counter>>30)
	binary.BigEndian.PutUint64(u[8:16], 0b10<<62|(g.counter&(1<<30-1))<<32|g.rng.Uint64()>>32)
	return u, nil
}

// seed returns a random counter start with its top bit clear.
func (g *UUIDv7) seed() uint64 { return g.rng.Uint64() >> (64 - counterBits + 1) }

// ParseUUIDv7 parses a version 7 UUID in any form github.com/google/uuid
// reads (canonical, upper or lower case, with or without hyphens, braces
// or a urn:uuid: prefix). It returns an error wrapping
// idforge.ErrInvalidArgument when s is not a UUID, or is one of another
// version or variant.
func ParseUUIDv7(s string) (uuid.UUID, error) {
	u, err := uuid.Parse(s)
	if err != nil {
		return uuid.UUID{}, fmt.Errorf("%w: %q is not a UUID: %v", idforge.ErrInvalidArgument, clip(s), err)
	}
	if u.Version() != 7 || u.Variant() != uuid.RFC4122 {
		return uuid.UUID{}, fmt.Errorf("%w: %q is a UUID of version %d, variant %s, not a version 7 UUID", idforge.ErrInvalidArgument, clip(s), u.Version(), u.Variant())
	}
	return u, nil
}

// UUIDv7Time returns the Unix millisecond a version 7 UUID carries, in
// UTC. Errors are those of ParseUUIDv7.
func UUIDv7Time(s string) (time.Time, error) {
	u, err := ParseUUIDv7(s)
	if err != nil {
		return time.Time{}, err
	}
	ms := int64(binary.BigEndian.Uint64(u[0:8]) >> 16)
	return time.UnixMilli(ms).UTC(), nil
}

// clip cuts s to a readable length for an error message.
func clip(s string) string {
	if len(s) > 48 {
		return s[:48] + "…"
	}
	return s
}
