package idforge

import (
	"context"
	"errors"
)

// errorCodes gives every sentinel its stable code: the word transports put
// in their error answers (the HTTP API's error.code, the gRPC ErrorInfo
// reason) and clients map back. The first entry an error matches wins, so
// the order settles errors that wrap more than one sentinel.
var errorCodes = []struct {
	err  error
	code string
}{
	{ErrInvalidKey, "invalid_key"},
	{ErrInvalidCount, "invalid_count"},
	{ErrInvalidArgument, "invalid_argument"},
	{ErrWrongStrategy, "wrong_strategy"},
	{ErrUnknownKey, "unknown_key"},
	{ErrKeyExists, "key_exists"},
	{ErrInvalidLayout, "invalid_layout"},
	{ErrInvalidWorker, "invalid_worker"},
	{ErrClockMovedBackwards, "clock_moved_backwards"},
	{ErrLeaseLost, "lease_lost"},
	{ErrLayoutExpired, "layout_expired"},
	{ErrWorkersExhausted, "workers_exhausted"},
	{ErrUnavailable, "unavailable"},
	{ErrClosed, "shutting_down"},
	{ErrLocked, "locked"},
	{context.DeadlineExceeded, "timeout"},
	{context.Canceled, "canceled"},
	{ErrSpaceExhausted, "space_exhausted"},
	{ErrRejected, "rejected"},
}

// CodeInternal is the code of an error that matches no sentinel.
const CodeInternal = "internal"

// ErrorCode returns the stable code of err, e.g. "unknown_key" for an
// error wrapping ErrUnknownKey, or CodeInternal.
func ErrorCode(err error) string {
	for _, e := range errorCodes {
		if errors.Is(err, e.err) {
			return e.code
		}
	}
	return CodeInternal
}

// ErrorForCode returns the sentinel a code stands for, nil for an unknown
// code. "shutting_down" gives ErrClosed, "timeout" context.DeadlineExceeded.
func ErrorForCode(code string) error {
	for _, e := range errorCodes {
		if e.code == code {
			return e.err
		}
	}
	return nil
}
