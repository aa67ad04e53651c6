package redis

import (
	"context"
	"strings"

	goredis "github.com/redis/go-redis/v9"
)

// script is a Lua script and its text.
type script struct {
	*goredis.Script
	src string
}

func newScript(src string) script { return script{goredis.NewScript(src), src} }

// runOnce runs the script as Run does (EVALSHA, then EVAL when Redis does
// not have it), except that go-redis never sends it a second time after
// a failure that may have reached Redis: a write that went through with
// its reply lost would otherwise take effect twice (two installs of one
// block, or a hand-back after a hand-back). Such a failure is returned,
// and the caller treats its outcome as unknown.
func (sc script) runOnce(ctx context.Context, c goredis.UniversalClient, keys []string, args ...any) *goredis.Cmd {
	cmd := sc.cmd(ctx, "evalsha", sc.Hash(), keys, args)
	_ = c.Process(ctx, onceCmd{cmd})
	if err := cmd.Err(); err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT") {
		cmd = sc.cmd(ctx, "eval", sc.src, keys, args) // NOSCRIPT: it did not run
		_ = c.Process(ctx, onceCmd{cmd})
	}
	return cmd
}

func (sc script) cmd(ctx context.Context, verb, body string, keys []string, args []any) *goredis.Cmd {
	a := make([]any, 0, 3+len(keys)+len(args))
	a = append(a, verb, body, len(keys))
	for _, k := range keys {
		a = append(a, k)
	}
	a = append(a, args...)
	cmd := goredis.NewCmd(ctx, a...)
	if len(keys) > 0 {
		cmd.SetFirstKeyPos(3)
	}
	return cmd
}

// onceCmd is a command go-redis must not retry once it may have been
// sent.
type onceCmd struct{ *goredis.Cmd }

var _ goredis.Cmder = onceCmd{}

// NoRetry tells go-redis not to send the command again.
func (onceCmd) NoRetry() bool { return true }

// The hash of a key holds these fields, all decimal strings:
//
//	cur         the next value Redis hands out
//	max         the end of Redis's room: values in [cur, max) may be handed out
//	step        the key's stored step, for claims of step 0
//	inst        the Redis instance that wrote cur and max (see instance below)
//	lock        the token of the node reserving the next block, if any
//	lock_until  when that lock lapses, in Redis's milliseconds
//
// Values are int64 up to 2^63−1, beyond what Lua's numbers (doubles) hold
// exactly, so the scripts never compute with them: HINCRBY adds (in
// Redis's 64-bit integers) and le compares the decimal strings.

// luaHelpers starts every script that reads the hash.
//
// instance names the Redis server process and its replication history:
// its run_id (new at every start) and its master_replid (new when a
// replica is promoted, or when a server adopts a master's data set). A
// hash whose inst differs from the answering server's was written before
// a restart, a restore from an RDB or AOF file, or a fail-over, so its
// cur may be behind values already handed out: it is never used.
const luaHelpers = `
local function instance()
  local s = redis.call('INFO', 'server')
  local r = redis.call('INFO', 'replication')
  return (string.match(s, 'run_id:(%x+)') or '') .. '/' .. (string.match(r, 'master_replid:(%x+)') or '')
end

-- le reports whether a <= b for two decimal strings of non-negative
-- integers without leading zeros.
local function le(a, b)
  if #a ~= #b then return #a < #b end
  for i = 1, #a do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return true
end

-- valid returns cur, max and step when the hash was written by this very
-- server instance, nothing otherwise.
local function valid(key)
  local h = redis.call('HMGET', key, 'cur', 'max', 'step', 'inst')
  if h[1] and h[2] and h[3] and h[4] == instance() then
    return h[1], h[2], h[3]
  end
end
`

// claimScript hands out [cur, cur+n) when the room allows.
//
//	KEYS[1]  the key's hash
//	ARGV[1]  n, the number of IDs; "0" for the key's step
//	ARGV[2]  floor: refuse a start below it ("0" for none)
//
// Reply: {"ok", start, max, step, end} on success; otherwise {status, cur,
// max, step} with status "room" (fewer than n values left) or "behind"
// (cur is below the floor), or {"init"} when the hash is missing or was
// written by another server instance.
var claimScript = newScript(luaHelpers + `
local cur, max, step = valid(KEYS[1])
if not cur then
  return {'init'}
end
if not le(ARGV[2], cur) then
  return {'behind', cur, max, step}
end
local n = ARGV[1]
if n == '0' then n = step end
if n == '0' then
  return {'init'} -- no step known: a claim reads it from the database
end
local r = redis.pcall('HINCRBY', KEYS[1], 'cur', n)
if type(r) == 'table' and r.err then
  return {'room', cur, max, step}
end
local e = redis.call('HGET', KEYS[1], 'cur')
if not le(e, max) then
  redis.call('HSET', KEYS[1], 'cur', cur)
  return {'room', cur, max, step}
end
return {'ok', cur, max, step, e}
`)

// installScript gives Redis the block [lo, hi) just reserved in the
// database.
//
//	KEYS[1]  the key's hash
//	ARGV     lo, hi, the key's step, floor
//
// Reply "extended": the block continues the room (max was lo), so max
// became hi. "reset": the hash was missing, written by another instance,
// behind the floor, or its room ends below lo; cur and max became lo and
// hi, abandoning the old room. "stale": the room already ends above lo,
// so a later block was installed; the hash is left alone.
var installScript = newScript(luaHelpers + `
local cur, max = valid(KEYS[1])
if cur then
  if max == ARGV[2] then
    return 'extended' -- this very block, installed before
  end
  if max == ARGV[1] and le(ARGV[4], cur) then
    redis.call('HSET', KEYS[1], 'max', ARGV[2], 'step', ARGV[3])
    return 'extended'
  end
  if not le(max, ARGV[1]) then
    return 'stale'
  end
end
redis.call('HSET', KEYS[1], 'cur', ARGV[1], 'max', ARGV[2], 'step', ARGV[3], 'inst', instance())
return 'reset'
`)

// peekScript returns {cur, max} of a valid hash, nil otherwise.
var peekScript = newScript(luaHelpers + `
local cur, max = valid(KEYS[1])
if not cur then
  return false
end
return {cur, max}
`)

// returnScript sets cur back to from if it is still to.
//
//	KEYS[1]  the key's hash
//	ARGV     from, to
//
// Reply 1: done; 0: cur is not to; -1: the hash is missing or invalid.
var returnScript = newScript(luaHelpers + `
local cur = valid(KEYS[1])
if not cur then
  return -1
end
if cur ~= ARGV[2] then
  return 0
end
redis.call('HSET', KEYS[1], 'cur', ARGV[1])
return 1
`)

// lockScript takes the key's refill lock for ARGV[1] (a token) for
// ARGV[2] milliseconds, unless another token holds it and it has not
// lapsed. Reply 1 when the caller holds it.
var lockScript = newScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local h = redis.call('HMGET', KEYS[1], 'lock', 'lock_until')
if h[1] and h[1] ~= ARGV[1] and tonumber(h[2]) and tonumber(h[2]) > now then
  return 0
end
redis.call('HSET', KEYS[1], 'lock', ARGV[1], 'lock_until', string.format('%d', now + tonumber(ARGV[2])))
return 1
`)

// unlockScript releases the refill lock if ARGV[1] holds it.
var unlockScript = newScript(`
if redis.call('HGET', KEYS[1], 'lock') == ARGV[1] then
  redis.call('HDEL', KEYS[1], 'lock', 'lock_until')
  return 1
end
return 0
`)
