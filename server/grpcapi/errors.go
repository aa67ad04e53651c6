package grpcapi

import (
	"google.golang.org/grpc/codes"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/grpcerr"
)

// ErrorDomain is the domain of the google.rpc.ErrorInfo in every error
// status; its reason is the idforge error code (see idforge.Code).
const ErrorDomain = grpcerr.Domain

// toStatus turns err into a status error carrying an ErrorInfo (see
// grpcerr.Status), logging the failures that are the server's: internal
// (a bug) at error level, UNAVAILABLE at warn level but for a shutdown,
// which Drain announces once.
func (s *Server) toStatus(method string, err error) error {
	st := grpcerr.Status(err)
	switch code := idforge.ErrorCode(err); {
	case code == idforge.CodeInternal:
		s.log.Error("grpc call failed", "method", method, "code", st.Code().String(), "err", err)
	case st.Code() == codes.Unavailable && code != idforge.CodeShuttingDown:
		s.log.Warn("grpc call failed", "method", method, "code", st.Code().String(), "err", err)
	}
	return st.Err()
}
