// Package verify checks a running idforge cluster the way Jepsen's
// unique-ids workload checks a database: concurrent clients ask every
// node for IDs and serials for a while, and every answer is checked.
//
//   - Unique: no value is answered twice, by one node or by two.
//   - Increasing: a segment key's IDs strictly increase for each client of
//     each node.
//   - Worker: no two nodes issue snowflake IDs with the same datacenter
//     and worker ID, and all decode IDs with the same layout.
//   - Skew: a snowflake ID's time lies between when it was asked for and
//     when it arrived, give or take the allowed clock skew.
//   - Template: a serial has the shape of its definition's template (see
//     serial.Template.Pattern).
//
// Run drives the nodes through package client and returns a Report; a
// Checker does the checking and can be fed by a program that drives the
// nodes its own way. Errors the nodes answer are counted by code, not
// held against them: a clear error is what idforge promises when it
// cannot issue.
//
// A run keeps every value it saw, compactly: segment IDs in a paged
// bitmap (NewRangeSet, about a bit per ID when a node's segments are used
// densely), snowflake IDs and serial hashes in an open-addressing hash set
// (NewHashSet, 10 to 15 bytes per value), so 100 million IDs fit in well
// under 2 GiB (BENCHMARKS.md has the measured figures). Serials are
// compared by a 64-bit hash of their text: the chance that two different
// serials among n collide is about n²/2⁶⁵, one in 3,700 for 100 million.
//
// `idforge verify` is the command-line form.
package verify
