// Package compose makes any sequence source highly available and fast,
// as JD's (京东) logistics serial-number platform does. Balanced spreads
// calls over 2^n sources and steps around the ones that fail or are slow
// (its BitwiseLoadBalanceSequenceGen); Expanded turns each value of a slow
// source into 2^m IDs handed out from memory, fetched ahead of need (its
// QueuedSequenceGen). Both wrap any idforge.Generator (the sources of
// package sequence, an idforge key, or each other) and are safe for
// concurrent use. JD's own set-up is an Expanded over a Balanced:
//
//	ID = ((v << n) | i) << m | k    v: value of source i; k: 0 … 2^m−1
//
// # Balanced
//
// NewBalanced (or OpenBalanced, from URLs) takes 2^n sources, at most
// MaxSources. Each call goes to the next admitted source in turn and
// returns v << n | i for its value v (1 ≤ v ≤ math.MaxInt64 >> n), so
// the values of different sources never meet. A source that errs, or
// makes SlowCount calls slower than SlowThreshold within SlowWindow, is
// ejected for RescueAfter and the call goes on to the next admitted
// source (the defaults are JD's: 5 min, 200 ms, 3, 60 s; choose seconds
// for sources that come back in seconds). A source whose value does not
// fit, or that reports idforge.ErrSpaceExhausted, is left out for good.
// With no source admitted Next fails at once, calling none, with an
// error wrapping idforge.ErrUnavailable that gives each source's state.
// A caller's own context ending ejects nothing.
//
// IDs are unique as long as each source never repeats a value and each
// index always belongs to the same counter: every node that issues from
// the same counters must list them in the same order, and n must not
// change (9 is both 2<<2|1 and 1<<3|1). To add sources, start the new
// layout's counters above every ID issued so far, shifted right by the
// new n. IDs are not ordered (an ejected source falls behind); they trend
// upwards when the sources advance evenly.
//
// # Expanded
//
// NewExpanded takes one value v from its inner source and hands out
// v << m | 0 … v << m | 2^m−1 from memory (m = MemoryBits), calling the
// inner source once per 2^m IDs; v must be at least 1 and at most
// math.MaxInt64 >> m, other values fail with ErrOutOfRange and
// idforge.ErrSpaceExhausted. A prefetcher keeps enough blocks ready for
// Ahead plus one inner call at the measured rate, up to MaxQueued; a
// caller that finds none ready fetches one itself, and callers waiting
// with it share its error. Expanded implements idforge.BatchGenerator.
//
// A crash, or Close, loses the unused IDs of the current block and of the
// blocks ready or being fetched, at most (1 + MaxQueued) × 2^m: gaps,
// never duplicates, since each value v owns [v << m, (v+1) << m) alone.
// That holds only if every Expanded over one counter uses the same m and
// nobody uses the counter's values bare (5 << 3 and 10 << 2 are both 40);
// to change m, move the counter above every ID issued, shifted right by
// the new m. IDs are not ordered: blocks fetched concurrently are queued
// as they arrive.
package compose
