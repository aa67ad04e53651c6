// Package memcache is the memcached sequence source, using
// github.com/bradfitz/gomemcache: incr on one item, created with add.
//
// Importing it registers the scheme "memcache" with sequence.Open:
//
//	memcache://host:11211?key=orders&create=true&start=1&timeout=3s
//
//	key             the counter's key, required
//	create          create the key if it is missing when the source opens
//	                (default false; see below)
//	start           the first value of a key it creates (default 1)
//	timeout         bound on each call to memcached (default 3s, as for the SQL stores);
//	                gomemcache takes no context, ctx is checked before each call
//	max_idle_conns  idle connections kept (default 16)
//
// One server only: a counter lives on one server anyway, and a client
// that spread keys over several would move a key to another server (and
// restart it) when the first one is down.
//
// # Eviction
//
// memcached is a cache: it may evict the counter under memory pressure
// (its LRU keeps a hot counter, but not for certain) and forgets every
// item when it restarts. A counter re-created at its start would repeat
// every value, so the source is built to refuse rather than restart low:
//
//   - Next uses incr, which never creates a missing item. When the item
//     is missing, Next fails with sequence.ErrCounterLost (wrapping
//     idforge.ErrUnavailable), and keeps failing until the item exists
//     again.
//   - Each Source remembers the largest value it has seen; an answer not
//     above it (someone re-created the item low) is refused the same way.
//   - A missing item at start is created only with create=true (or
//     SourceConfig.Create), meant for the very first start; at start the
//     source cannot tell a new counter from an evicted one. Without it,
//     opening fails with sequence.ErrCounterLost.
//   - A Go program may set SourceConfig.Floor, a function returning a
//     durable lower bound on every value ever issued kept elsewhere (the
//     largest order number in the orders table, say). Then a missing item
//     is re-created with add at the larger of the floor and the largest
//     value this source has seen, and issuing carries on. This needs the
//     floor to be truly above everything issued by every node.
//
// Run memcached with -M (return errors instead of evicting) if it serves
// counters only. Failures otherwise: a client crash loses the value in
// flight at most; an outage fails Next at once with an error wrapping
// idforge.ErrUnavailable; past the largest int64 Next returns
// idforge.ErrSpaceExhausted.
package memcache
