// Package snowflake issues 63-bit, time-ordered IDs in the manner of
// Twitter's snowflake: each ID packs the time, the issuing generator's
// datacenter and worker IDs and a per-tick sequence number into a
// non-negative int64. Issuing needs no storage round trip; uniqueness
// across generators rests on each running generator having its own
// worker (and datacenter) ID.
//
// # Layouts
//
// A Layout splits the 63 bits: the tick length (Unit: 1 ms, 10 ms or 1 s),
// the Epoch the time field counts from, and the fields from the most
// significant bits down; the sign bit is always 0. The twitter preset:
//
//	 63 62                                     22 21        17 16      12 11           0
//	+--+-----------------------------------------+------------+----------+--------------+
//	|0 |  time: 41 bits, ms since 1288834974657  | datacenter | worker   | sequence     |
//	|  |  (2010-11-04T01:42:54.657Z)             | 5 bits     | 5 bits   | 12 bits      |
//	+--+-----------------------------------------+------------+----------+--------------+
//
// It runs out of time bits on 2080-07-10 (Layout.Expires) and issues at
// most 4096 IDs per millisecond per worker (Layout.CapPerSecond). Presets
// lists the others (sonyflake, Vesta's max-peak and min-granularity, and
// js-safe, below 2^53). ParseLayout reads a spec such as
// "time:41,datacenter:5,worker:5,sequence:12,unit=1ms,epoch=1288834974657"
// and Layout.String writes one; Layout.Explain decodes an ID into its
// fields and time, and Layout.Make forges one from fields.
//
// # Issuing
//
// New builds a Generator from Settings. Next returns one ID; NextInto
// fills a slice the caller reuses (NextN returns a new one). When a tick's
// sequence is used up, Next waits for the next tick, sleeping for most of
// the wait. A Generator is safe for concurrent use; the IDs it returns
// strictly increase in the order it returns them, and IDs of different
// generators sort by time (k-sorted).
//
// # Clock safety
//
// While running, a Generator that finds the clock behind the newest tick
// it issued waits when the gap is at most MaxBackwardWait (5 ms by
// default) and otherwise refuses with an error wrapping
// idforge.ErrClockMovedBackwards until the clock catches up, or, with
// MaxBorrow, issues ahead of the clock within that budget. It compares
// the clock with its newest tick whenever a tick opens, so a step back is
// seen within one tick. Across restarts an optional Fence durably records
// a time ahead of every issued tick: after a crash a new Generator waits
// for the clock to pass it if it is close, and refuses to start if it is
// far. Without a Fence a restart with the clock set back can reissue IDs.
// At the layout's Expires, Next returns idforge.ErrLayoutExpired.
package snowflake
