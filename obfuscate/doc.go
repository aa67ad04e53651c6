// Package obfuscate turns issued int64 IDs into forms that do not give the
// business away: a keyed, reversible permutation hides the order and the
// number of IDs, and short text forms (base62, Sqids, hex) make them
// compact. Everything decodes back to the original ID.
//
// Sequential IDs leak volume: a competitor who places an order on Monday
// and another on Tuesday subtracts the two order numbers and knows how many
// orders were taken in between. A Permutation under a secret key maps
// [0, 2^bits) onto itself so that consecutive IDs land far apart, and
// Decode undoes it:
//
//	p, _ := obfuscate.New(key, 40) // key: ≥ 16 random bytes from config
//	c, _ := p.Encode(1001)         // somewhere in [0, 2^40), far from Encode(1002)
//	v, _ := p.Decode(c)            // 1001
//
// # Formats
//
// A Format, read from a spec in configuration, combines an optional
// permutation with a text form:
//
//	spec    = [ feistel "+" ] text | feistel | "" .
//	feistel = "feistel:bits=" N .                  N: 1 to 63
//	text    = name [ ":" option { "," option } ] .
//	option  = key "=" value .
//
//	name     options                             example of 1001 (no feistel)
//	decimal  min=0..64                           1001; decimal:min=8 → 00001001
//	hex      min=0..64 (lower-case)              3e9
//	base62   min=0..64, alphabet=62 chars        G9; base62:min=7 → 00000G9
//	sqids    min=0..255, alphabet=≥3 chars,      (depends on the alphabet)
//	         blocklist=default|none
//
// Stage names, option keys and values are case-sensitive; nothing may be
// blank, no option may repeat, and values are printable ASCII without
// space, ',' or '+' (so alphabets with ',' or '+' cannot be given in a
// spec). min pads on the left with the alphabet's zero digit (Sqids pads
// its own way). An empty spec is plain decimal, and "feistel:bits=40" alone
// writes the permuted number in decimal. Format.String writes the
// canonical spec back. Examples:
//
//	base62:min=8
//	sqids:min=10,alphabet=abcdefghijkmnpqrstuvwxyz23456789
//	feistel:bits=40+base62:min=7
//
// A spec never contains the key. Keys live in configuration under a name,
// and the caller attaches one: Format.WithKey, or set Format.Permute and
// call Format.Validate at start-up. Choose bits to cover every ID the key
// will ever issue (40 bits is about 1.1e12); Encode refuses larger
// values. Pad to the length of the largest value (base62:min=7 for 40
// bits) so that all IDs look alike.
//
// Decoding is strict: every ID has exactly one string, and any other
// string (a superfluous leading zero, a foreign character, a Sqids string
// that the library would read leniently) is rejected with an error
// wrapping idforge.ErrInvalidArgument.
//
// # Construction
//
// The permutation is an alternating Feistel network over exactly bits
// bits: the high half has ceil(bits/2) bits and the low half floor(bits/2);
// each round XORs a keyed function of one half into the other and swaps
// them, so with odd widths the halves trade widths each round and no value
// ever leaves [0, 2^bits): no cycle-walking is needed. There are Rounds
// (10) rounds, as in NIST's FF1; the round function is SipHash-2-4, a PRF
// built for short inputs (about 15 ns per call, no allocation), under a
// 128-bit key derived from the configured key with HMAC-SHA256. The round
// number and the width are part of every round input, so widths and rounds
// never share a function.
//
// # Security
//
// The permutation hides order and volume from outsiders who do not hold
// the key. It is not encryption of secrets: the domain is small, the
// construction has no nonce, and an ID should never carry information
// whose disclosure matters. Anyone with the key decodes every ID. Keep the
// key secret, random and at least MinKeyLen bytes.
//
// Nor does it authenticate: every string of the right shape decodes to
// some number, issued or not, so look the result up before trusting it.
// A guessed string hits one of n issued IDs with probability n/2^bits; a
// width well above what the key will issue (48 bits for IDs below 2^32)
// makes valid IDs sparse and hard to guess.
//
// Key rotation changes every encoded ID: the same ID encodes differently
// under a new key, and strings handed out under the old key decode to
// different (wrong) numbers under the new one. Rotate only together with
// a migration that keeps the old key for decoding old strings, or keep one
// key per format for its lifetime.
//
// Base62, hex, decimal and Sqids alone hide nothing: they are encodings
// anyone can reverse, whatever the alphabet. Combine them with a feistel
// stage.
//
// All types are immutable once built and safe for concurrent use.
package obfuscate
