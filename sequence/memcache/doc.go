// Package memcache is the memcached sequence source, through
// github.com/bradfitz/gomemcache: incr on one item of one server, created
// with add. Importing it registers the scheme "memcache" with
// sequence.Open:
//
//	memcache://host:11211?key=orders&create=true&start=1&timeout=3s
//
//	key             the counter's key, required
//	create          create the key if it is missing at open (default
//	                false: for the very first start only)
//	start           the first value of a key it creates (default 1)
//	timeout         bound on each call (default 3s); gomemcache takes no
//	                context, ctx is checked before each call
//	max_idle_conns  idle connections kept (default 16)
//
// memcached may evict the counter or forget it on restart, and a counter
// re-created at its start would repeat every value, so the source refuses
// rather than restart low: Next uses incr, which never creates an item,
// and fails with sequence.ErrCounterLost (wrapping idforge.ErrUnavailable)
// while the item is missing or answers a value not above the largest this
// Source has seen. A Go program may set SourceConfig.Floor, a durable lower
// bound kept elsewhere, to have a missing item re-created above it. An
// outage fails Next at once with idforge.ErrUnavailable; past the largest
// int64 Next returns idforge.ErrSpaceExhausted.
package memcache
