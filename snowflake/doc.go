// Package snowflake issues 63-bit, time-ordered IDs in the manner of
// Twitter's snowflake: each ID packs the time, the issuing generator's
// datacenter and worker IDs and a per-tick sequence number into a
// non-negative int64. No storage round trip is needed to issue an ID, so a
// Generator issues millions per second; uniqueness across generators rests
// on each running generator having its own worker (and datacenter) ID.
//
// # Layouts
//
// How the 63 bits are split is a Layout: the tick length (Unit: 1 ms,
// 10 ms or 1 s), the Epoch the time field counts from, and the fields from
// the most significant bits down. The sign bit is always 0. The twitter
// preset, for example:
//
//	 63 62                                     22 21        17 16      12 11           0
//	+--+-----------------------------------------+------------+----------+--------------+
//	|0 |  time: 41 bits, ms since 1288834974657  | datacenter | worker   | sequence     |
//	|  |  (2010-11-04T01:42:54.657Z)             | 5 bits     | 5 bits   | 12 bits      |
//	+--+-----------------------------------------+------------+----------+--------------+
//
// It runs out of time bits on 2080-07-10 (Layout.Expires) and issues at
// most 4096 IDs per millisecond per worker (Layout.CapPerSecond:
// 4,096,000/s). Other presets (Presets, Preset) follow sonyflake (10 ms
// ticks, sequence above a 16-bit machine ID), Vesta's max-peak (1 s ticks,
// 20-bit sequence) and min-granularity (1 ms ticks) types, and a js-safe
// layout whose IDs stay below 2^53. ParseLayout reads a layout from a
// spec such as "time:41,datacenter:5,worker:5,sequence:12,unit=1ms,epoch=1288834974657",
// and Layout.String writes one. Layout.Explain decodes any ID into its
// fields and time; Layout.Make forges an ID from fields (to query a
// range of IDs by time, say).
//
// # Issuing
//
// New builds a Generator from Settings. Next returns one ID; NextInto
// fills a slice the caller reuses with a batch (NextN returns a new one),
// taking what the open tick has left in one atomic step, the rest under
// one lock. Within a tick the sequence counts up; when it is used up
// Next waits for the next tick, sleeping for most of the wait and spinning
// only for the last tens of microseconds, so a generator reaches its
// layout's cap with most of a CPU to spare. A Generator is safe for
// concurrent use; the IDs it returns strictly increase in the order it
// returns them, and IDs of different generators sort by time (k-sorted).
//
// # Clock safety
//
// The wall clock can move backwards (NTP steps, a VM restored from a
// snapshot). While running, a Generator that finds the clock behind the
// newest tick it issued waits when the gap is at most MaxBackwardWait
// (5 ms by default) and otherwise refuses with an error wrapping
// idforge.ErrClockMovedBackwards until the clock catches up, as Meituan's
// Leaf does. Next reads the wall clock each time a tick opens and, within
// a tick, a cheaper clock (the processor's time-stamp counter where it is
// invariant, or else the monotonic clock) kept in step with it, so a step
// back is seen within one tick, while the IDs go on in the current tick.
// Across restarts, an optional Fence durably records a time
// ahead of every issued tick; after a crash a new Generator waits for the
// clock to pass that time if it is close, and refuses to start if it is
// far. Without a Fence a restart with the clock set back can reissue IDs.
// When the clock reaches the layout's Expires, Next returns
// idforge.ErrLayoutExpired rather than an ID that would overflow.
package snowflake
