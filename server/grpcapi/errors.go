package grpcapi

import (
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/idforge/idforge"
)

// ErrorDomain is the domain of the google.rpc.ErrorInfo in every error
// status; its reason is the idforge error code.
const ErrorDomain = "idforge"

// grpcCodes is the one table that turns idforge's error codes (see
// idforge.ErrorCode, the same codes the HTTP API answers with) into gRPC
// codes; a code it lacks is INTERNAL.
var grpcCodes = map[string]codes.Code{
	"invalid_key":           codes.InvalidArgument,
	"invalid_count":         codes.InvalidArgument,
	"invalid_argument":      codes.InvalidArgument,
	"wrong_strategy":        codes.InvalidArgument,
	"invalid_layout":        codes.InvalidArgument,
	"invalid_worker":        codes.InvalidArgument,
	"unknown_key":           codes.NotFound,
	"key_exists":            codes.AlreadyExists,
	"rejected":              codes.FailedPrecondition,
	"clock_moved_backwards": codes.Unavailable,
	"lease_lost":            codes.Unavailable,
	"layout_expired":        codes.Unavailable,
	"workers_exhausted":     codes.Unavailable,
	"unavailable":           codes.Unavailable,
	"shutting_down":         codes.Unavailable,
	"locked":                codes.Unavailable,
	"timeout":               codes.Unavailable,
	"canceled":              codes.Canceled,
}

// codeOf returns the gRPC code and idforge reason for err.
func codeOf(err error) (codes.Code, string) {
	reason := idforge.ErrorCode(err)
	if code, ok := grpcCodes[reason]; ok {
		return code, reason
	}
	return codes.Internal, reason
}

// toStatus turns err into a status error carrying an ErrorInfo, logging
// the failures that are the server's (UNAVAILABLE, INTERNAL) but not a
// shutdown, which Drain announces once.
func (s *Server) toStatus(method string, err error) error {
	code, reason := codeOf(err)
	if (code == codes.Unavailable || code == codes.Internal) && reason != "shutting_down" {
		s.log.Warn("grpc call failed", "method", method, "code", code.String(), "err", err)
	}
	st := status.New(code, err.Error())
	if d, derr := st.WithDetails(&errdetails.ErrorInfo{Reason: reason, Domain: ErrorDomain}); derr == nil {
		st = d
	}
	return st.Err()
}
