// Package client is the Go client of idforge: one Client interface for
// every way of running it (Vesta's deployment modes: embedded, a central
// server, REST).
//
//   - NewEmbedded: the issuer runs inside the calling process; no network.
//     It takes the issuer as the Issuer interface, so a program that uses
//     only the remote modes does not link the issuer.
//   - NewGRPC: a central idforge server (or several) over gRPC.
//   - NewHTTP: the same over the REST API (/v1/ids, /v1/serials, /v1/explain).
//
// Code written against Client works unchanged whichever mode the
// deployment picks, and Client.Key turns a client into an
// idforge.BatchGenerator for one key. Besides integer IDs (Next, NextN) a
// client issues string IDs (NextStrings: uuidv7, ulid and uuidv4 keys, or a key's
// text format) and serial numbers (NextSerial: templates the server
// defines, with per-call parameters).
//
// # Errors
//
// A remote client maps the server's error code (the JSON body's
// error.code over HTTP, the google.rpc.ErrorInfo reason over gRPC) back to
// the idforge sentinel, so errors.Is(err, idforge.ErrUnknownKey) works in
// every mode. The server's answer itself is an *Error (errors.As). When no
// server answers at all the error wraps idforge.ErrUnavailable.
//
// # Several servers
//
// NewHTTP and NewGRPC take the addresses of several nodes in order of
// preference (put the nodes of the caller's own data center first, as
// Leaf's clients do). A client is sticky: every call goes to the most
// preferred node that has not failed recently. When a call fails without
// an answer (connection refused or reset, no answer within half the time
// left) or with an answer that says "not now" (gRPC UNAVAILABLE, HTTP
// 502/503/504), the node is set aside for 30 s and the call is retried on
// the next one, within the call's context and at most WithRetries times.
// After 30 s the preferred node is tried again (fail-back). An error that
// another node would answer the same way (a bad key, an unknown key, a bad
// count, a refused or rate-limited token: 4xx, INVALID_ARGUMENT,
// NOT_FOUND, UNAUTHENTICATED, PERMISSION_DENIED, RESOURCE_EXHAUSTED, …)
// is returned at once.
//
// Sticky rather than round robin: a segment key's IDs strictly increase
// per node, so a client that stays with one node sees its IDs increase
// too. To spread many clients over several nodes give them the addresses
// in different orders.
//
// Retrying is safe: a request whose answer was lost may have issued IDs
// on the server; they are never issued again (a gap, not a duplicate).
//
// # Range cache
//
// WithRangeCache makes a remote client fetch a block of IDs of a segment
// key at a time and hand them out locally, like Tinyid's client: the next
// block is fetched in the background once a share of the block is left,
// so most calls need no network round trip and no caller waits while IDs
// remain. Every ID handed out is one the server issued, handed out once.
// IDs cached by a client that stops or crashes are lost: gaps, never
// duplicates. Snowflake keys are never cached (their time field would
// tell when the block was fetched, not when the ID was used), nor are
// NextStrings and NextSerial: they go to the server on every call (and
// fail over like Next), so a segment key's IDs from NextStrings do not
// follow the cached ones in order.
package client
