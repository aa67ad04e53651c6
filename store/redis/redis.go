package redis

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/store"
)

// Defaults for the Config fields left zero.
const (
	// DefaultPrefix starts the name of every Redis key the store uses.
	DefaultPrefix = "idforge:seg:"
	// DefaultFactor is how many claims of the requested length one
	// reservation in the database covers.
	DefaultFactor = 10
	// DefaultRetryAfter is how long the store sends every claim to the
	// database after Redis failed, before it tries Redis again.
	DefaultRetryAfter = time.Second
)

// Internal timings.
const (
	// lockTTL bounds how long a node holds a key's refill lock; a node
	// that dies holding it delays the others at most this long.
	lockTTL = 10 * time.Second
	// lockWait is how long a claim waits for another node's refill
	// before it reserves a block itself.
	lockWait = time.Second
	// lockPoll is the pause between looks at the room while waiting.
	lockPoll = 5 * time.Millisecond
	// aheadTimeout bounds a background refill.
	aheadTimeout = 10 * time.Second
	// maxRounds bounds the claim–refill rounds of one claim before it
	// takes its segment from the database directly.
	maxRounds = 8
)

// Config configures New. Redis and DB are required; every other field may
// be left zero for its default.
type Config struct {
	// Redis is the server in front: a *redis.Client (a single server or
	// Sentinel fail-over) or a *redis.ClusterClient. The Store owns it
	// and closes it on Close.
	Redis goredis.UniversalClient
	// DB is the durable store: keys, their catalogue and the persistent
	// max_id live there. The Store owns it and closes it on Close.
	DB idforge.Store
	// Prefix starts every Redis key: a key's hash is Prefix + key name.
	// Empty means DefaultPrefix. Give every durable store a prefix of
	// its own.
	Prefix string
	// Factor sizes reservations: a block reserved in the database holds
	// max(Factor × n, Reserve) IDs, where n is the length of the claim
	// that needed it. 0 means DefaultFactor; it must not be negative.
	Factor int64
	// Reserve is the smallest block reserved in the database. 0 means no
	// minimum beyond Factor × n; it must not be negative.
	Reserve int64
	// RetryAfter is how long every claim goes to the database directly
	// after Redis failed, before one claim tries Redis again. 0 means
	// DefaultRetryAfter; it must not be negative.
	RetryAfter time.Duration
	// Logger receives the store's log records. Nil means slog.Default().
	Logger *slog.Logger
}

// Store is an idforge.Store that hands out segments from Redis and keeps
// everything durable in another store; see the package documentation. It
// is safe for concurrent use, and any number of Stores (nodes) may share
// one Redis and one database. Create it with New and release it with
// Close.
type Store struct {
	rdb        goredis.UniversalClient
	db         idforge.Store
	prefix     string
	factor     int64
	reserve    int64
	retryAfter time.Duration
	log        *slog.Logger

	keys sync.Map // key name → *keyState

	// Redis health: while downUntil (Unix ns) is in the future every
	// claim goes to the database; 0 means Redis answered last time.
	downUntil atomic.Int64
	down      atomic.Bool            // for logging the transitions once
	lastErr   atomic.Pointer[string] // Redis's latest failure, for messages

	stats struct {
		redis, direct, reservations, resets atomic.Int64
	}

	// Background refills: started under aheadMu unless closed, so that
	// Close can wait for every one.
	aheadMu   sync.Mutex
	ahead     sync.WaitGroup
	aheadCtx  context.Context
	aheadStop context.CancelFunc

	closed    atomic.Bool
	closeOnce sync.Once
	closeErr  error
}

// keyState is what a Store remembers about one key.
type keyState struct {
	// sem admits one refill of the key at a time in this Store.
	sem chan struct{}
	// ahead is set while a background refill of the key runs.
	ahead atomic.Bool
	// aheadAfter (Unix ns) holds background refills back after one failed.
	aheadAfter atomic.Int64
	// floor is the end of the latest segment this Store claimed from the
	// database directly. Redis's room is not used below it, so that
	// this node's segments keep increasing after an outage.
	floor atomic.Int64
}

var _ store.Backend = (*Store)(nil)

// New returns a Store that serves claims from cfg.Redis in front of
// cfg.DB. It does no I/O: the first claim of a key initialises its hash
// from the database, and a Redis that cannot be reached only sends claims
// to the database. It returns an error wrapping idforge.ErrInvalidArgument
// when Redis or DB is nil or a number is negative; the caller keeps
// ownership of both then.
func New(cfg Config) (*Store, error) {
	switch {
	case cfg.Redis == nil:
		return nil, fmt.Errorf("%w: redisseg: Config.Redis is nil", idforge.ErrInvalidArgument)
	case cfg.DB == nil:
		return nil, fmt.Errorf("%w: redisseg: Config.DB is nil", idforge.ErrInvalidArgument)
	case cfg.Factor < 0 || cfg.Reserve < 0 || cfg.RetryAfter < 0:
		return nil, fmt.Errorf("%w: redisseg: negative Factor, Reserve or RetryAfter", idforge.ErrInvalidArgument)
	}
	s := &Store{
		rdb:        cfg.Redis,
		db:         cfg.DB,
		prefix:     cfg.Prefix,
		factor:     cfg.Factor,
		reserve:    cfg.Reserve,
		retryAfter: cfg.RetryAfter,
		log:        cfg.Logger,
	}
	s.prefix = cmp.Or(s.prefix, DefaultPrefix)
	s.factor = cmp.Or(s.factor, DefaultFactor)
	s.retryAfter = cmp.Or(s.retryAfter, DefaultRetryAfter)
	s.log = cmp.Or(s.log, slog.Default())
	s.aheadCtx, s.aheadStop = context.WithCancel(context.Background())
	return s, nil
}

// Stats counts what a Store has done since New.
type Stats struct {
	// RedisClaims is the number of segments Redis handed out.
	RedisClaims int64
	// DirectClaims is the number of segments claimed from the database
	// directly: while Redis was unreachable, or from a reserved block
	// that could not be given to Redis.
	DirectClaims int64
	// Reservations is the number of blocks reserved in the database for
	// Redis.
	Reservations int64
	// Resets is the number of times this Store started a key's hash
	// afresh from the database (first use, Redis restarted, data lost or
	// stale, or behind this node's direct claims).
	Resets int64
	// RedisUp is false while the Store sends claims to the database
	// because Redis failed.
	RedisUp bool
}

// Stats returns the Store's counters. It is cheap and safe to call at any
// time, also after Close.
func (s *Store) Stats() Stats {
	return Stats{
		RedisClaims:  s.stats.redis.Load(),
		DirectClaims: s.stats.direct.Load(),
		Reservations: s.stats.reservations.Load(),
		Resets:       s.stats.resets.Load(),
		RedisUp:      !s.down.Load(),
	}
}

// Ping reports whether the database answers: it holds everything durable,
// and without it no key can be created and no room added. A Redis outage
// is not a Ping failure, as claims go on through the database (see Stats
// and the log). It returns an error wrapping idforge.ErrClosed after Close.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.checkOpen(); err != nil {
		return err
	}
	if err := s.db.Ping(ctx); err != nil {
		return fmt.Errorf("redisseg: database: %w", err)
	}
	return nil
}

// Close waits for background refills to stop, then closes the Redis
// client and the database store. It is idempotent: later calls return the
// first call's result. Calls made after Close return an error wrapping
// idforge.ErrClosed. The values left in Redis's room stay there for the
// other nodes.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.aheadMu.Lock()
		s.closed.Store(true)
		s.aheadMu.Unlock()
		s.aheadStop()
		s.ahead.Wait()
		s.closeErr = errors.Join(s.rdb.Close(), s.db.Close())
	})
	return s.closeErr
}

func (s *Store) checkOpen() error {
	if s.closed.Load() {
		return fmt.Errorf("%w: redisseg store", idforge.ErrClosed)
	}
	return nil
}

// state returns the keyState of key, creating it on first use.
func (s *Store) state(key string) *keyState {
	if ks, ok := s.keys.Load(key); ok {
		return ks.(*keyState)
	}
	ks, _ := s.keys.LoadOrStore(key, &keyState{sem: make(chan struct{}, 1)})
	return ks.(*keyState)
}

// hashKey returns the Redis key of key's hash.
func (s *Store) hashKey(key string) string { return s.prefix + key }

// redisUsable reports whether a call should go to Redis. After a failure
// it says no until RetryAfter has passed, then yes to one caller, whose
// call decides.
func (s *Store) redisUsable() bool {
	until := s.downUntil.Load()
	if until == 0 {
		return true
	}
	now := time.Now().UnixNano()
	if now < until {
		return false
	}
	return s.downUntil.CompareAndSwap(until, now+int64(s.retryAfter))
}

// redisFailed records that Redis failed with err.
func (s *Store) redisFailed(err error) {
	s.downUntil.Store(time.Now().Add(s.retryAfter).UnixNano())
	msg := err.Error()
	s.lastErr.Store(&msg)
	if !s.down.Swap(true) {
		s.log.Warn("redisseg: Redis failed; claims go to the database until it answers", "err", err)
	}
}

// redisAnswered records that Redis answered.
func (s *Store) redisAnswered() {
	if s.downUntil.Load() != 0 {
		s.downUntil.Store(0)
	}
	if s.down.Load() && s.down.Swap(false) {
		s.log.Info("redisseg: Redis answers again; claims go through it")
	}
}

// redisCause describes the latest Redis failure for an error message.
func (s *Store) redisCause() string {
	if p := s.lastErr.Load(); p != nil {
		return *p
	}
	return "unreachable"
}

// reserveSize returns the length of the block to reserve for claims of
// n IDs: max(Factor × n, Reserve), saturating at the largest int64.
func (s *Store) reserveSize(n int64) int64 {
	r := int64(math.MaxInt64)
	if n <= math.MaxInt64/s.factor {
		r = n * s.factor
	}
	return max(r, s.reserve)
}
