// Package segment issues IDs from number segments claimed in a store, the
// way Meituan's Leaf-segment does, with a double buffer and an adaptive
// segment length.
//
// A key's row in the store holds max_id, the first value nobody has
// claimed. An Allocator claims a segment by advancing max_id in one atomic
// update (idforge.SegmentStore) and hands the values of [old max_id, new
// max_id) out of memory. Claims never overlap, so Allocators sharing a
// store never issue the same value; a node that crashes loses the rest of
// its segments (a gap) and never reissues them. Values one Allocator
// returns to any one caller goroutine strictly increase. An Allocator is
// safe for concurrent use.
//
// The next segment is claimed in the background before the current one
// runs out. Each claim is sized to last TargetDuration at the measured
// rate (and SurviveOutage at the recent peak), at least twice the slowest
// recent claim, within MinStep, MaxStep and the key's room, and at most 4×
// the previous claim unless the slowest claim needs more, so callers wait
// for the store only at a cold start. When the store fails, the Allocator
// issues from its buffers and retries with backoff; once they are empty
// calls fail at once with an error wrapping idforge.ErrUnavailable, and
// issuing resumes by itself when a claim succeeds. NextInto and
// AppendRangesBelow issue in bulk at a cost that does not grow with the
// count.
//
// # Global order
//
// A key in idforge.OrderGlobal (Settings.Global) promises more: every
// value a call returns is greater than every value any call, on any node,
// returned before the call began. Such an Allocator buffers nothing. A
// call joins the open batch; the batch is closed and claimed at once when
// no claim is in flight, otherwise when the claim in flight returns, so
// the calls that arrive during one claim share the next (group commit).
// A batch claims exactly the values its calls asked for,
// ClaimSegment(key, their sum), and each call gets its part in the order
// the calls joined. For calls A and B where A returned before B began:
//
//  1. A's values come from claim Ca, which returned before A did: a call
//     hands out nothing else, and no node hands a key in global order
//     back to the store or keeps any of its values for later.
//  2. B's values come from claim Cb, which began after B joined its batch
//     (a batch is closed before its claim begins), so after B began,
//     after A returned, after Ca returned.
//  3. The store's claim is linearizable (idforge.GlobalOrderStore): one
//     atomic update of the key's row or document on the primary, durable
//     before it returns, and max_id only grows. So Cb, which began after
//     Ca returned, starts at or above Ca's end. (A store that fails over
//     to a replica lacking Ca is fenced until `idforge keys repair`
//     raises max_id above every value handed out.)
//
// Hence every value of B is greater than every value of A. Nothing in
// this depends on time or on a node staying alive: a node paused after its
// claim returned has not returned its calls, which are therefore
// concurrent with whatever others do meanwhile; a claim whose answer is
// lost fails the calls it served and its values are a gap; a store that
// retries a claim whose commit it could not confirm makes a new, later
// claim. The cost: every batch is a round trip to the store, one at a time
// per key and node, and the key stops issuing while the store is
// unavailable: a claim's failure is its calls' failure.
package segment
