// Package idforge holds the contracts shared by every part of the idforge ID
// issuer: the Generator interfaces that strategies implement, the store
// interfaces that backends implement, key descriptions, the clock seam,
// the sentinel errors callers test with errors.Is, and the one error
// vocabulary (Code, codes.go) from which every transport and the client
// take their HTTP statuses, gRPC codes and retry rules.
//
// The strategies live in their own packages:
//
//   - segment: Leaf-style number segments claimed from a store, double
//     buffered in memory, strictly increasing per node;
//   - snowflake: 63-bit time + datacenter + worker + sequence IDs with a
//     configurable layout, clock-rollback guard and a persisted time fence.
//
// Backends live under store/ and register themselves with store.Register;
// only the idforge binary relies on that registry. A Go program that embeds
// idforge builds the backend it wants and passes it in.
//
// The guarantees every part keeps: within a key no value is ever issued
// twice (gaps are allowed); segment keys strictly increase per node;
// snowflake IDs are k-sorted by time; when an ID cannot be issued the caller
// gets a specific error, never a guess.
package idforge
