package timeid

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/idforge/idforge"
	"github.com/oklog/ulid/v2"
)

// ULID issues ULIDs (github.com/oklog/ulid/v2): a 48-bit Unix millisecond
// timestamp and 80 bits of entropy, written as 26 upper-case Crockford
// base32 characters that sort like the IDs. They strictly increase in the order
// the generator returns them.
//
// In a new millisecond the entropy is 80 fresh random bits; within one
// millisecond oklog's monotonic entropy adds a random amount in [1, 2^32)
// to the previous entropy, so consecutive IDs are ordered but still hard
// to guess. When that addition would overflow 80 bits (typically after
// about 2^48 IDs in one millisecond), the timestamp moves one millisecond
// ahead of the clock.
//
// When the clock goes backwards, the generator keeps the timestamp of its
// last ID and goes on adding to the entropy: IDs keep increasing and carry
// that timestamp until the clock passes it again. (oklog's monotonic
// entropy alone would start afresh at the earlier time, breaking the
// order.) It never waits and never refuses (only a time outside
// 1970..10889 is an error). Order is kept within one generator only;
// uniqueness across generators and restarts rests on the random entropy.
//
// A ULID is safe for concurrent use: the monotonic entropy, which is not,
// is guarded by a mutex. Randomness comes from a ChaCha8 stream seeded
// from the operating system.
type ULID struct {
	gen[ulid.ULID] // Next and NextN; next makes one ULID

	entropy *ulid.MonotonicEntropy
	ms      uint64    // timestamp of the last ID
	buf     ulid.ULID // scratch space for next
}

// NewULID returns a ULID generator. It returns no error today; the error
// is there for settings to come.
func NewULID(s Settings) (*ULID, error) {
	return newULID(s, newRand()), nil
}

// newULID takes the entropy source as a test seam.
func newULID(s Settings, entropy io.Reader) *ULID {
	g := &ULID{entropy: ulid.Monotonic(entropy, 0)}
	g.clock, g.one = s.clock(), g.next
	return g
}

// Time returns the time id carries; see ULIDTime.
func (g *ULID) Time(id string) (time.Time, error) { return ULIDTime(id) }

// next makes one ULID at the clock reading now; g.mu is held.
func (g *ULID) next(now int64) (ulid.ULID, error) {
	ms := max(uint64(now), g.ms)
	for {
		// What ulid.New does, but into g.buf: through ulid.New the ID
		// escapes to the heap, one allocation per ID.
		id := &g.buf
		err := id.SetTime(ms)
		if err == nil {
			err = g.entropy.MonotonicRead(ms, id[6:])
		}
		switch {
		case err == nil:
			g.ms = ms
			return *id, nil
		case errors.Is(err, ulid.ErrMonotonicOverflow) && ms < maxMS:
			ms++ // a new millisecond starts with fresh entropy
		case errors.Is(err, ulid.ErrMonotonicOverflow), errors.Is(err, ulid.ErrBigTime):
			return ulid.ULID{}, fmt.Errorf("%w: %v", idforge.ErrLayoutExpired, err)
		default:
			return ulid.ULID{}, fmt.Errorf("timeid: ulid: %w", err)
		}
	}
}

// ParseULID parses a ULID: 26 Crockford base32 characters in either case.
// It returns an error wrapping idforge.ErrInvalidArgument when s has
// another length, a character outside the alphabet, or a value above
// 128 bits.
func ParseULID(s string) (ulid.ULID, error) {
	id, err := ulid.ParseStrict(s)
	if err != nil {
		return ulid.ULID{}, fmt.Errorf("%w: %q is not a ULID: %v", idforge.ErrInvalidArgument, clip(s), err)
	}
	return id, nil
}

// ULIDTime returns the Unix millisecond a ULID carries, in UTC. Errors
// are those of ParseULID.
func ULIDTime(s string) (time.Time, error) {
	id, err := ParseULID(s)
	if err != nil {
		return time.Time{}, err
	}
	return ulid.Time(id.Time()).UTC(), nil
}
