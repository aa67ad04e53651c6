// Package client is the Go client of idforge: one Client interface for
// every way of running it (Vesta's deployment modes): NewEmbedded, the
// issuer in the calling process (taken as the Issuer interface, so a
// program using only the remote modes does not link it); NewGRPC, one or
// several idforge servers over gRPC; NewHTTP, the same over the REST API.
// Client.Key turns a client into an idforge.BatchGenerator for one key.
//
// A remote client maps the server's error code (the JSON body's
// error.code, or the gRPC google.rpc.ErrorInfo reason) back to the idforge
// sentinel, so errors.Is(err, idforge.ErrUnknownKey) works in every mode;
// the answer itself is an *Error (errors.As). When no server answers the
// error wraps idforge.ErrUnavailable.
//
// NewHTTP and NewGRPC take several nodes' addresses in order of
// preference. A client is sticky: every call goes to the most preferred
// node that has not failed recently, so a segment key's IDs increase for
// it as they do per node. A call that fails without an answer (refused or
// reset, no answer within half the time left) or with one that says "not
// now" (gRPC UNAVAILABLE, HTTP 502/503/504) sets the node aside for 30 s
// and is retried on the next, within the call's context and at most
// WithRetries times; after 30 s the preferred node is tried again. An
// error another node would answer the same way (4xx, INVALID_ARGUMENT,
// NOT_FOUND, UNAUTHENTICATED, PERMISSION_DENIED, RESOURCE_EXHAUSTED, …) is
// returned at once. Retrying is safe: IDs a lost answer carried are a gap,
// never issued again.
//
// WithRangeCache makes a remote client fetch a block of a segment key's
// IDs at a time and hand them out locally, like Tinyid's client, fetching
// the next block in the background once a share of the block is left.
// Every ID handed out is one the server issued, once; IDs cached by a
// client that stops are a gap. Snowflake keys, NextStrings and NextSerial
// are never cached (a segment key's IDs from NextStrings therefore do not
// follow the cached ones in order).
package client
