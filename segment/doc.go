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
//
// # Global order
//
// A key in idforge.OrderGlobal (Settings.Global) promises more: every
// value a call returns is greater than every value any call, on any node,
// returned before the call began. Such an Allocator buffers nothing. A
// call joins the open batch of its Allocator; when no claim is in flight
// the batch is closed and claimed at once, otherwise when the claim in
// flight returns, so on a busy key the calls that arrive during one claim
// share the next (group commit). A batch claims exactly the values its
// calls asked for, ClaimSegment(key, their sum), and each call gets the
// part at its offset, in the order the calls joined. Why that keeps the
// promise, for calls A and B where A returned before B began:
//
//  1. A's values come from claim Ca, which returned before A did: a call
//     hands out nothing else, and no node hands a key in global order
//     back to the store (Close) or keeps any of its values for later.
//  2. B's values come from claim Cb, which began after B joined its batch
//     (the batch is closed before its claim begins), so after B began,
//     after A returned, after Ca returned.
//  3. The store's claim is linearizable (idforge.GlobalOrderStore): one
//     atomic UPDATE of the key's row, or $inc of its document, on the
//     primary, made durable before it returns. Cb began after Ca returned,
//     so it takes effect after Ca and starts at or above Ca's end: max_id
//     only grows. (A store that fails over to a replica lacking Ca is
//     fenced: it refuses every claim until `idforge keys repair` raises
//     max_id above every value handed out.) Hence every value of B is
//     greater than every value of A.
//
// Nothing in this depends on time or on any node staying alive. A node
// paused (SIGSTOP) after its claim returned has not returned its calls
// yet, so they are concurrent with whatever others do meanwhile; paused
// before its claim began, the claim still begins after its calls. A claim
// whose answer is lost (its context ends, the connection breaks, the
// node dies) fails the calls it served, and its values are a gap, never
// handed to a later call; a store that retries a claim whose COMMIT it
// could not confirm makes a new claim, later still. A node killed loses
// nothing another node needs.
//
// The cost: every batch is a round trip to the store, one at a time per
// key and node, and the key stops issuing while the store is
// unavailable. A claim's failure is the calls' failure: there is no
// buffer to ride out an outage, and no retry behind the caller's back.
package segment
