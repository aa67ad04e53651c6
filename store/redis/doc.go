// Package redis is a segment store with Redis in front of a database:
// the segment strategy of issuers that hand out segments with Redis Lua
// scripts and persist max to MongoDB (store/mongo), or to one of the SQL
// stores (SQLite, MySQL/MariaDB, PostgreSQL). Redis hands out segments
// from one hash per key, moved by one Lua script per claim; the database
// keeps the keys, their catalogue and max_id, the durable high-water mark,
// which always lies above every value Redis has handed out or may hand
// out. Keys are created and listed in the database, and so are serial
// definitions (idforge.SerialStore) when the database keeps them; claims
// reach it about once every Factor claims, in the background.
//
// # Store URL
//
// Importing this package registers the scheme "redisseg" with store.Open:
//
//	redisseg://[[user]:password@]host[:port][/db]?store=<durable store URL>&param=value&…
//
//	store        the durable store, as store.Open takes it (required); it
//	             is opened with the same store.Options, so the data
//	             directory and `idforge migrate` apply to it
//	prefix       the Redis key prefix (default "idforge:seg:")
//	factor       Config.Factor, an integer ≥ 1 (default 10)
//	reserve      Config.Reserve, an integer ≥ 0 (default 0)
//	retry_after  Config.RetryAfter, a Go duration (default 1s)
//	tls          true: reach Redis over TLS
//
// Redis Sentinel and Redis Cluster take the schemes "redisseg+sentinel"
// and "redisseg+cluster", with the forms of internal/redisconn (the
// sentinels or seed nodes as a comma-separated host list, the master
// name as the path):
//
//	redisseg+sentinel://[:password@]s1:26379,s2:26379/mymaster?db=0&store=…
//	redisseg+cluster://[:password@]n1:6379,n2:6379?store=…
//
// Every other parameter is go-redis's (pool_size, dial_timeout,
// read_timeout, …; see redis.ParseURL). Unless the URL sets them, the
// client dials once for at most 1 s, reads and writes time out after
// 500 ms and a read is retried once (the scripts that write never are;
// see below): a Redis that does not answer should send claims to the
// database soon, not hold them. Percent-encode
// the store URL when it has a query of its own (url.QueryEscape):
//
//	redisseg://localhost:6379/0?store=sqlite:///var/lib/idforge/idforge.db
//	redisseg://:secret@redis.internal:6379/2?prefix=shop:seg:&store=mysql%3A%2F%2Fidforge%3Apw%40db.internal%2Fidforge%3Ftimeout%3D2s
//
// Programs that embed idforge build a Store with New from a go-redis
// client and any idforge.Store.
//
// # Design
//
// The hash <prefix><key> holds cur, max, step and inst; Redis's room is
// [cur, max). A claim of n IDs (the key's step when 0) runs the claim
// script: when cur+n ≤ max it moves cur to cur+n and returns [cur, cur+n).
// Otherwise the node adds room. It reserves a block [lo, hi) in the
// database, an ordinary ClaimSegment there of max(Factor × n, Reserve)
// IDs, and the install script hands the block to Redis:
//
//   - the room ends at lo: max becomes hi, the room grows without a gap;
//   - the room ends below lo (someone claimed from the database in
//     between), the hash is missing or not valid, or cur is below the
//     node's floor (①): cur and max become lo and hi, and the rest of
//     the old room is abandoned (a gap);
//   - the room ends above lo: a later block was installed meanwhile; the
//     node serves its claim from its own block and hands the rest back.
//
// Then the claim script runs again. Max only ever moves to the end of a
// block the database has just given out: Redis never extends it alone.
//
// Double buffer: when a claim leaves less than one reservation of room,
// the next block is reserved in the background, so Redis holds between
// one and two reservations and claims do not wait for the database. A
// lock field in the hash lets one node at a time reserve for a key; the
// others wait up to a second for its block. The lock only saves ID space:
// correctness never depends on it.
//
// Numbers are exact up to the largest int64: the scripts never compute
// with Lua's numbers (doubles); HINCRBY adds and comparisons are made on
// the decimal strings. Near the top of int64 a reservation takes what is
// left, and claims fail with idforge.ErrSpaceExhausted when that is not
// enough.
//
// Key and Keys report a segment key's MaxID as Redis's cur, the start of
// the next segment Redis hands out, while Redis holds a valid room; the
// database's max_id otherwise. Segments a Store returns to one caller
// increase, also across the outages below; across nodes they interleave.
//
// # The invariant
//
// A hash is valid when its inst names the Redis process answering: its
// run_id, new at every start, and its master_replid, new when a replica is
// promoted or a server takes over another's data set. Only a valid hash
// is read. At all times:
//
//	(I1) values at or above the database's max_id are held and have been
//	     issued by nobody;
//	(I2) the room [cur, max) of a valid hash is held by Redis alone: none
//	     of its values has been issued, and nobody else holds one.
//
// Every step keeps both. A claim from the room takes [cur, cur+n), held by
// Redis alone (I2), and moves cur past it. A reservation is the
// database's own claim: it moves max_id from lo to hi and gives [lo, hi),
// free by (I1), to one node alone. "Extended" joins two ranges held alone
// by Redis and by the installing node, which hands its block over; "reset"
// makes the node's block the room and abandons the old room; "stale"
// changes nothing. A direct claim (below) is the database's own claim. A
// return to Redis moves cur from to back to from only if it is still to,
// and [from, to) was the returner's alone and never issued, by the
// contract of idforge.SegmentReturner; a return to the database is the
// database's own compare-and-set. When Redis loses data (restart, flush,
// eviction, fail-over) rooms vanish: their values become a gap, never
// free again. A copy of a hash that comes back (from an RDB or AOF file,
// or from a replica) was written by another process, so it is not valid
// and its cur, perhaps behind values handed out since, is never read.
//
// A write to Redis whose reply is lost may or may not have happened, so
// the scripts that write are never sent twice (go-redis's retry is off
// for them) and such an outcome counts as unknown: a block whose install
// is unknown is abandoned, neither used nor handed back, and a hand-back
// whose outcome is unknown is an error, not a "no" that would let the
// caller keep the values.
//
// So each value is issued from a range that holds it alone and leaves the
// range as it is issued: no value is issued twice. And since every room
// was a block reserved below max_id, everything Redis has handed out or
// holds lies below the database's max_id: a Redis that lost everything
// starts again at max_id (the Redis-and-MongoDB design's "cur = max + 1",
// for a max_id that is the first value not claimed) and repeats nothing.
//
// # Failures
//
// ① Redis down or unreachable. The claim that finds Redis failing goes to
// the database directly, by its plain ClaimSegment, whose values lie above
// everything Redis ever held (I1); for RetryAfter every claim does so
// without trying Redis, then one claim tries it again. No error reaches
// the caller while the database answers. When Redis answers again: a
// restarted or replaced Redis is case ②; the same process still holding
// its data still holds its room alone, and it is used, except by a node
// that claimed from the database meanwhile. Such a node passes the end of
// its latest direct claim to the claim script as a floor, and a room
// below it is started afresh from max_id, so that the node's segments go
// on increasing. Stats.RedisUp and the log show the state.
//
// A fail-over (Sentinel or Cluster promoting a replica) is case ②, also
// when it loses writes the old primary had acknowledged: the promoted
// replica has a new master_replid, so the copy of every hash it holds is
// not valid and is never read. The store therefore sends no WAIT: a
// claim costs the same on every topology, and no value repeats across a
// fail-over (internal/redisconn's TestSentinelFailover and
// TestClusterFailover kill the primary under load and check it).
//
// ② Redis persistence, or not. Not needed: the database holds what must
// last. Without it, a restarted Redis is empty and the next claim starts
// the hash from the database (cur = max_id). With it, or after a
// fail-over to a replica, the data that comes back may be older than
// what was handed out; it is not valid (another process wrote it), so
// the hash starts afresh the same way. The rest of the old room is a gap.
//
// ③ Database down. Redis goes on handing out the room it has, one to two
// reservations (Factor × n each: size them for the outage to survive).
// The background refill fails and is retried every RetryAfter. Once the
// room is used up, claims fail, within the database store's timeout,
// with an error wrapping idforge.ErrUnavailable and the database's error;
// max_id and Redis's max stay where they are. When the database answers,
// the next claim refills, and claims succeed again.
//
// ④ The calling node dies. A claim in flight, or a block it reserved and
// had not installed, is lost: a gap. A refill lock it held lapses after
// ten seconds; the other nodes wait at most a second before reserving on
// their own. Nodes keep no state that Redis or the database needs.
//
// ⑤ Redis and the database down. Claims fail fast with an error wrapping
// idforge.ErrUnavailable that names both causes. (The node's segment
// allocator goes on handing out its own buffered segments meanwhile.)
// Recovery needs nothing: as in ① and ③.
//
// # Operation
//
// Redis 5.0 or later (scripts replicated by their effects); a cluster
// works, each script touches one key. Give every database its own prefix:
// a hash belongs to one database's key. A maxmemory-policy that evicts a
// hash only costs a gap (noeviction or volatile-* keep it). The hash is
// idforge's: do not edit it. A step changed by hand in leaf_alloc reaches
// Redis with the next reservation. As with every segment store, never
// lower max_id by hand.
//
// A claim costs one script on Redis: a round trip plus two INFO calls,
// the price of telling a valid hash from a stale copy.
package redis
