package timeid

import (
	"context"
	crand "crypto/rand"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/idforge/idforge"
)

// Generator is what every generator provides: string IDs (for UUIDv7 and
// ULID, strictly increasing in the order one generator returns them) and
// the time an ID carries.
type Generator interface {
	// Next returns one ID.
	Next(ctx context.Context) (string, error)
	// NextN returns n IDs (1 ≤ n ≤ MaxBatch); strictly increasing but
	// for UUIDv4.
	NextN(ctx context.Context, n int) ([]string, error)
	// Time returns the time (to the millisecond) an ID of this kind
	// carries; for a UUIDv4, which carries none, an error.
	Time(id string) (time.Time, error)
}

var (
	_ Generator = (*UUIDv7)(nil)
	_ Generator = (*ULID)(nil)
)

// Kind names one of the ID kinds of this package.
type Kind string

// The kinds of ID.
const (
	// KindUUIDv7 is an RFC 9562 version 7 UUID, written as 36 lower-case
	// characters: 017f22e2-79b0-7cc3-98c4-dc0c0c07398f.
	KindUUIDv7 Kind = "uuidv7"
	// KindULID is a ULID, written as 26 Crockford base32 characters:
	// 01ARZ3NDEKTSV4RRFFQ69G5FAV.
	KindULID Kind = "ulid"
	// KindUUIDv4 is an RFC 9562 version 4 UUID, random, written as 36
	// lower-case characters: f47ac10b-58cc-4372-a567-0e02b2c3d479.
	KindUUIDv4 Kind = "uuidv4"
)

// MaxBatch is the largest n NextN accepts.
const MaxBatch = 1 << 20

// maxMS is the largest millisecond a 48-bit timestamp holds (year 10889).
const maxMS = 1<<48 - 1

// Settings configures a generator. The zero value uses the system clock.
type Settings struct {
	// Clock is the source of time; nil means idforge.SystemClock.
	Clock idforge.Clock
}

func (s Settings) clock() idforge.Clock {
	if s.Clock == nil {
		return idforge.SystemClock
	}
	return s.Clock
}

// ParseKind returns the Kind named s, or an error wrapping
// idforge.ErrInvalidArgument.
func ParseKind(s string) (Kind, error) {
	switch Kind(s) {
	case KindUUIDv7, KindULID, KindUUIDv4:
		return Kind(s), nil
	}
	return "", fmt.Errorf("%w: string ID kind %q (want %q, %q or %q)", idforge.ErrInvalidArgument, s, KindUUIDv7, KindULID, KindUUIDv4)
}

// New returns a generator of the given kind; an unknown kind is an error
// wrapping idforge.ErrInvalidArgument.
func New(kind Kind, s Settings) (Generator, error) {
	switch kind {
	case KindUUIDv7:
		return NewUUIDv7(s)
	case KindULID:
		return NewULID(s)
	case KindUUIDv4:
		return NewUUIDv4(s)
	}
	_, err := ParseKind(string(kind))
	return nil, err
}

// Time returns the time carried by id, a UUIDv7 or a ULID told apart by
// length (a ULID has 26 characters). Errors wrap
// idforge.ErrInvalidArgument.
func Time(id string) (time.Time, error) {
	if len(id) == 26 {
		return ULIDTime(id)
	}
	return UUIDv7Time(id)
}

// checkN validates a batch size.
func checkN(n int) error {
	if n < 1 || n > MaxBatch {
		return fmt.Errorf("%w: %d IDs asked for, want 1 to %d", idforge.ErrInvalidCount, n, MaxBatch)
	}
	return nil
}

// nowMS returns the clock's Unix time in milliseconds, or an error
// wrapping idforge.ErrLayoutExpired when 48 bits cannot hold it.
func nowMS(c idforge.Clock) (int64, error) {
	ms := c.Now().UnixMilli()
	if ms < 0 || ms > maxMS {
		return 0, fmt.Errorf("%w: time %d ms is outside the 48-bit range of a time-ordered ID", idforge.ErrLayoutExpired, ms)
	}
	return ms, nil
}

// newRand returns a ChaCha8 generator (a cryptographically strong stream)
// seeded from the operating system, so that IDs cannot be predicted from
// earlier ones and independent generators do not collide.
func newRand() *rand.ChaCha8 {
	var seed [32]byte
	_, _ = crand.Read(seed[:]) // never fails (Go ≥ 1.24 crashes instead)
	return rand.NewChaCha8(seed)
}

// gen is what both generators share: the clock, the lock, and Next and
// NextN around the generator's own way of making one ID.
type gen[T fmt.Stringer] struct {
	clock idforge.Clock
	mu    sync.Mutex
	// one makes one ID at the clock reading now (Unix ms); mu is held.
	one func(now int64) (T, error)
}

// Next returns one ID in its text form (see the generator's type). It
// returns ctx's error when ctx is done, and an error wrapping
// idforge.ErrLayoutExpired when the clock is outside what 48 bits of
// milliseconds hold.
func (g *gen[T]) Next(ctx context.Context) (string, error) {
	ids, err := g.issue(ctx, 1)
	if err != nil {
		return "", err
	}
	return ids[0], nil
}

// NextN returns n IDs, strictly increasing, issued under one lock. It
// returns an error wrapping idforge.ErrInvalidCount when n is outside
// [1, MaxBatch], and otherwise the errors of Next.
func (g *gen[T]) NextN(ctx context.Context, n int) ([]string, error) {
	if err := checkN(n); err != nil {
		return nil, err
	}
	return g.issue(ctx, n)
}

// issue checks ctx, reads the clock once (a batch counts up from that
// reading), makes n IDs under the lock and formats them outside it.
func (g *gen[T]) issue(ctx context.Context, n int) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	now, err := nowMS(g.clock)
	if err != nil {
		return nil, err
	}
	made := make([]T, n)
	g.mu.Lock()
	for i := range made {
		if made[i], err = g.one(now); err != nil {
			g.mu.Unlock()
			return nil, err
		}
	}
	g.mu.Unlock()
	ids := make([]string, n)
	for i, m := range made {
		ids[i] = m.String()
	}
	return ids, nil
}
