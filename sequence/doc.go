// Package sequence holds idforge's sequence sources and per-period
// counters: the number generators of JD's (京东) logistics serial-number
// platform, Flickr-style ticket servers (as Meituan's Leaf write-up
// describes them) and the date-stamped Redis order numbers made of
// yyMMddHHmmss and a per-second INCR counter.
//
// # Sources
//
// A source is an idforge.Generator backed by one store round trip per
// value: values never repeat, across every client of the store, and may
// leave gaps (a value whose reply is lost is never handed out again).
// Each backend is a package; Open builds one from a URL whose scheme
// names it, once the backend is imported (sequence/all imports them all):
//
//	redis://[user:password@]host:6379/0?key=orders        sequence/redis: INCR on one key (rediss:// for TLS)
//	memcache://host:11211?key=orders&create=true          sequence/memcache: incr on one item
//	mongodb://user:password@h1,h2,h3/db?name=orders       sequence/mongo: $inc on one document (also mongodb+srv)
//	sqlrow+mysql://user:password@host:3306/db?name=orders sequence/sqlrow: current_value + 1 on a named row
//	sqlrow+postgres://user@host:5432/db?name=orders       (also sqlrow+postgresql)
//	sqlrow+sqlite:///var/lib/idforge/seq.db?name=orders   (sqlrow+sqlite:relative.db)
//	autoinc+mysql://user:password@host:3306/db?tables=4   sequence/autoinc: id << n | table over 2^n tables
//	autoinc+postgres://…, autoinc+sqlite:…
//	tickets+mysql://user:password@host1:3306/db?also=host2:3306/db   sequence/tickets: Flickr ticket servers
//
// Parameters go in the query string; each package's documentation lists
// its own, and Schemes lists every form. Errors never show a password.
// The idforge binary relies on this registry; a Go program may call a
// backend's NewSource (redis, memcache, mongo) with a client it owns
// instead.
//
// What a failure does, in short (details in each package):
//
//   - A client crash loses nothing but the value in flight: the store
//     holds the counter.
//   - A store outage fails Next at once with an error wrapping
//     idforge.ErrUnavailable; the multi-member sources (autoinc,
//     tickets) skip the failing member and carry on with the others.
//   - A store that loses or rolls back its counter (cache eviction,
//     restart without persistence, restore from an old backup, fail-over
//     to a stale replica) would repeat values. Sources notice a missing
//     counter, and a counter below what they saw, and refuse with
//     ErrCounterLost instead of restarting low.
//
// # Per-period counters
//
// A Counter (an idforge.PeriodCounter) numbers things within calendar
// periods that restart: every second, minute, hour, day or month of a
// time zone. Serial numbers combine the period with its count:
// 250413120000 + 0001. Backends: Redis (sequence/redis), MongoDB
// (sequence/mongo) and SQL (sequence/sqlrow: MySQL/MariaDB, PostgreSQL,
// SQLite), behind the small
// CounterStore interface. OpenCounter builds one from a URL:
//
//	redis://host:6379/0?name=order_seq&period=second&cap=16383&over_cap=wait&tz=Asia/Shanghai&dir=/var/lib/idforge
//	mysql://user:password@host:3306/db?name=waybill&period=day&cap=99999
//	postgres://user@host:5432/db?name=waybill&period=day
//	sqlite:///var/lib/idforge/counters.db?name=waybill&period=month
//	mongodb://h1,h2,h3/db?replicaSet=rs0&name=waybill&period=day
//
// Periods are identified by stamps, the decimal number of their calendar
// fields (20250413120509 for a second, 20250413 for a day; see
// Period.Stamp). Counts start at 1. A cap bounds a period's count (99999
// for five digits); over it the counter waits for the next period and
// counts there (OverCapWait, bounded by the caller's context) or fails at
// once with ErrCapReached (OverCapRefuse). Both ErrCapReached and
// ErrCounterLost errors wrap idforge.ErrUnavailable too.
//
// # The clock-rollback guard
//
// The Redis date-stamped order-number scheme keeps "the last number" and
// refuses to go below it. Here the
// mark is the last (period, n) counted, ordered by period then n:
//
//   - In memory, each Counter keeps the mark it last issued or recovered,
//     raised by compare-and-set.
//   - In the store, the mark of the counter's name is updated in the same
//     atomic step as each count (Redis: one Lua script updates the
//     period's key and the mark key; SQL: one transaction on the name's
//     row, which is the mark). It is shared by all nodes: the latest
//     period any node counted in, and its count.
//   - In a file, counter-<name>.mark in the directory the caller passes
//     (CounterSettings.Dir), written with datadir.WriteFileAtomic before a
//     number it does not cover is returned: FileAhead numbers at a time
//     and at every new period. Close writes the exact mark.
//
// At start, NewCounter recovers the later of the file's mark and the
// store's. Every count is asked for in the later of the caller's period
// and the mark's, with the local mark as a floor the store must count
// above even if it lost its own state; the Counter checks the answer and
// never returns a (period, n) at or below the mark it passed. So:
//
//   - Clock behind the mark's period (moved back, or another node's clock
//     is ahead): the counter keeps counting in the mark's period, and
//     returns that later period, so the serial's date never goes back.
//     When that period is full it waits until the clock reaches the next
//     period (OverCapWait: after a one-hour step back, an hour, bounded by
//     the context) or refuses (OverCapRefuse).
//   - A node whose clock runs ahead pulls the counter's periods ahead for
//     every node: keep clocks synchronised; that is the price of never
//     repeating across nodes whose clocks disagree.
//   - Restart after a crash: the store's mark (or, if the store lost it,
//     the file's) is recovered and counting continues above it, even
//     with the clock now behind. Recovering from the file skips up to
//     FileAhead numbers of that period (gaps are allowed); a clean Close
//     skips none.
//   - Redis count keys expire a few periods after their period began; the
//     mark key does not, so a clock moved back past the expiry still
//     counts on from the mark.
//   - A store that loses everything (a Redis restart without persistence)
//     is covered for each node's own numbers by its file; numbers other
//     nodes issued in the same period are not: run Redis with persistence
//     and replicas that have every write, or let a lost store stay down
//     for a period (why that scheme counts per second: a Redis down for
//     more than a second comes back in a new second, whose count starts
//     afresh).
//
// In a zone with daylight saving, the autumn's repeated hour has the
// same stamps as its first occurrence and is treated like a clock moved
// back. Prefer UTC or a zone without daylight saving.
package sequence
