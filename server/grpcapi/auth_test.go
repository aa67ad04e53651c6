package grpcapi

import (
	"context"
	"net"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	"github.com/idforge/idforge"
	idforgev1 "github.com/idforge/idforge/api/idforge/v1"
	"github.com/idforge/idforge/auth"
	"github.com/idforge/idforge/issuer"
	"github.com/idforge/idforge/snowflake"
	"github.com/idforge/idforge/store/memstore"
)

const (
	orderToken = "order-token-0123456789"
	billToken  = "bill-token-0123456789"
	adminToken = "admin-token-0123456789"
)

// The auth package's interceptors, given to grpc.NewServer, guard the
// IDForge service by method and key (a serial by its name); health stays
// open.
func TestAuthInterceptors(t *testing.T) {
	a, err := auth.New(auth.Config{Tokens: []auth.Token{
		{Name: "orders", Token: orderToken, Role: auth.RoleIssue, Keys: []string{"order"}},
		{Name: "bills", Token: billToken, Role: auth.RoleIssue, Keys: []string{"bill"}},
		{Name: "ops", Token: adminToken, Role: auth.RoleAdmin},
	}})
	if err != nil {
		t.Fatal(err)
	}
	st := memstore.New()
	ctx := testCtx(t)
	st.CreateKey(ctx, idforge.Key{Name: "order", Strategy: idforge.StrategySegment, Step: 10, MaxID: 1})
	st.CreateKey(ctx, idforge.Key{Name: "msg", Strategy: idforge.StrategySnowflake})
	gen, err := snowflake.New(snowflake.Settings{Worker: 1, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer gen.Close()
	iss := issuer.New(st, gen, issuer.Settings{Logger: quiet, Serials: testSerials})
	defer iss.Close()
	g := grpc.NewServer(
		grpc.ChainUnaryInterceptor(a.UnaryInterceptor()),
		grpc.ChainStreamInterceptor(a.StreamInterceptor()),
	)
	New(iss, Options{Logger: quiet}).Register(g)
	ln := bufconn.Listen(1 << 16)
	go g.Serve(ln)
	defer g.Stop()
	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return ln.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	c := idforgev1.NewIDForgeClient(conn)
	as := func(token string) context.Context {
		return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
	}
	stream := func(ctx context.Context, key string) error {
		s, err := c.Stream(ctx, &idforgev1.StreamRequest{Key: key, Count: 3})
		if err != nil {
			return err
		}
		_, err = recvAll(t, s)
		return err
	}
	for _, tc := range []struct {
		name string
		err  error
		want codes.Code
	}{
		{"Next without a token", func() error { _, err := c.Next(ctx, &idforgev1.NextRequest{Key: "order"}); return err }(), codes.Unauthenticated},
		{"Next with its key", func() error { _, err := c.Next(as(orderToken), &idforgev1.NextRequest{Key: "order"}); return err }(), codes.OK},
		{"Next with another key", func() error { _, err := c.Next(as(orderToken), &idforgev1.NextRequest{Key: "msg"}); return err }(), codes.PermissionDenied},
		{"NextStrings with its key", func() error {
			_, err := c.NextStrings(as(orderToken), &idforgev1.NextStringsRequest{Key: "order"})
			return err
		}(), codes.OK},
		{"NextStrings with another key", func() error {
			_, err := c.NextStrings(as(orderToken), &idforgev1.NextStringsRequest{Key: "msg"})
			return err
		}(), codes.PermissionDenied},
		// bill draws on order: the serial's name is what the token must
		// list, not the key behind it.
		{"NextSerial with its serial", func() error {
			_, err := c.NextSerial(as(billToken), &idforgev1.NextSerialRequest{Name: "bill"})
			return err
		}(), codes.OK},
		{"NextSerial with the key behind it", func() error {
			_, err := c.NextSerial(as(orderToken), &idforgev1.NextSerialRequest{Name: "bill"})
			return err
		}(), codes.PermissionDenied},
		{"NextSerial with an admin token", func() error {
			_, err := c.NextSerial(as(adminToken), &idforgev1.NextSerialRequest{Name: "bill"})
			return err
		}(), codes.OK},
		{"NextSerial without a token", func() error { _, err := c.NextSerial(ctx, &idforgev1.NextSerialRequest{Name: "bill"}); return err }(), codes.Unauthenticated},
		{"Stream with its key", stream(as(orderToken), "order"), codes.OK},
		{"Stream with another key", stream(as(orderToken), "msg"), codes.PermissionDenied},
		{"Explain with an issue token", func() error { _, err := c.Explain(as(orderToken), &idforgev1.ExplainRequest{Id: 1}); return err }(), codes.OK},
		{"CreateKey with an issue token", func() error {
			_, err := c.CreateKey(as(orderToken), &idforgev1.CreateKeyRequest{Key: "order"})
			return err
		}(), codes.PermissionDenied},
		{"CreateKey with an admin token", func() error {
			_, err := c.CreateKey(as(adminToken), &idforgev1.CreateKeyRequest{Key: "invoice"})
			return err
		}(), codes.OK},
		{"health without a token", func() error {
			_, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
			return err
		}(), codes.OK},
	} {
		if got := status.Code(tc.err); got != tc.want {
			t.Errorf("%s: %v, want %s", tc.name, tc.err, tc.want)
		}
	}
}
