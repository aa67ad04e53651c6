// Package redis is a segment store with Redis in front of a durable store
// (store/sqlite, store/mysql, store/postgres or store/mongo): the segment
// strategy of issuers that hand out segments with Redis Lua scripts and
// persist their high-water mark in a database. Redis hands out each key's
// segments from one hash, one script per claim; the database keeps the
// keys, the serial and operator definitions, and max_id, which always lies
// above every value Redis has handed out or holds. Claims reach the
// database about once every Factor claims, in the background.
//
// Programs build a Store with New from a go-redis client and any
// idforge.Store. The binary opens one from a URL (schemes "redisseg",
// "redisseg+sentinel", "redisseg+cluster", in internal/redisconn's forms):
//
//	redisseg://[[user]:password@]host[:port][/db]?store=<durable store URL, percent-encoded>&…
//	redisseg+sentinel://[:password@]s1:26379,s2:26379/mymaster?db=0&store=…
//	redisseg+cluster://[:password@]n1:6379,n2:6379?store=…
//
// store, the durable store's URL, is required and opened by store.Open
// with the same store.Options; prefix, factor, reserve and retry_after set
// the Config fields of those names; tls=true reaches Redis over TLS. Every
// other parameter is go-redis's (see redis.ParseURL). Unless the URL sets
// them, the client dials once for at most 1 s, reads and writes time out
// after 500 ms and a read is retried once; a script that writes is never
// sent twice.
//
// # Design
//
// The hash <prefix><key> holds Redis's room [cur, max). A claim of n IDs
// moves cur to cur+n when the room allows. Otherwise the node reserves a
// block [lo, hi) of max(Factor × n, Reserve) IDs with the database's own
// ClaimSegment, and a script installs it: appended when the room ends at
// lo; replacing the room (its rest becomes a gap) when the room ends
// elsewhere, the hash is not valid, or cur is below this node's floor
// (see Failures); kept by the node, which hands its rest back, when a
// later block was installed meanwhile. When a claim leaves less than one
// reservation, the next is reserved in the background, so claims rarely
// wait for the database. Values are exact up to the largest int64 (the
// scripts never compute with Lua's doubles); a claim that no longer fits
// fails with idforge.ErrSpaceExhausted. Key and Keys report a segment
// key's MaxID as Redis's cur while Redis holds a valid room.
//
// A hash is valid only for the Redis process and replication history that
// wrote it: its run_id and master_replid, which a restart and a promotion
// renew. A copy that comes back from a restart, a restore or a promoted
// replica is never read. At all times:
//
//	(I1) values at or above the database's max_id are held, and have been
//	     issued, by nobody;
//	(I2) the room [cur, max) of a valid hash is held by Redis alone, and
//	     none of its values has been issued.
//
// Every script and every database claim keeps both, so no value is issued
// twice, and a Redis that lost everything starts again at max_id. A write
// whose reply is lost counts as unknown: a block whose install is unknown
// is abandoned, and a hand-back whose outcome is unknown is an error.
// Segments a Store returns to one caller increase, across the failures
// below too.
//
// # Failures
//
//   - Redis down: claims go to the database directly (above everything
//     Redis held, by I1), for RetryAfter without trying Redis; no error
//     reaches the caller while the database answers. A node that claimed
//     directly does not use a room below its latest direct claim (its
//     floor). Stats.RedisUp says which way claims go.
//   - Redis restarted, flushed, evicted or failed over, even losing writes
//     it acknowledged: the hash is not valid and starts afresh from max_id;
//     the rest of the old room is a gap. No WAIT is needed, so a claim
//     costs one script (a round trip and two INFO calls) on any topology.
//   - Database down: Redis hands out the room it has, one to two
//     reservations; then claims fail with an error wrapping
//     idforge.ErrUnavailable and the database's error.
//   - Both down: claims fail fast, wrapping idforge.ErrUnavailable and
//     naming both causes.
//   - A node dies: its claim in flight, or a block it reserved and had not
//     installed, is a gap; a refill lock it held lapses after ten seconds,
//     and other nodes wait for a refill at most a second.
package redis
