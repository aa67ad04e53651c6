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
//   - Template: a serial has the shape of its template (serial.Template.Pattern).
//
// Run drives the nodes through package client and returns a Report; a
// Checker does the checking for a program that drives the nodes its own
// way. Errors the nodes answer are counted by code, not held against
// them. Every value seen is kept compactly: segment IDs in a paged bitmap
// (NewRangeSet, about a bit per ID), snowflake IDs and 64-bit hashes of
// serials in an open-addressing hash set (NewHashSet, 10 to 15 bytes per
// value); two different serials among n collide with a chance of about
// n²/2⁶⁵.
package verify
