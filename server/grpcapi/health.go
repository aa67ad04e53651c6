package grpcapi

import (
	"context"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	idforgev1 "github.com/idforge/idforge/api/idforge/v1"
)

// readyTimeout bounds one readiness check (a store ping).
const readyTimeout = 2 * time.Second

// healthServer answers grpc.health.v1 for the whole server ("") and for
// idforge.v1.IDForge with the same status, checked live as GET /readyz
// checks it.
type healthServer struct {
	healthpb.UnimplementedHealthServer
	s *Server
}

// known reports whether service is one the health service answers for.
func known(service string) bool {
	return service == "" || service == idforgev1.IDForge_ServiceDesc.ServiceName
}

// readiness mirrors GET /readyz: SERVING when the store answers, or when
// it does not but every segment key this node has issued from still has
// IDs buffered (degraded); NOT_SERVING otherwise and after Drain.
func (s *Server) readiness(ctx context.Context) healthpb.HealthCheckResponse_ServingStatus {
	if s.isDraining() {
		return healthpb.HealthCheckResponse_NOT_SERVING
	}
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	if s.iss.Readiness(ctx).CanServe() {
		return healthpb.HealthCheckResponse_SERVING
	}
	return healthpb.HealthCheckResponse_NOT_SERVING
}

// Check answers with the node's readiness; an unknown service is NOT_FOUND.
func (h *healthServer) Check(ctx context.Context, req *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	if !known(req.GetService()) {
		return nil, status.Errorf(codes.NotFound, "unknown service %q", req.GetService())
	}
	return &healthpb.HealthCheckResponse{Status: h.s.readiness(ctx)}, nil
}

// List answers for both services the health service knows.
func (h *healthServer) List(ctx context.Context, req *healthpb.HealthListRequest) (*healthpb.HealthListResponse, error) {
	st := h.s.readiness(ctx)
	return &healthpb.HealthListResponse{Statuses: map[string]*healthpb.HealthCheckResponse{
		"": {Status: st}, idforgev1.IDForge_ServiceDesc.ServiceName: {Status: st},
	}}, nil
}

// Watch sends the status at once and then on every change, re-checking
// every watchEvery. After Drain it sends NOT_SERVING and ends with
// UNAVAILABLE, so that a graceful stop does not wait for it.
func (h *healthServer) Watch(req *healthpb.HealthCheckRequest, stream grpc.ServerStreamingServer[healthpb.HealthCheckResponse]) error {
	ctx := stream.Context()
	last := healthpb.HealthCheckResponse_ServingStatus(-1)
	t := time.NewTicker(h.s.watchEvery)
	defer t.Stop()
	for {
		st := healthpb.HealthCheckResponse_SERVICE_UNKNOWN
		if known(req.GetService()) {
			st = h.s.readiness(ctx)
		}
		if st != last {
			if err := stream.Send(&healthpb.HealthCheckResponse{Status: st}); err != nil {
				return err
			}
			last = st
		}
		if h.s.isDraining() {
			return h.s.toStatus("Health.Watch", errDraining)
		}
		select {
		case <-ctx.Done():
			return status.FromContextError(ctx.Err()).Err()
		case <-t.C:
		case <-h.s.draining:
		}
	}
}

var _ healthpb.HealthServer = (*healthServer)(nil)
