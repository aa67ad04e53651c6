package auth

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/idforge/idforge/internal/grpcerr"
)

// Keyed is implemented by request messages that name a key; generated
// protobuf types with a key field have this method.
type Keyed interface {
	GetKey() string
}

// Named is implemented by request messages that name a serial
// (idforge.v1's NextSerialRequest); generated protobuf types with a name
// field have this method. As over HTTP (/v1/serials/{name}), a serial is
// issued under its own name: a token limited to keys must list the
// serial's name, not the keys its template draws on.
type Named interface {
	GetName() string
}

// requestKey returns the key a request message names, for Access.Key:
// its key field (Keyed), else its name field (Named). ok is false for a
// message that names neither.
func requestKey(m any) (key string, ok bool) {
	switch r := m.(type) {
	case Keyed:
		return r.GetKey(), true
	case Named:
		return r.GetName(), true
	}
	return "", false
}

// DefaultMethodLevel classifies gRPC methods by name:
//
//	Open   the health service (/grpc.health.v1.Health/…) and server reflection
//	Issue  methods named Next…, Take…, Stream…, Reserve…, Commit… or Void… (idforge.v1.IDForge: Next,
//	       NextBatch, NextStrings, NextSerial, Stream, and a gapless serial's Reserve, Commit, Void)
//	Admin  methods named Create…, Delete…, Update…, Set… or Retire… (CreateKey, UpdateKey, RetireKey, RetireSource, CreateQuota)
//	Read   everything else (Explain, Make, GetKey, ListKeys, Audit)
func DefaultMethodLevel(fullMethod string) Level {
	if strings.HasPrefix(fullMethod, "/grpc.health.v1.Health/") ||
		strings.HasPrefix(fullMethod, "/grpc.reflection.") {
		return Open
	}
	method := fullMethod[strings.LastIndexByte(fullMethod, '/')+1:]
	for _, p := range []string{"Next", "Take", "Stream", "Reserve", "Commit", "Void"} {
		if strings.HasPrefix(method, p) {
			return Issue
		}
	}
	for _, p := range []string{"Create", "Delete", "Update", "Set", "Retire"} {
		if strings.HasPrefix(method, p) {
			return Admin
		}
	}
	return Read
}

// UnaryInterceptor returns the gRPC unary interceptor that checks the
// token in the "authorization: Bearer <token>" metadata. A refused call
// ends with Unauthenticated, PermissionDenied or ResourceExhausted (with
// a retry-after header, in seconds); an allowed one's context carries its
// Caller.
func (a *Authenticator) UnaryInterceptor() grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		level := DefaultMethodLevel(info.FullMethod)
		if level == Open {
			return handler(ctx, req)
		}
		acc := Access{Level: level}
		acc.Key, _ = requestKey(req)
		caller, err := a.Authorize(bearerFromMetadata(ctx), acc)
		if err != nil {
			return nil, grpcError(ctx, err)
		}
		return handler(withCaller(ctx, caller), req)
	}
}

// StreamInterceptor returns the gRPC stream interceptor. The token, the
// role and the rate are checked when the stream starts (a stream counts
// as one request); the key of every message the server receives is
// checked as it arrives, ending the stream with PermissionDenied when the
// token is not allowed it.
func (a *Authenticator) StreamInterceptor() grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		level := DefaultMethodLevel(info.FullMethod)
		if level == Open {
			return handler(srv, ss)
		}
		ctx := ss.Context()
		e, err := a.authenticate(bearerFromMetadata(ctx))
		if err == nil {
			err = e.permitLevel(level)
		}
		if err == nil {
			err = a.allow(e)
		}
		if err != nil {
			return grpcError(ctx, err)
		}
		return handler(srv, &guardedStream{ServerStream: ss, ctx: withCaller(ctx, e.caller), e: e, level: level})
	}
}

// guardedStream checks the key of every received message.
type guardedStream struct {
	grpc.ServerStream
	ctx   context.Context
	e     *entry
	level Level
}

func (s *guardedStream) Context() context.Context { return s.ctx }

func (s *guardedStream) RecvMsg(m any) error {
	if err := s.ServerStream.RecvMsg(m); err != nil {
		return err
	}
	acc := Access{Level: s.level}
	var named bool
	if acc.Key, named = requestKey(m); !named && s.e.keys == nil {
		return nil // a message without a key; nothing to check for an unrestricted token
	}
	if err := s.e.permitKey(acc); err != nil {
		return grpcError(s.ctx, err)
	}
	return nil
}

// bearerFromMetadata returns the token of the first "authorization:
// Bearer <token>" metadata value, or "".
func bearerFromMetadata(ctx context.Context) string {
	md, _ := metadata.FromIncomingContext(ctx)
	for _, v := range md.Get("authorization") {
		scheme, tok, ok := strings.Cut(strings.TrimSpace(v), " ")
		if ok && strings.EqualFold(scheme, "Bearer") {
			return strings.TrimSpace(tok)
		}
	}
	return ""
}

// grpcTokenHint says how a gRPC call sends its token (see
// bearerFromMetadata): metadata, which has no query string to fall back
// on.
const grpcTokenHint = `the metadata "authorization: Bearer <token>" with the call`

// grpcError turns an Authorize error into a gRPC status (see
// grpcerr.Status), telling a rate-limited client when to come back.
func grpcError(ctx context.Context, err error) error {
	err = withTokenHint(err, grpcTokenHint)
	var rl *RateLimitError
	if errors.As(err, &rl) {
		// Best effort: the header tells clients when to come back.
		_ = grpc.SetHeader(ctx, metadata.Pairs("retry-after", strconv.FormatInt(retryAfterSeconds(rl.RetryAfter), 10)))
	}
	return grpcerr.Status(err).Err()
}
