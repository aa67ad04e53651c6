package redis

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/idforge/idforge/internal/closeonce"
	"github.com/idforge/idforge/internal/redisconn"
	"github.com/idforge/idforge/sequence"
)

// DefaultPrefix is the key prefix of counters opened from a URL without
// a prefix parameter.
const DefaultPrefix = "idforge:counter:"

// DefaultKeep is CounterStoreConfig.Keep when left zero.
const DefaultKeep = 3

// CounterStoreConfig configures a CounterStore.
type CounterStoreConfig struct {
	// Prefix starts every key: a counter named order keeps the count of a
	// period in <Prefix>order:<stamp> and its mark in <Prefix>order:mark.
	// It is used as given, so empty means keys that start with the name;
	// DefaultPrefix is the usual choice (and the URL form's default). On
	// Redis Cluster (a *redis.ClusterClient) the keys of a counter must
	// share a slot: unless the prefix holds a hash tag ("{serials}:"),
	// the name is made one, <Prefix>{order}:<stamp> and
	// <Prefix>{order}:mark.
	Prefix string
	// Keep is how many periods a period's count outlives its start
	// (EXPIRE); DefaultKeep when zero.
	Keep int
	// MinReplicas is how many replicas must have each count before it is
	// handed out (Redis's WAIT); 0, the default, waits for none. With
	// Sentinel or a cluster set it to 1 or more (see the package
	// documentation).
	MinReplicas int
	// WaitTimeout bounds the wait for replicas; after it Count fails and
	// the number is never handed out (a gap). Default 500ms.
	WaitTimeout time.Duration
}

// CounterStore keeps per-period counters in Redis: one key per period,
// counted with INCR and expiring after a few periods, and one mark key per
// counter, all updated by one Lua script per number. It is safe for
// concurrent use.
type CounterStore struct {
	client goredis.UniversalClient
	w      redisconn.Writer
	owned  closeonce.Owned // the client, when the store opened it
	prefix string
	tag    bool // wrap the name in a hash tag
	keep   int
}

var _ sequence.CounterStore = (*CounterStore)(nil)

// NewCounterStore returns a store on client, which the caller keeps
// owning.
func NewCounterStore(client goredis.UniversalClient, cfg CounterStoreConfig) *CounterStore {
	if cfg.Keep <= 0 {
		cfg.Keep = DefaultKeep
	}
	_, cluster := client.(*goredis.ClusterClient)
	return &CounterStore{client: client, prefix: cfg.Prefix, keep: cfg.Keep,
		tag: cluster && !hasHashTag(cfg.Prefix), w: writer(client, max(cfg.MinReplicas, 0), cfg.WaitTimeout)}
}

// hasHashTag reports whether a key starting with prefix has its hash tag
// in prefix: a '{' followed by a non-empty text and '}'.
func hasHashTag(prefix string) bool {
	i := strings.IndexByte(prefix, '{')
	return i >= 0 && strings.IndexByte(prefix[i+1:], '}') > 0
}

// countScript implements CounterStore.Count for one period.
//
//	KEYS[1]  the count key of period ARGV[1]
//	KEYS[2]  the counter's mark key: "<stamp> <n>"
//	ARGV     stamp, floor stamp, floor n, cap (0: none), expiry in ms
//
// It answers {stamp, n} after counting, {stamp, 0} when the period is
// full, and {mark stamp, -1} when the mark is in a later period: the
// caller asks again for that period.
var countScript = goredis.NewScript(`
local stamp = tonumber(ARGV[1])
local ms, mn = tonumber(ARGV[2]), tonumber(ARGV[3])
local m = redis.call('GET', KEYS[2])
if m then
  local sp = string.find(m, ' ', 1, true)
  local s2, n2 = tonumber(string.sub(m, 1, sp - 1)), tonumber(string.sub(m, sp + 1))
  if s2 > ms or (s2 == ms and n2 > mn) then ms, mn = s2, n2 end
end
if ms > stamp then return {ms, -1} end
local cur = tonumber(redis.call('GET', KEYS[1]) or '0')
local lift = ms == stamp and cur < mn
if lift then cur = mn end
local cap = tonumber(ARGV[4])
if cap > 0 and cur >= cap then return {stamp, 0} end
if cur >= 9007199254740991 then return redis.error_reply('count would pass 2^53') end
local n
if lift then
  n = cur + 1
  redis.call('SET', KEYS[1], string.format('%d', n), 'PX', ARGV[5])
else
  n = redis.call('INCR', KEYS[1])
  redis.call('PEXPIRE', KEYS[1], ARGV[5])
end
redis.call('SET', KEYS[2], string.format('%d %d', stamp, n))
return {stamp, n}`)

func (s *CounterStore) key(name, suffix string) string {
	if s.tag {
		return s.prefix + "{" + name + "}:" + suffix
	}
	return s.prefix + name + ":" + suffix
}

// Count implements sequence.CounterStore: one script call, or two when
// the counter's mark is in a later period than asked for.
func (s *CounterStore) Count(ctx context.Context, req sequence.CountRequest) (sequence.CountResult, error) {
	ttl := (time.Duration(s.keep) * req.Period.Nominal()).Milliseconds()
	stamp := req.Stamp
	// Each retry counts in a strictly later period, the one other callers
	// moved the mark to meanwhile; under contention on a small cap they
	// can fill several periods while this call runs (a few retries were
	// too few for 24 callers on a cap of 40 a second), so the bound only
	// guards against a mark that moves forever.
	for range 64 {
		cmd, err := s.w.Eval(ctx, countScript,
			[]string{s.key(req.Name, strconv.FormatInt(stamp, 10)), s.key(req.Name, "mark")},
			stamp, req.Floor.Stamp, req.Floor.N, req.Cap, ttl)
		var res []int64
		if err == nil {
			res, err = cmd.Int64Slice()
		}
		if err != nil {
			return sequence.CountResult{}, fmt.Errorf("redis: %w", err)
		}
		if len(res) != 2 {
			return sequence.CountResult{}, fmt.Errorf("redis: count script answered %v", res)
		}
		switch {
		case res[1] == -1 && res[0] > stamp:
			stamp = res[0] // count in the later period of the mark
		case res[1] == 0:
			return sequence.CountResult{Stamp: res[0], Full: true}, nil
		default:
			return sequence.CountResult{Stamp: res[0], N: res[1]}, nil
		}
	}
	return sequence.CountResult{}, errors.New("redis: the counter's mark kept moving to later periods; try again")
}

// LoadMark implements sequence.CounterStore: it reads the mark key.
func (s *CounterStore) LoadMark(ctx context.Context, name string) (sequence.Mark, error) {
	v, err := s.client.Get(ctx, s.key(name, "mark")).Result()
	if errors.Is(err, goredis.Nil) {
		return sequence.Mark{}, nil
	}
	if err != nil {
		return sequence.Mark{}, fmt.Errorf("redis: %w", err)
	}
	f := strings.Fields(v)
	if len(f) == 2 {
		st, err1 := strconv.ParseInt(f[0], 10, 64)
		n, err2 := strconv.ParseInt(f[1], 10, 64)
		if err1 == nil && err2 == nil {
			return sequence.Mark{Stamp: st, N: n}, nil
		}
	}
	return sequence.Mark{}, fmt.Errorf("redis: mark key %s holds %q, not \"<stamp> <n>\"", s.key(name, "mark"), v)
}

// Close closes the client if the store opened it (through
// sequence.OpenCounter). It is idempotent.
func (s *CounterStore) Close() error {
	return s.owned.Close()
}
