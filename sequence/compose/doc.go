// Package compose makes any sequence source highly available and fast,
// as JD's (京东) logistics serial-number platform does: Balanced spreads calls
// over 2^n sources and steps around the ones that fail
// (BitwiseLoadBalanceSequenceGen), and Expanded turns each value of a
// slow source into 2^m IDs handed out from memory, fetched ahead of need
// (QueuedSequenceGen). Both wrap any idforge.Generator: the sources of
// package sequence (Redis INCR, memcached, an SQL row, auto-increment
// tables, …), an idforge key, or each other. JD's own set-up is an
// Expanded over a Balanced:
//
//	ID = ((v << n) | i) << m | k    v: value of source i; k: 0 … 2^m−1
//
// # Balanced
//
// NewBalanced takes 2^n sources (n ≥ 0, at most MaxSources); source i
// has index i. Each call goes to the next admitted source in turn (one
// atomic counter over the list of admitted sources) and returns
// v << n | i for its value v, so the values of different sources never
// meet. v must be at least 1 and at most math.MaxInt64 >> n.
//
// A source that returns an error is ejected for RescueAfter, and the
// call goes on to the next admitted source, each tried at most once,
// while the caller's context lasts: a caller does not fail because the
// source it landed on failed while another could answer. A successful
// call slower than SlowThreshold is a slow call (its value is used);
// SlowCount slow calls of one source within a sliding SlowWindow eject
// it the same way. After RescueAfter the source is admitted again, by
// the first call that notices, with its slow calls forgotten. A source
// whose value does not fit, is not positive, or that reports
// idforge.ErrSpaceExhausted is left out for good and logged. When no
// source is admitted, Next fails at once, without calling any, with an
// error wrapping idforge.ErrUnavailable that gives each source's state
// (idforge.ErrSpaceExhausted when all are exhausted). A caller whose own
// context ends is not the source's fault: nothing is ejected then.
//
// The defaults are JD's:
//
//	RescueAfter    5 min   JD's text ("默认为5分钟"); its sample configuration
//	                       sets onErrorRescueThresholdInSeconds = 2000
//	SlowThreshold  200 ms  timeoutThresholdInMilliseconds = 200
//	SlowCount      3       timeoutEventCountThreshold = 3
//	SlowWindow     60 s    timeoutTimeThresholdInSeconds = 60
//	CallTimeout    none    not in JD's design; when set, bounds each call
//
// JD's design speaks of x timeouts "in a row" (连续) within the window; here
// every slow call in the window counts, which ejects a source that is
// slow every other call as well. JD's design gives one rescue time for both
// kinds of ejection, and so does Balanced. Five minutes is long for a
// source that comes back in seconds (a restarted Redis): with few
// sources, choose seconds. Nothing is tried while every source is
// ejected, so that a dead set fails fast rather than making each caller
// wait for timeouts.
//
// OpenBalanced builds a Balanced from source URLs (sequence.Open; import
// sequence/all or the backends used), in index order, and owns them:
//
//	compose.OpenBalanced(ctx, []string{
//		"redis://redis-a:6379/0?key=orders:0",
//		"redis://redis-a:6379/0?key=orders:1",
//		"redis://redis-b:6379/0?key=orders:2",
//		"redis://redis-b:6379/0?key=orders:3",
//	}, compose.BalancedOptions{RescueAfter: 30 * time.Second})
//
// For a quick fail-over, give the sources short timeouts and no retries
// of their own (go-redis: dial_timeout, read_timeout, max_retries=-1),
// or set CallTimeout. Stats reports each source's state, calls, errors,
// slow calls and ejections, for metrics.
//
// Guarantees: IDs are unique as long as each source never repeats a
// value and each index always belongs to the same counter. Every node
// that issues from the same counters must list them in the same order
// (two different counters at one index repeat each other's IDs), and n
// must not change: with other n the same ID decodes to another source
// and value (9 is 2<<2|1 and 1<<3|1). To add sources, start the new
// layout's counters above every ID issued so far, shifted right by the
// new n. IDs are not ordered: source 0's 1000th value follows source 3's
// 999th, and an ejected source falls behind. They are trend-increasing
// when the sources advance evenly. The n index bits are lost to every
// source's range. The crash of a caller loses at most the values in
// flight: gaps.
//
// # Expanded
//
// NewExpanded takes one value v from its inner source and hands out
// v << m | 0 … v << m | 2^m−1 from memory (m = MemoryBits, JD's
// memoryBitLength), so the inner source is called once per 2^m IDs. v
// must be at least 1 (so no ID is 0 and the first is 2^m) and at most
// math.MaxInt64 >> m; other values fail with an error wrapping
// ErrOutOfRange and idforge.ErrSpaceExhausted. The hot path is a pointer
// load and one atomic add on the current block; a short mutex switches
// blocks every 2^m IDs. It implements idforge.BatchGenerator.
//
// A prefetcher keeps blocks ready so that callers rarely wait for the
// inner source: it samples the rate at which blocks are taken (every
// Ahead/4, from 1 to 25 ms) and keeps enough ready for Ahead plus one
// inner call at that rate, from 1 up to MaxQueued, fetching with up to
// Fetchers calls in flight: JD's asynchronous generation that
// adapts to the consumption rate. A caller that
// finds no block ready fetches one itself (the others that need one wait
// for it and share its error, so an inner failure reaches callers at
// once); Stats counts those waits. The defaults:
//
//	MemoryBits  3      memoryBitLength = 3 in JD's sample configuration
//	Ahead       100 ms JD's sample has reserveTimeInMilliseconds = 10 ms, a
//	                   20 ms loop (loopSleepInterval); this prefetcher is woken by
//	                   consumption and keeps more to ride out latency spikes
//	MaxQueued   1024   not in JD's design; bounds what a crash loses
//	Fetchers    4      not in JD's design (its "thread pool" has no size)
//	NoPrefetch  false  JD's enableAsync = true
//
// What a crash loses: the unused IDs of the current block and of the
// blocks ready or being fetched, at most (1 + MaxQueued) × 2^m IDs and
// usually (1 + Stats().Target) × 2^m: gaps, never duplicates. Close loses the same. A restarted process
// takes new values from the inner source, which never repeats one, and
// each value v owns the IDs [v << m, (v+1) << m) alone, so nothing is
// issued twice across restarts or across processes sharing the inner
// counter. That holds only if every Expanded over one counter uses the
// same m and nobody uses the counter's values bare: 5 << 3 and 10 << 2
// are both 40. Changing m needs the counter moved above every ID issued
// so far, shifted right by the new m. IDs are not ordered: blocks fetched
// concurrently are queued as they arrive, and a block a caller fetched
// itself may pass queued ones.
package compose
