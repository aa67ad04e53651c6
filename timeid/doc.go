// Package timeid issues 128-bit string IDs that need no store and no
// worker ID: time-ordered RFC 9562 version 7 UUIDs and ULIDs, and random
// version 4 UUIDs (UUIDv4).
//
//	uuidv7  017f22e2-79b0-7cc3-98c4-dc0c0c07398f   36 characters
//	ulid    01ARZ3NDEKTSV4RRFFQ69G5FAV             26 characters
//	uuidv4  f47ac10b-58cc-4372-a567-0e02b2c3d479   36 characters, random
//
// The time-ordered two carry a 48-bit Unix millisecond timestamp in their
// most significant bits, so they sort by time as bytes and as strings
// (k-sorted across nodes); uniqueness across nodes rests on random bits (a
// UUIDv7 has a 41-bit random counter start per millisecond and 32 fresh
// random bits, a ULID 80 random bits per millisecond). The IDs one
// generator returns strictly increase, even many in one millisecond and
// even when the clock goes back: it keeps its last timestamp and counts
// on until the clock catches up (the UUIDv7 and ULID types give the
// method). There is no persisted time fence, so IDs issued after a restart
// with the clock behind sort before earlier ones: unique, not in order.
//
// NewUUIDv7, NewULID and NewUUIDv4 (or New by Kind) build generators,
// safe for concurrent use, that take an idforge.Clock in Settings; Next
// returns one ID and NextN a batch. UUIDv7Time, ULIDTime and Time read the
// timestamp back, ParseUUIDv7 and ParseULID parse an ID. An ID reveals its
// creation time to the millisecond: where that matters, use an obfuscated
// number (package obfuscate).
package timeid
