package timeid

import (
	"context"
	crand "crypto/rand"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/idforge/idforge"
)

// UUIDv4 issues RFC 9562 version 4 UUIDs: 122 bits from crypto/rand, the
// other 6 the version (0100) and the variant (10), written as 36
// lower-case characters: f47ac10b-58cc-4372-a567-0e02b2c3d479.
//
// Unlike the other kinds its IDs carry no time and follow no order, so
// they say nothing about when or in what order they were made, and
// scatter over a database index. Their uniqueness is probabilistic and
// rests on crypto/rand alone, across nodes and restarts alike: among n
// IDs the chance that some two are equal is below n²/2^123, about 10^-13
// after a trillion (10^12) IDs and 10^-7 after 10^15; no ID is ever
// checked against another. NextN draws a whole batch in one read.
//
// A UUIDv4 is safe for concurrent use.
type UUIDv4 struct{}

var _ Generator = UUIDv4{}

// NewUUIDv4 returns a UUIDv4 generator. It takes Settings like the other
// kinds, but reads no clock, and returns no error today.
func NewUUIDv4(Settings) (UUIDv4, error) { return UUIDv4{}, nil }

// Next returns one version 4 UUID, or ctx's error when ctx is done.
func (g UUIDv4) Next(ctx context.Context) (string, error) {
	var u uuid.UUID
	if err := ctx.Err(); err != nil {
		return "", err
	}
	_, _ = crand.Read(u[:]) // never fails (Go ≥ 1.24 crashes instead)
	return asUUIDv4(u).String(), nil
}

// NextN returns n version 4 UUIDs (1 ≤ n ≤ MaxBatch), in no order. It
// returns an error wrapping idforge.ErrInvalidCount for another n, and
// ctx's error when ctx is done.
func (g UUIDv4) NextN(ctx context.Context, n int) ([]string, error) {
	if err := checkN(n); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	random := make([]byte, 16*n)
	_, _ = crand.Read(random)
	ids := make([]string, n)
	for i := range ids {
		ids[i] = asUUIDv4(uuid.UUID(random[16*i:])).String()
	}
	return ids, nil
}

// Time returns an error wrapping idforge.ErrInvalidArgument: a version 4
// UUID carries no time.
func (g UUIDv4) Time(id string) (time.Time, error) {
	return time.Time{}, fmt.Errorf("%w: %q: a version 4 UUID is random and carries no time", idforge.ErrInvalidArgument, clip(id))
}

// asUUIDv4 sets the version and variant bits of random and keeps its
// other 122 bits.
func asUUIDv4(random uuid.UUID) uuid.UUID {
	random[6] = random[6]&0x0f | 0x40
	random[8] = random[8]&0x3f | 0x80
	return random
}
