// Package obfuscate turns issued int64 IDs into forms that do not give the
// business away: a keyed, reversible permutation hides the order and the
// number of IDs (consecutive order numbers tell a competitor the volume
// in between), and short text forms (base62, Sqids, hex) make them
// compact. Everything decodes back to the original ID. All types are
// immutable once built and safe for concurrent use.
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
// canonical spec back (see ExampleParseFormat).
//
// A spec never contains the key: the caller attaches one (Format.WithKey,
// or set Format.Permute and call Format.Validate). Encode refuses values
// at or above 2^bits. Decoding is strict: every ID has exactly one
// string, and any other string (a superfluous leading zero, a foreign
// character, a Sqids string the library would read leniently) is an
// error wrapping idforge.ErrInvalidArgument.
//
// # Construction and security
//
// The permutation is an alternating Feistel network over exactly bits
// bits (halves of ceil(bits/2) and floor(bits/2) bits that trade widths
// each round), so no value leaves [0, 2^bits) and no cycle-walking is
// needed; Rounds (10) rounds, as in NIST's FF1, of SipHash-2-4 under a
// 128-bit key derived from the configured key with HMAC-SHA256, the round
// number and the width in every round input.
//
// It hides order and volume from whoever lacks the key; it is not
// encryption (the domain is small, there is no nonce) and it does not
// authenticate: every string of the right shape decodes to some number,
// issued or not, which a guess hits with probability n/2^bits for n
// issued IDs. Keep the key secret, random and at least MinKeyLen bytes. A
// new key changes every encoded ID, and old strings decode to wrong
// numbers under it. Base62, hex, decimal and Sqids alone hide nothing.
package obfuscate
