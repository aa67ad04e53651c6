// Package timeid issues 128-bit string IDs that need no coordination:
// time-ordered RFC 9562 version 7 UUIDs and ULIDs, and random version 4
// UUIDs (see UUIDv4; the rest of this page is about the time-ordered
// two): no store, no worker ID. Uniqueness across nodes rests on random bits (a UUIDv7 has
// a 41-bit random counter start per millisecond and 32 fresh random bits
// in every ID; a ULID 80 random bits per millisecond), and order on a
// 48-bit Unix millisecond timestamp in the most significant bits, so IDs
// sort by time as bytes and as strings (k-sorted across nodes) and index
// well as database keys.
//
//	uuidv7  017f22e2-79b0-7cc3-98c4-dc0c0c07398f   36 characters
//	ulid    01ARZ3NDEKTSV4RRFFQ69G5FAV             26 characters
//	uuidv4  f47ac10b-58cc-4372-a567-0e02b2c3d479   36 characters, random
//
// NewUUIDv7, NewULID and NewUUIDv4 build generators (or New by Kind).
// Next returns one ID and NextN a batch under one lock. The IDs one generator returns
// strictly increase, even many in one millisecond and even when the clock
// goes backwards: each generator then keeps the timestamp of its last ID
// and counts on until the clock catches up, rather than wait or refuse as
// a snowflake generator must (a snowflake ID has no random bits to fall
// back on). The UUIDv7 and ULID types document the exact method.
//
// There is no persisted time fence: a generator started while the clock is
// behind the time of IDs issued before the restart issues IDs that sort
// before those. They are still unique (by their random bits), but not in
// order with the earlier ones.
//
// UUIDv7Time, ULIDTime and Time read the timestamp back out of an ID;
// ParseUUIDv7 and ParseULID parse one. An ID reveals its creation time to
// the millisecond to anyone: where that matters, use an obfuscated number
// instead (package obfuscate).
//
// Generators take an idforge.Clock in Settings so that tests can fake
// time; they are safe for concurrent use.
package timeid
