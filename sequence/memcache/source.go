package memcache

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync/atomic"

	gomemcache "github.com/bradfitz/gomemcache/memcache"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/closeonce"
	"github.com/idforge/idforge/sequence"
)

// SourceConfig configures a Source. Key is required; the zero value of
// every other field means its default.
type SourceConfig struct {
	// Key is the memcached key holding the counter (at most 250 bytes, no
	// spaces or control characters).
	Key string
	// Start is the first value issued from a key that NewSource creates
	// (default 1, at least 1).
	Start int64
	// Create lets NewSource create a missing key with add. memcached may
	// have evicted the key, or restarted and forgotten it, and NewSource
	// cannot tell that from a key never used: set Create for the first
	// start only, or with a Start above every value ever issued.
	Create bool
	// Floor, when set, returns a lower bound kept elsewhere, durably, on
	// the values ever issued from the key (for example the largest order
	// number stored in the orders table). A source that finds the key
	// missing then re-creates it with add at the larger of Floor and the
	// largest value it has seen, and carries on. Without Floor a missing
	// key is an error (sequence.ErrCounterLost) until an operator
	// re-creates it.
	Floor func(ctx context.Context) (int64, error)
}

// Source issues the values of one memcached counter with incr. It is safe
// for concurrent use.
type Source struct {
	client *gomemcache.Client
	owned  closeonce.Owned // the client, when the source opened it
	key    string
	floor  func(ctx context.Context) (int64, error)
	// seen is the largest value this source has seen the key hold; every
	// incr sent after it was seen must answer more.
	seen   atomic.Int64
	closed atomic.Bool
}

var _ sequence.Source = (*Source)(nil)

// NewSource returns a source on cfg.Key through client, which the caller
// keeps owning. When the key is missing it creates it (add, so that the
// first value is cfg.Start) if cfg.Create is set, re-creates it above
// cfg.Floor if that is set, and otherwise returns an error wrapping
// sequence.ErrCounterLost. It returns an error wrapping
// idforge.ErrInvalidArgument for a bad configuration or a key that does
// not hold a counter.
func NewSource(ctx context.Context, client *gomemcache.Client, cfg SourceConfig) (*Source, error) {
	if cfg.Key == "" || len(cfg.Key) > 250 || strings.ContainsFunc(cfg.Key, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return nil, fmt.Errorf("%w: memcache source: key %q is empty, longer than 250 bytes or has spaces or control characters",
			idforge.ErrInvalidArgument, cfg.Key)
	}
	cfg.Start = cmp.Or(cfg.Start, 1)
	if cfg.Start < 1 {
		return nil, fmt.Errorf("%w: memcache source %q: start %d is below 1", idforge.ErrInvalidArgument, cfg.Key, cfg.Start)
	}
	s := &Source{client: client, key: cfg.Key, floor: cfg.Floor}
	v, err := client.Increment(cfg.Key, 0)
	if errors.Is(err, gomemcache.ErrCacheMiss) {
		switch {
		case cfg.Create:
			err = s.add(cfg.Start - 1)
		case cfg.Floor != nil:
			err = s.recreate(ctx, 0)
		default:
			return nil, fmt.Errorf("%w: %w: memcache source %q: the key does not exist. If this is the first start, allow creation (create=true); if memcached lost it, re-create it above every value ever issued",
				sequence.ErrCounterLost, idforge.ErrUnavailable, cfg.Key)
		}
		if err != nil {
			return nil, err
		}
		v, err = client.Increment(cfg.Key, 0)
	}
	if err != nil && strings.Contains(err.Error(), "non-numeric") {
		return nil, fmt.Errorf("%w: memcache source %q: the key does not hold a counter: %v", idforge.ErrInvalidArgument, cfg.Key, err)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: memcache source %q: %w", idforge.ErrUnavailable, cfg.Key, err)
	}
	if v > math.MaxInt64 {
		return nil, fmt.Errorf("%w: memcache source %q: the counter holds %d", idforge.ErrSpaceExhausted, cfg.Key, v)
	}
	s.seen.Store(int64(v))
	return s, nil
}

// add creates the key holding v unless it exists.
func (s *Source) add(v int64) error {
	err := s.client.Add(&gomemcache.Item{Key: s.key, Value: []byte(strconv.FormatInt(v, 10))})
	if err != nil && !errors.Is(err, gomemcache.ErrNotStored) {
		return fmt.Errorf("%w: memcache source %q: create: %w", idforge.ErrUnavailable, s.key, err)
	}
	return nil
}

// recreate adds the key back at the larger of the floor and seen.
func (s *Source) recreate(ctx context.Context, seen int64) error {
	f, err := s.floor(ctx)
	if err != nil {
		return fmt.Errorf("%w: memcache source %q: the key is missing and its floor is unavailable: %w", idforge.ErrUnavailable, s.key, err)
	}
	return s.add(max(f, seen))
}

// Next returns the next value of the counter. It returns an error wrapping
// sequence.ErrCounterLost (and idforge.ErrUnavailable) when the key is
// missing and no Floor is configured, or when it answers no more than a
// value this source saw before; idforge.ErrSpaceExhausted past the
// largest int64; idforge.ErrUnavailable wrapping the client's error when
// memcached cannot be reached (each call is bounded by the client's
// Timeout; ctx is checked before it starts); idforge.ErrClosed after
// Close.
func (s *Source) Next(ctx context.Context) (int64, error) {
	if s.closed.Load() {
		return 0, fmt.Errorf("memcache source %q: %w", s.key, idforge.ErrClosed)
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	floor := s.seen.Load()
	v, err := s.client.Increment(s.key, 1)
	if errors.Is(err, gomemcache.ErrCacheMiss) {
		if s.floor == nil {
			return 0, fmt.Errorf("%w: %w: memcache source %q: the key is gone (evicted, or memcached restarted) after reaching %d; re-create it above every value issued, or configure a Floor",
				sequence.ErrCounterLost, idforge.ErrUnavailable, s.key, floor)
		}
		if err := s.recreate(ctx, floor); err != nil {
			return 0, err
		}
		v, err = s.client.Increment(s.key, 1)
	}
	switch {
	case err != nil:
		return 0, fmt.Errorf("%w: memcache source %q: %w", idforge.ErrUnavailable, s.key, err)
	case v > math.MaxInt64:
		return 0, fmt.Errorf("%w: memcache source %q: the counter reached %d", idforge.ErrSpaceExhausted, s.key, v)
	case int64(v) <= floor:
		return 0, fmt.Errorf("%w: %w: memcache source %q: incr answered %d, but the key held %d before: it was lost and re-created lower; re-create it above every value issued",
			sequence.ErrCounterLost, idforge.ErrUnavailable, s.key, v, floor)
	}
	for {
		cur := s.seen.Load()
		if int64(v) <= cur || s.seen.CompareAndSwap(cur, int64(v)) {
			return int64(v), nil
		}
	}
}

// Close closes the client's idle connections if the source opened it
// (Open). It is idempotent.
func (s *Source) Close() error {
	s.closed.Store(true)
	return s.owned.Close()
}
