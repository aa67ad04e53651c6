package idforge

import (
	"context"
	"errors"
	"fmt"
)

// Code is a word of idforge's one error vocabulary. Every error answer
// carries one, whatever the transport (the HTTP API's error.code, the
// gRPC ErrorInfo reason), and its row in the vocabulary decides the rest:
// the sentinel it stands for, its HTTP status, its gRPC code and whether
// another node (or the same one a little later) may succeed. The words
// are a wire contract that clients depend on: never change one.
type Code string

// The codes of the vocabulary. README.md lists them with their statuses.
const (
	CodeInvalidKey          Code = "invalid_key"
	CodeInvalidCount        Code = "invalid_count"
	CodeInvalidArgument     Code = "invalid_argument"
	CodeWrongStrategy       Code = "wrong_strategy"
	CodeUnknownKey          Code = "unknown_key"
	CodeKeyExists           Code = "key_exists"
	CodeInvalidLayout       Code = "invalid_layout"
	CodeInvalidWorker       Code = "invalid_worker"
	CodeClockMovedBackwards Code = "clock_moved_backwards"
	CodeLeaseLost           Code = "lease_lost"
	CodeStoreFailedOver     Code = "store_failed_over"
	CodeLayoutExpired       Code = "layout_expired"
	CodeWorkersExhausted    Code = "workers_exhausted"
	CodeUnavailable         Code = "unavailable"
	CodeShuttingDown        Code = "shutting_down"
	CodeLocked              Code = "locked"
	CodeTimeout             Code = "timeout"
	CodeCanceled            Code = "canceled"
	CodeSpaceExhausted      Code = "space_exhausted"
	CodeRejected            Code = "rejected"
	CodeRetired             Code = "retired"
	CodeUnsafeChange        Code = "unsafe_change"
	CodeUnauthenticated     Code = "unauthenticated"
	CodeForbidden           Code = "forbidden"
	CodeRateLimited         Code = "rate_limited"
	CodeUnknownReservation  Code = "unknown_reservation"
	CodeAlreadyCommitted    Code = "already_committed"
	CodeReservationExpired  Code = "reservation_expired"
	CodeReservationVoided   Code = "reservation_voided"
	CodeNotFound            Code = "not_found"
	CodeMethodNotAllowed    Code = "method_not_allowed"
	// CodeInternal is the code of an error that matches no sentinel: a
	// bug, never a state a request can reach. It is the only code
	// answered with HTTP 500.
	CodeInternal Code = "internal"
)

// GRPCCode is a gRPC status code by number. The values are those of
// google.golang.org/grpc/codes, written here so that the root package
// does not link gRPC (server/grpcapi's tests check that they agree).
type GRPCCode uint32

// The gRPC codes the vocabulary uses.
const (
	grpcCanceled           GRPCCode = 1
	grpcInvalidArgument    GRPCCode = 3
	grpcNotFound           GRPCCode = 5
	grpcAlreadyExists      GRPCCode = 6
	grpcPermissionDenied   GRPCCode = 7
	grpcResourceExhausted  GRPCCode = 8
	grpcFailedPrecondition GRPCCode = 9
	grpcOutOfRange         GRPCCode = 11
	grpcUnimplemented      GRPCCode = 12
	grpcInternal           GRPCCode = 13
	grpcUnavailable        GRPCCode = 14
	grpcUnauthenticated    GRPCCode = 16
)

// grpcNames are the canonical names of the gRPC codes the vocabulary uses.
var grpcNames = map[GRPCCode]string{
	grpcCanceled: "CANCELLED", grpcInvalidArgument: "INVALID_ARGUMENT", grpcNotFound: "NOT_FOUND",
	grpcAlreadyExists: "ALREADY_EXISTS", grpcPermissionDenied: "PERMISSION_DENIED",
	grpcResourceExhausted: "RESOURCE_EXHAUSTED", grpcFailedPrecondition: "FAILED_PRECONDITION",
	grpcOutOfRange: "OUT_OF_RANGE", grpcUnimplemented: "UNIMPLEMENTED", grpcInternal: "INTERNAL",
	grpcUnavailable: "UNAVAILABLE", grpcUnauthenticated: "UNAUTHENTICATED",
}

// String returns the code's canonical name, e.g. "OUT_OF_RANGE", as the
// gRPC specification and README.md write it.
func (g GRPCCode) String() string {
	if name, ok := grpcNames[g]; ok {
		return name
	}
	return fmt.Sprintf("CODE(%d)", uint32(g))
}

// codeRow is one row of the vocabulary.
type codeRow struct {
	code Code
	// err is the sentinel an error wraps to carry the code.
	err error
	// httpStatus is the HTTP status of an answer with the code.
	httpStatus int
	grpc       GRPCCode
	// retryable: the same call may succeed on another node, or on this
	// one a little later; clients fail over on it. A refusal of the
	// request itself (bad input, a quota, a full key) is not.
	retryable bool
}

// vocabulary is the one table of error codes; every transport and client
// derives its own mapping from it. ErrorCode tries the rows in order, so
// an error wrapping several sentinels gets the first row's code (e.g.
// ErrUnavailable wrapping a store's ErrSpaceExhausted is unavailable).
// The last row, internal, matches nothing.
var vocabulary = [...]codeRow{
	// {code, sentinel, HTTP status, gRPC code, retryable}
	{CodeInvalidKey, ErrInvalidKey, 400, grpcInvalidArgument, false},
	{CodeInvalidCount, ErrInvalidCount, 400, grpcInvalidArgument, false},
	{CodeInvalidArgument, ErrInvalidArgument, 400, grpcInvalidArgument, false},
	{CodeWrongStrategy, ErrWrongStrategy, 400, grpcInvalidArgument, false},
	{CodeUnknownKey, ErrUnknownKey, 404, grpcNotFound, false},
	{CodeKeyExists, ErrKeyExists, 409, grpcAlreadyExists, false},
	{CodeInvalidLayout, ErrInvalidLayout, 400, grpcInvalidArgument, false},
	{CodeInvalidWorker, ErrInvalidWorker, 400, grpcInvalidArgument, false},
	{CodeClockMovedBackwards, ErrClockMovedBackwards, 503, grpcUnavailable, true},
	{CodeLeaseLost, ErrLeaseLost, 503, grpcUnavailable, true},
	// A store that failed over refuses every claim until it is repaired;
	// another node may still hold IDs claimed before, so clients may
	// fail over.
	{CodeStoreFailedOver, ErrStoreFailedOver, 503, grpcUnavailable, true},
	{CodeLayoutExpired, ErrLayoutExpired, 503, grpcUnavailable, true},
	{CodeWorkersExhausted, ErrWorkersExhausted, 503, grpcUnavailable, true},
	{CodeUnavailable, ErrUnavailable, 503, grpcUnavailable, true},
	{CodeShuttingDown, ErrClosed, 503, grpcUnavailable, true},
	{CodeLocked, ErrLocked, 503, grpcUnavailable, false},
	{CodeTimeout, context.DeadlineExceeded, 503, grpcUnavailable, true},
	{CodeCanceled, context.Canceled, 503, grpcCanceled, false},
	// A key whose IDs have run out is a state of the key, not of the
	// node: 409 and OUT_OF_RANGE, and no other node can do better.
	{CodeSpaceExhausted, ErrSpaceExhausted, 409, grpcOutOfRange, false},
	{CodeRejected, ErrRejected, 403, grpcFailedPrecondition, false},
	// A retired key or definition is, like an exhausted one, a state of
	// the key: 409, and its name stays taken so that nothing it issued
	// can be issued again.
	{CodeRetired, ErrRetired, 409, grpcFailedPrecondition, false},
	// A change to a definition that could repeat values is bad input:
	// the fingerprint recorded at its first use says so.
	{CodeUnsafeChange, ErrUnsafeChange, 400, grpcInvalidArgument, false},
	{CodeUnauthenticated, ErrUnauthenticated, 401, grpcUnauthenticated, false},
	{CodeForbidden, ErrForbidden, 403, grpcPermissionDenied, false},
	// A rate limit is the token's: failing over would only spread it.
	{CodeRateLimited, ErrRateLimited, 429, grpcResourceExhausted, false},
	// A gap-free serial's reservation that is gone or ended: a state of
	// the number, the same on every node.
	{CodeUnknownReservation, ErrUnknownReservation, 404, grpcNotFound, false},
	{CodeAlreadyCommitted, ErrAlreadyCommitted, 409, grpcAlreadyExists, false},
	{CodeReservationExpired, ErrReservationExpired, 409, grpcFailedPrecondition, false},
	{CodeReservationVoided, ErrReservationVoided, 409, grpcFailedPrecondition, false},
	{CodeNotFound, ErrNoEndpoint, 404, grpcUnimplemented, false},
	{CodeMethodNotAllowed, ErrMethodNotAllowed, 405, grpcUnimplemented, false},
	{CodeInternal, nil, 500, grpcInternal, false},
}

// Codes returns every code of the vocabulary, internal last.
func Codes() []Code {
	out := make([]Code, len(vocabulary))
	for i, r := range vocabulary {
		out[i] = r.code
	}
	return out
}

// row returns the code's row; a code outside the vocabulary (a word from
// a newer server, say) gets internal's.
func (c Code) row() codeRow {
	for _, r := range vocabulary {
		if r.code == c {
			return r
		}
	}
	return vocabulary[len(vocabulary)-1]
}

// Err returns the sentinel the code stands for: ErrUnknownKey for
// "unknown_key", ErrClosed for "shutting_down", context.DeadlineExceeded
// for "timeout". It is nil for internal and for a code outside the
// vocabulary.
func (c Code) Err() error {
	if r := c.row(); r.code == c {
		return r.err
	}
	return nil
}

// HTTPStatus returns the HTTP status of an answer with the code; 500 only
// for internal (and a code outside the vocabulary).
func (c Code) HTTPStatus() int { return c.row().httpStatus }

// GRPCCode returns the gRPC status code of an answer with the code.
func (c Code) GRPCCode() GRPCCode { return c.row().grpc }

// Retryable reports whether the same call may succeed on another node,
// or on this one a little later: the node's state (its store, clock,
// lease, shutdown) stands in the way, not the request.
func (c Code) Retryable() bool { return c.row().retryable }

// ErrorCode returns the code of err, e.g. CodeUnknownKey for an error
// wrapping ErrUnknownKey, or CodeInternal when err wraps no sentinel.
func ErrorCode(err error) Code {
	for _, r := range vocabulary {
		if r.err != nil && errors.Is(err, r.err) {
			return r.code
		}
	}
	return CodeInternal
}

// IsRetryable reports whether err wraps the sentinel of any retryable
// code: the node's state stood in the way (a store down, a timeout), so
// the same call may succeed later or on another node. It holds even when
// err also wraps a code about the request, as the error of a serial
// template that could not be compiled because the key it draws on could
// not be read does.
func IsRetryable(err error) bool {
	for _, r := range vocabulary {
		if r.retryable && errors.Is(err, r.err) {
			return true
		}
	}
	return false
}

// BackendError returns err as a caller should see a failure of a backend
// (a store, a registry, a sequence source). An error that carries a code
// passes unchanged: a missing key or a taken name says something specific
// about the request. Any other, such as a driver's connection error, says
// nothing about the request, so it is wrapped in ErrUnavailable: another
// node, or a later try, may succeed. It returns nil for nil.
func BackendError(err error) error {
	if err == nil || ErrorCode(err) != CodeInternal {
		return err
	}
	return fmt.Errorf("%w: %w", ErrUnavailable, err)
}
