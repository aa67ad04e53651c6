// Package grpcapi is idforge's gRPC transport: the IDForge service of
// api/idforge/v1 over an issuer.Issuer, plus the standard health service
// (grpc.health.v1) and server reflection.
//
// It mirrors server/httpapi: the same operations, the same limits (at
// most idforge.MaxCount IDs per call, a 5 s budget per call for the
// store) and the same error codes. Every failure carries the gRPC code of
// its idforge.Code and a google.rpc.ErrorInfo detail with domain
// "idforge" and the code as its reason, which the client package maps
// back to the idforge sentinel.
//
//	g := grpc.NewServer(grpc.ChainUnaryInterceptor(auth.Unary), grpc.ChainStreamInterceptor(auth.Stream))
//	srv := grpcapi.New(iss, grpcapi.Options{Logger: log})
//	srv.Register(g)
//	go g.Serve(ln)
//	…
//	srv.Drain()       // health NOT_SERVING, open streams end
//	g.GracefulStop()
//
// The package adds no interceptors and keeps no state outside the Server:
// authentication, logging and metrics are interceptors of whoever builds
// the grpc.Server, and run for every service Register adds. An
// interceptor that checks credentials should let /grpc.health.v1.Health/
// through when the health checker has none.
package grpcapi
