// Package sequence holds idforge's sequence sources and per-period
// counters: the number generators of JD's (京东) logistics serial-number
// platform, Flickr-style ticket servers and the date-stamped Redis order
// numbers made of yyMMddHHmmss and a per-second INCR counter.
//
// # Sources
//
// A Source is an idforge.Generator backed by one store round trip per
// value: values never repeat across every client of the store, and may
// leave gaps (a value whose reply is lost is never handed out again).
// Open builds one from a URL whose scheme names its backend package,
// once that is imported (sequence/all imports them all; Schemes lists
// every form):
//
//	redis://host:6379/0?key=orders                    sequence/redis: INCR on one key
//	memcache://host:11211?key=orders                  sequence/memcache: incr on one item
//	mongodb://h1,h2,h3/db?name=orders                 sequence/mongo: $inc on one document
//	sqlrow+mysql://user@host:3306/db?name=orders      sequence/sqlrow: a row's current_value + 1
//	autoinc+mysql://user@host:3306/db?tables=4        sequence/autoinc: id << n | table over 2^n tables
//	tickets+mysql://user@h1:3306/db?also=h2:3306/db   sequence/tickets: Flickr ticket servers
//
// A client crash loses at most the value in flight. A store outage fails
// Next at once with an error wrapping idforge.ErrUnavailable (the
// multi-member sources skip the failing member). A store that lost or
// rolled back its counter (eviction, a restart without persistence, an
// old backup, a stale replica) is refused with ErrCounterLost rather than
// restarted low. Errors never show a password.
//
// # Per-period counters
//
// A Counter (an idforge.PeriodCounter) numbers things within calendar
// periods of a time zone that restart every second, minute, hour, day or
// month, over a CounterStore shared by all nodes (Redis, MongoDB, or SQL
// through sequence/sqlrow). OpenCounter builds one from a URL:
//
//	redis://host:6379/0?name=order_seq&period=second&cap=16383&tz=Asia/Shanghai&dir=/var/lib/idforge
//	mysql://user@host:3306/db?name=waybill&period=day&cap=99999
//
// A period is named by its stamp, the decimal number of its calendar
// fields (20250413 for a day; Period.Stamp). Counts start at 1. Over its
// cap a counter waits for the next period (OverCapWait, bounded by the
// context) or fails with ErrCapReached (OverCapRefuse); ErrCapReached and
// ErrCounterLost wrap idforge.ErrUnavailable too.
//
// The clock-rollback guard: a counter's mark is the last (period, n) it
// counted, ordered by period then n. It is kept in memory (raised by
// compare-and-set), in the store (updated in the same atomic step as each
// count, shared by every node) and, with CounterSettings.Dir, in the file
// counter-<name>.mark, written before a number it does not cover is
// returned (every FileAhead numbers and at each new period; Close writes
// the exact mark). NewCounter recovers the later of the file's mark and
// the store's; every count is asked in the later of the caller's period
// and the mark's, above the local mark even if the store lost its own,
// and an answer at or below the mark is refused. So a (period, n) never
// repeats: with the clock behind the mark the counter keeps counting in
// the mark's period and returns it, so the serial's date never goes back;
// a node whose clock runs ahead pulls every node's periods ahead; a
// restart continues above the recovered mark, skipping up to FileAhead
// numbers after a crash. A store that loses everything is covered by
// each node's file for that node's numbers only. In a zone with daylight
// saving the repeated autumn hour counts on in its first occurrence.
package sequence
