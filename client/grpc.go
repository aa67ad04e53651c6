package client

import (
	"context"
	"fmt"
	"math"
	"strconv"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/idforge/idforge"
	idforgev1 "github.com/idforge/idforge/api/idforge/v1"
	"github.com/idforge/idforge/internal/grpcerr"
	"github.com/idforge/idforge/internal/grpcwire"
	"github.com/idforge/idforge/internal/httpwire"
)

// NewGRPC returns a Client talking to the IDForge gRPC service on the
// nodes at addrs, in order of preference (see the package doc). An
// address is a gRPC target: host:port, or with a resolver scheme
// ("dns:///ids.internal:9090", "passthrough:///…"). Connections are made
// lazily, on the first call to each node. It returns an error wrapping
// idforge.ErrInvalidArgument for an empty address list or an invalid
// option, and gRPC's error for a target it cannot parse.
func NewGRPC(addrs []string, opts ...Option) (Client, error) {
	return newRemote(addrs, opts, grpcConns)
}

// grpcConns returns how to make the gRPC connection of one node under o:
// TLS or not, the token on every call, o's dial options.
func grpcConns(o options) func(addr string) (conn, error) {
	dial := []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
	if o.tls != nil {
		dial[0] = grpc.WithTransportCredentials(credentials.NewTLS(o.tls))
	}
	if o.token != "" {
		dial = append(dial, grpc.WithPerRPCCredentials(bearer{"Bearer " + o.token}))
	}
	dial = append(dial, o.dialOptions...)
	return func(addr string) (conn, error) {
		cc, err := grpc.NewClient(addr, dial...)
		if err != nil {
			return nil, fmt.Errorf("idforge client: %s: %w", addr, err)
		}
		return &grpcConn{addr: addr, cc: cc, api: idforgev1.NewIDForgeClient(cc)}, nil
	}
}

// bearer sends a token as the authorization metadata of every call.
type bearer struct{ value string }

func (b bearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": b.value}, nil
}

// RequireTransportSecurity is false: WithToken documents that without
// WithTLS the token travels in clear text (e.g. on a trusted loopback or
// a service mesh that encrypts).
func (b bearer) RequireTransportSecurity() bool { return false }

var _ conn = (*grpcConn)(nil)

// grpcConn is one node of the gRPC API.
type grpcConn struct {
	addr string
	cc   *grpc.ClientConn
	api  idforgev1.IDForgeClient
}

// errorOf turns a gRPC error into an *Error carrying the idforge code of
// the status details.
func (g *grpcConn) errorOf(err error) error {
	st, ok := status.FromError(err)
	if !ok {
		return fmt.Errorf("idforge client: %s: %w", g.addr, err)
	}
	return &Error{Server: g.addr, Code: grpcerr.CodeOf(st), Message: st.Message(), GRPCCode: st.Code()}
}

func (g *grpcConn) next(ctx context.Context, key string) (int64, error) {
	r, err := g.api.Next(ctx, &idforgev1.NextRequest{Key: key})
	if err != nil {
		return 0, g.errorOf(err)
	}
	return r.GetId(), nil
}

func (g *grpcConn) nextN(ctx context.Context, key string, n int) ([]int64, error) {
	// A count past int32 is sent as the largest int32: the server refuses
	// it as it refuses anything above its maximum.
	r, err := g.api.NextBatch(ctx, &idforgev1.NextBatchRequest{Key: key, Count: int32(min(n, math.MaxInt32))})
	if err != nil {
		return nil, g.errorOf(err)
	}
	return counted(g.addr, "IDs", n, r.GetIds())
}

func (g *grpcConn) nextStrings(ctx context.Context, key string, n int) ([]string, error) {
	// As in nextN, a count past int32 is refused by the server.
	r, err := g.api.NextStrings(ctx, &idforgev1.NextStringsRequest{Key: key, Count: int32(min(n, math.MaxInt32))})
	if err != nil {
		return nil, g.errorOf(err)
	}
	return counted(g.addr, "IDs", n, r.GetIds())
}

func (g *grpcConn) nextSerial(ctx context.Context, name string, n int, params map[string]string) ([]string, error) {
	r, err := g.api.NextSerial(ctx, &idforgev1.NextSerialRequest{Name: name, Count: int32(min(n, math.MaxInt32)), Params: params})
	if err != nil {
		return nil, g.errorOf(err)
	}
	return counted(g.addr, "serials", n, r.GetValues())
}

func (g *grpcConn) explain(ctx context.Context, id int64) (Explanation, error) {
	r, err := g.api.Explain(ctx, &idforgev1.ExplainRequest{Id: id})
	if err != nil {
		return Explanation{}, g.errorOf(err)
	}
	ex := Explanation{ID: r.GetId(), Layout: r.GetLayout(), Expires: r.GetExpires().AsTime()}
	ex.Time, ex.Ticks, ex.Fixed = r.GetTime().AsTime(), r.GetTicks(), r.GetFixed()
	ex.Datacenter, ex.Worker, ex.Sequence = r.GetDatacenter(), r.GetWorker(), r.GetSequence()
	if len(ex.Fixed) == 0 {
		ex.Fixed = nil
	}
	return ex, nil
}

func (g *grpcConn) explainPacked(ctx context.Context, source string, id int64) (idforge.Unpacked, error) {
	r, err := g.api.Explain(ctx, &idforgev1.ExplainRequest{Id: id, Source: source})
	if err != nil {
		return idforge.Unpacked{}, g.errorOf(err)
	}
	p := r.GetDatePacked()
	a := httpwire.Unpacked{ID: strconv.FormatInt(r.GetId(), 10), Source: p.GetSource(), Time: r.GetTime().AsTime(),
		Period: p.GetPeriod(), Zone: p.GetZone(), Count: p.GetCount(), Bits: int(p.GetBits())}
	return a.Unpacked()
}

func (g *grpcConn) key(ctx context.Context, key string) (idforge.Key, error) {
	k, err := g.api.GetKey(ctx, &idforgev1.GetKeyRequest{Key: key})
	if err != nil {
		return idforge.Key{}, g.errorOf(err)
	}
	s, ok := grpcwire.FromStrategy(k.GetStrategy())
	if !ok {
		s = idforge.Strategy(k.GetStrategy().String())
	}
	return idforge.Key{Name: key, Strategy: s, Order: idforge.Order(k.GetOrder())}, nil
}

func (g *grpcConn) close() error { return g.cc.Close() }
