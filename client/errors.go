package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"google.golang.org/grpc/codes"

	"github.com/idforge/idforge"
)

// errClosed is returned by every call after Close.
var errClosed = fmt.Errorf("%w: client closed", idforge.ErrClosed)

// sentinelOf returns the idforge sentinel a server's error code stands
// for (idforge.Code.Err), except for the two that describe the answering
// node rather than the call: in the caller's process ErrClosed would mean
// the client is closed and context.DeadlineExceeded the caller's own
// deadline, while a node stopping or out of its time budget means
// "unavailable right now" to a client: another node can serve.
func sentinelOf(code idforge.Code) error {
	err := code.Err()
	if err == idforge.ErrClosed || err == context.DeadlineExceeded {
		return idforge.ErrUnavailable
	}
	return err
}

// Error is an error answered by an idforge server. It wraps the idforge
// sentinel of its Code, so errors.Is(err, idforge.ErrUnknownKey) works.
type Error struct {
	// Server is the address of the node that answered.
	Server string
	// Code is idforge's error code, e.g. "unknown_key" (README.md lists
	// them); empty when the answer carried none, e.g. a proxy's 502.
	Code idforge.Code
	// Message is the server's message.
	Message string
	// HTTPStatus is the answer's status over HTTP, 0 over gRPC.
	HTTPStatus int
	// GRPCCode is the answer's code over gRPC, codes.OK over HTTP.
	GRPCCode codes.Code
}

// Error returns the server's message, its code and the server.
func (e *Error) Error() string {
	code := string(e.Code)
	switch {
	case code != "":
	case e.HTTPStatus != 0:
		code = fmt.Sprintf("HTTP %d", e.HTTPStatus)
	default:
		code = e.GRPCCode.String()
	}
	return fmt.Sprintf("%s (%s from %s)", e.Message, code, e.Server)
}

// Unwrap returns the idforge sentinel(s) of the error's code.
func (e *Error) Unwrap() []error {
	if err := sentinelOf(e.Code); err != nil {
		return []error{err}
	}
	return nil
}

// retriable reports whether another node (or the same one a little later)
// may answer the call successfully.
func (e *Error) retriable() bool {
	if e.Code != "" {
		return e.Code.Retryable()
	}
	switch e.HTTPStatus {
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	// Without a reason, gRPC UNAVAILABLE is the transport's: no
	// connection. DEADLINE_EXCEEDED here is the attempt's own deadline
	// (the call's is checked first).
	return e.GRPCCode == codes.Unavailable || e.GRPCCode == codes.DeadlineExceeded
}

// retriable reports whether err, from one attempt of a call whose context
// is still live, is worth another attempt on another node.
func retriable(err error) bool {
	var e *Error
	if errors.As(err, &e) {
		return e.retriable()
	}
	// No answer at all: a connection error, a truncated or garbled body,
	// the attempt's deadline.
	return !errors.Is(err, context.Canceled) && !errors.Is(err, idforge.ErrClosed)
}
