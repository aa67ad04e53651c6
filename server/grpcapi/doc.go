// Package grpcapi is idforge's gRPC transport: the IDForge service of
// api/idforge/v1 over an issuer.Issuer, plus the standard health service
// (grpc.health.v1) and server reflection.
//
// It mirrors the HTTP transport (server/httpapi): the same operations, the
// same limits (at most idforge.MaxCount IDs per call, a 5 s budget per call for the
// store) and the same error codes. Every failure is answered with the gRPC
// code of its idforge code (the one vocabulary, idforge.Code), and details
// holding a google.rpc.ErrorInfo:
// domain "idforge", reason the idforge error code ("unknown_key",
// "invalid_count", …), so that clients map it back to the idforge
// sentinel (the client package does).
//
// Wiring it up:
//
//	g := grpc.NewServer(
//		// Auth, logging, metrics: pass interceptors here; they run for
//		// every service Register adds, health and reflection included.
//		grpc.ChainUnaryInterceptor(auth.Unary),
//		grpc.ChainStreamInterceptor(auth.Stream),
//	)
//	srv := grpcapi.New(iss, grpcapi.Options{Logger: log})
//	srv.Register(g)
//	go g.Serve(ln)
//	…
//	srv.Drain()       // health NOT_SERVING, open streams end
//	g.GracefulStop()
//
// The package adds no interceptors of its own and keeps no state outside
// the Server, so interceptors for authentication belong to whoever builds
// the grpc.Server. An interceptor that checks credentials should let
// /grpc.health.v1.Health/ through when the health checker has none.
package grpcapi
