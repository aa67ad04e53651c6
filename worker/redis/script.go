package redis

import goredis "github.com/redis/go-redis/v9"

// acquireScript claims a worker ID for an owner.
//
//	KEYS[1]  the key of ID 0: it routes the call to the prefix's slot
//	ARGV[1]  the key base, "{prefix}:"
//	ARGV[2]  the owner
//	ARGV[3]  the largest ID, max
//	ARGV[4]  the TTL in milliseconds
//	ARGV[5]  the owner's clock record, "unix ms:TTL ms"
//
// It returns {id, last, clock, pttl, …}: the ID (−1 when 0..max are all
// held by others), the newest time recorded for it, in unix milliseconds
// ("0" when none), and the clock record and its PTTL of every ID another
// owner holds, for the clock check; all strings. An ID the owner already holds is preferred to a free one: the
// owner restarted, and its old process is gone. The other keys are built
// from ARGV[1]; they share KEYS[1]'s hash tag, so they are in its slot.
var acquireScript = goredis.NewScript(`
local base, owner, max, ttl = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4]
local mine, free, peers = -1, -1, {}
for n = 0, max do
	local holder = redis.call('GET', base .. 'id:' .. n)
	if holder == owner and mine < 0 then
		mine = n
	elseif holder == false then
		if free < 0 then free = n end
	else
		local clock = redis.call('GET', base .. 'clock:' .. n)
		if clock then
			table.insert(peers, clock)
			table.insert(peers, tostring(redis.call('PTTL', base .. 'clock:' .. n)))
		end
	end
end
local id = mine
if id < 0 then id = free end
if id < 0 then
	return {'-1', '0'}
end
redis.call('SET', base .. 'id:' .. id, owner, 'PX', ttl)
redis.call('SET', base .. 'clock:' .. id, ARGV[5], 'PX', ttl)
local res = {tostring(id), redis.call('GET', base .. 'last:' .. id) or '0'}
for _, v in ipairs(peers) do table.insert(res, v) end
return res
`)

// renewScript extends the owner's hold on an ID and records the newest
// time it issued at.
//
//	KEYS[1]  {prefix}:id:N      KEYS[2]  {prefix}:last:N
//	KEYS[3]  {prefix}:clock:N
//	ARGV[1]  the owner          ARGV[2]  the TTL in milliseconds
//	ARGV[3]  the newest time the owner issued at, unix ms (0: none)
//	ARGV[4]  the owner's clock record (see acquireScript)
//
// It returns {"ok"}, {"retaken"} when the key had lapsed and was set
// again, {"held", holder} when another owner holds the ID, or
// {"newer", last} when the key lapsed and the recorded time is newer
// than the owner's.
//
// Setting a lapsed key again is safe: the node stopped issuing before
// the key could lapse (its lease's ValidUntil is a margin short of the
// TTL), and a key that is absent now means nobody holds the ID. Someone
// may have held it in between; then its time was recorded in last:N, and
// a recorded time newer than the owner's own refuses the retake. This is
// also how a node that resumed its ID from the local cache while Redis was
// down re-establishes its key (SET … NX is atomic inside the script).
var renewScript = goredis.NewScript(`
local holder = redis.call('GET', KEYS[1])
local last = tonumber(redis.call('GET', KEYS[2]) or '0')
local reported = tonumber(ARGV[3])
local status = 'ok'
if holder == ARGV[1] then
	redis.call('PEXPIRE', KEYS[1], ARGV[2])
elseif holder then
	return {'held', holder}
elseif last > reported then
	return {'newer', tostring(last)}
else
	redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX')
	status = 'retaken'
end
if reported > last then
	redis.call('SET', KEYS[2], ARGV[3])
end
redis.call('SET', KEYS[3], ARGV[4], 'PX', ARGV[2])
return {status}
`)

// releaseScript gives an ID back if the owner holds it, and records the
// newest time it issued at in any case (the time only ever rises).
//
//	KEYS[1]  {prefix}:id:N      KEYS[2]  {prefix}:last:N
//	KEYS[3]  {prefix}:clock:N
//	ARGV[1]  the owner          ARGV[2]  the newest time issued, unix ms
//
// It returns 1 when the key was deleted, 0 when the owner did not hold it.
var releaseScript = goredis.NewScript(`
local released = 0
if redis.call('GET', KEYS[1]) == ARGV[1] then
	redis.call('DEL', KEYS[1], KEYS[3])
	released = 1
end
if tonumber(ARGV[2]) > tonumber(redis.call('GET', KEYS[2]) or '0') then
	redis.call('SET', KEYS[2], ARGV[2])
end
return released
`)
