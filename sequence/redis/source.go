package redis

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/atomicmax"
	"github.com/idforge/idforge/internal/closeonce"
	"github.com/idforge/idforge/internal/redisconn"
	"github.com/idforge/idforge/sequence"
)

// SourceConfig configures a Source. Key is required; the zero value of
// every other field means its default.
type SourceConfig struct {
	// Key is the Redis key holding the counter.
	Key string
	// Start is the first value issued when NewSource creates the key
	// (default 1, at least 1).
	Start int64
	// NoCreate makes NewSource fail instead of creating a missing key.
	NoCreate bool
	// MinReplicas is how many replicas must have each INCR before its
	// value is handed out (Redis's WAIT); 0, the default, waits for
	// none. With Sentinel or a cluster set it to 1 or more, or a
	// fail-over that loses the latest increments repeats their values
	// (see the package documentation).
	MinReplicas int
	// WaitTimeout bounds the wait for replicas; after it Next fails with
	// idforge.ErrUnavailable and the value is never handed out (a gap).
	// Default 500ms.
	WaitTimeout time.Duration
}

// Source issues the values of one Redis counter: INCR, guarded so that a
// lost key is reported rather than restarted at 1 (see the package
// documentation). It is safe for concurrent use.
type Source struct {
	client goredis.UniversalClient
	w      redisconn.Writer
	owned  closeonce.Owned // the client, when the source opened it
	key    string
	// seen is the largest value this source has seen the key hold; every
	// INCR sent after it was seen must answer more.
	seen atomic.Int64
	// backwards counts the answers refused because they were not above
	// seen.
	backwards atomic.Int64
	closed    atomic.Bool
}

var _ sequence.Source = (*Source)(nil)

// incrIfExists increments KEYS[1] only if it exists, so that an evicted or
// flushed counter is noticed instead of silently restarting at 1. It
// answers the new value as GET's string: Lua's numbers are doubles, exact
// only up to 2^53, while strings carry every int64.
var incrIfExists = goredis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then
  return false
end
redis.call('INCR', KEYS[1])
return redis.call('GET', KEYS[1])`)

// NewSource returns a source on cfg.Key through client, which the caller
// keeps owning. A missing key is created (SET NX) so that the first value
// is cfg.Start, unless cfg.NoCreate is set, in which case NewSource
// returns an error wrapping sequence.ErrCounterLost. It returns an error
// wrapping idforge.ErrInvalidArgument for a bad configuration or a key
// that does not hold an integer.
func NewSource(ctx context.Context, client goredis.UniversalClient, cfg SourceConfig) (*Source, error) {
	if cfg.Key == "" {
		return nil, fmt.Errorf("%w: redis source: empty key", idforge.ErrInvalidArgument)
	}
	cfg.Start = cmp.Or(cfg.Start, 1)
	if cfg.Start < 1 {
		return nil, fmt.Errorf("%w: redis source %q: start %d is below 1", idforge.ErrInvalidArgument, cfg.Key, cfg.Start)
	}
	if cfg.MinReplicas < 0 || cfg.WaitTimeout < 0 {
		return nil, fmt.Errorf("%w: redis source %q: negative MinReplicas or WaitTimeout", idforge.ErrInvalidArgument, cfg.Key)
	}
	s := &Source{client: client, key: cfg.Key, w: writer(client, cfg.MinReplicas, cfg.WaitTimeout)}
	if !cfg.NoCreate {
		if err := client.SetNX(ctx, cfg.Key, cfg.Start-1, 0).Err(); err != nil {
			return nil, fmt.Errorf("redis source %q: create: %w", cfg.Key, err)
		}
	}
	v, err := client.Get(ctx, cfg.Key).Result()
	if errors.Is(err, goredis.Nil) {
		return nil, fmt.Errorf("%w: %w: redis source %q: the key does not exist; create it (above every value ever issued from it, if it was lost) or allow creation",
			sequence.ErrCounterLost, idforge.ErrUnavailable, cfg.Key)
	}
	if err != nil {
		return nil, fmt.Errorf("redis source %q: %w", cfg.Key, err)
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return nil, fmt.Errorf("%w: redis source %q: the key holds %q, not a counter", idforge.ErrInvalidArgument, cfg.Key, v)
	}
	s.seen.Store(n)
	return s, nil
}

// Next returns the next value of the counter. It returns an error wrapping
// sequence.ErrCounterLost (and idforge.ErrUnavailable) when the key has
// vanished or answers no more than a value this source saw before;
// idforge.ErrSpaceExhausted when the counter would pass the largest int64;
// idforge.ErrUnavailable wrapping the client's error when Redis cannot be
// reached; idforge.ErrClosed after Close.
func (s *Source) Next(ctx context.Context) (int64, error) {
	if s.closed.Load() {
		return 0, fmt.Errorf("redis source %q: %w", s.key, idforge.ErrClosed)
	}
	floor := s.seen.Load()
	cmd, err := s.w.Eval(ctx, incrIfExists, []string{s.key})
	var v int64
	if err == nil {
		var text string
		if text, err = cmd.Text(); err == nil {
			v, err = strconv.ParseInt(text, 10, 64)
		}
	}
	switch {
	case errors.Is(err, goredis.Nil):
		return 0, fmt.Errorf("%w: %w: redis source %q: the key is gone (evicted, flushed or lost in a fail-over) after reaching %d; re-create it above every value issued",
			sequence.ErrCounterLost, idforge.ErrUnavailable, s.key, floor)
	case err != nil && strings.Contains(err.Error(), "overflow"):
		return 0, fmt.Errorf("%w: redis source %q: %v", idforge.ErrSpaceExhausted, s.key, err)
	case err != nil:
		return 0, fmt.Errorf("%w: redis source %q: %w", idforge.ErrUnavailable, s.key, err)
	case v <= floor:
		s.backwards.Add(1)
		return 0, fmt.Errorf("%w: %w: redis source %q: INCR answered %d, but the key held %d before: it went back (restored or failed over to a stale copy); re-create it above every value issued",
			sequence.ErrCounterLost, idforge.ErrUnavailable, s.key, v, floor)
	}
	atomicmax.Raise(&s.seen, v)
	return v, nil
}

// Backwards returns how many answers Next refused because the counter
// was not above a value this source had handed out: the counter went
// back (a fail-over to a replica without the latest increments, a
// restore). Each such refusal is an error wrapping
// sequence.ErrCounterLost; a count above zero wants an operator.
func (s *Source) Backwards() int64 { return s.backwards.Load() }

// Close closes the client if the source opened it (Open). It is idempotent.
func (s *Source) Close() error {
	s.closed.Store(true)
	return s.owned.Close()
}
