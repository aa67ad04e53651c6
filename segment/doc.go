// Package segment issues IDs from number segments claimed in a store, the
// way Meituan's Leaf-segment does, with a double buffer and an adaptive
// segment length.
//
// A key's row in the store holds max_id, the first value nobody has
// claimed. A node claims a segment by advancing max_id by a step in one
// atomic update and then hands the values of [old max_id, new max_id) out
// of memory. Claims never overlap, so nodes sharing a store never issue the
// same value; a node that crashes loses the rest of its segments (a gap),
// never reissues them.
//
// Double buffer: when a configurable share of the current segment has been
// used (10% by default) the next segment is claimed in the background, so
// callers never wait on the store while a buffered range remains. The
// claim starts earlier when the values left would not outlast it: while
// they would last twice the slowest recent claim at the measured rate.
//
// Adaptive step: each claim is sized from the rate measured over the
// previous and the current segment so that one segment lasts about
// Settings.TargetDuration (15 minutes by default), and never less than
// twice the slowest recent claim, bounded by MinStep (the key's stored step
// unless set), MaxStep when set, and the key's room below math.MaxInt64.
// There is no fixed cap: at 100 M IDs/s a 15-minute segment holds 9×10¹⁰
// IDs. Claims grow at most 4× each unless the slowest claim needs more, so
// after a cold start callers wait for a few claims (the first segment is
// the key's stored step) and then never, as long as the store answers
// within the slowest claim seen.
//
// Bulk: NextInto fills a caller's slice without allocating, and
// AppendRangesBelow hands out ranges of consecutive IDs at a cost that
// does not grow with their length.
//
// When the store fails, an Allocator keeps issuing from its buffers while
// it retries in the background with exponential backoff. Once the buffers
// are empty, callers fail fast with an error wrapping idforge.ErrUnavailable
// instead of hanging; issuing resumes on its own when a claim succeeds.
//
// Values issued by one Allocator strictly increase in the order the calls
// return them to any one caller goroutine.
package segment
