// Package grpcerr is idforge's gRPC error answer, shared by
// server/grpcapi, the auth interceptors and the Go client: the gRPC code
// of the error's code from the one vocabulary (see idforge.Code), and a
// google.rpc.ErrorInfo whose reason is that code.
package grpcerr

import (
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/idforge/idforge"
)

// Domain is the domain of the ErrorInfo in every error status.
const Domain = "idforge"

// Status returns the status that answers err: the gRPC code of err's
// idforge code, err's message, and an ErrorInfo naming the code.
func Status(err error) *status.Status {
	code := idforge.ErrorCode(err)
	st := status.New(codes.Code(code.GRPCCode()), err.Error())
	if d, derr := st.WithDetails(&errdetails.ErrorInfo{Reason: string(code), Domain: Domain}); derr == nil {
		st = d
	}
	return st
}

// CodeOf returns the idforge code a status names in its ErrorInfo, ""
// when it names none (the answer came from gRPC itself or a proxy).
func CodeOf(st *status.Status) idforge.Code {
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok && info.GetDomain() == Domain {
			return idforge.Code(info.GetReason())
		}
	}
	return ""
}
