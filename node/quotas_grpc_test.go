package node_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/test/bufconn"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/auth"
	"github.com/idforge/idforge/client"
	"github.com/idforge/idforge/server/grpcapi"
	"github.com/idforge/idforge/server/httpapi"
)

// TestQuotasOverGRPC defines, lists, shows and retires a quota over gRPC
// (client.NewGRPCQuotas, behind the auth interceptors), and checks that a
// call it refuses is rejected over gRPC and HTTP and consumes nothing.
func TestQuotasOverGRPC(t *testing.T) {
	const adminToken, issueToken = "admin-token-0123456789", "issue-token-0123456789"
	a := openAPINode(t, "sqlite://"+filepath.Join(t.TempDir(), "shared.db"), 1, nil)
	a.must(t, 201, "POST", "/v1/keys", `{"key":"order"}`)
	web := httptest.NewServer(httpapi.New(a.n.Issuer(), httpapi.Options{Quotas: a.n.Quotas()}))
	defer web.Close()

	authn, err := auth.New(auth.Config{Tokens: []auth.Token{
		{Name: "ops", Token: adminToken, Role: auth.RoleAdmin},
		{Name: "app", Token: issueToken, Role: auth.RoleIssue},
	}})
	if err != nil {
		t.Fatal(err)
	}
	g := grpc.NewServer(grpc.ChainUnaryInterceptor(authn.UnaryInterceptor()), grpc.ChainStreamInterceptor(authn.StreamInterceptor()))
	grpcapi.New(a.n.Issuer(), grpcapi.Options{Quotas: a.n.Quotas()}).Register(g)
	ln := bufconn.Listen(1 << 20)
	go g.Serve(ln)
	defer g.Stop()
	dial := client.WithDialOptions(grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return ln.DialContext(ctx) }))
	admin, err := client.NewGRPCQuotas("passthrough:///bufnet", dial, client.WithToken(adminToken))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	app, err := client.NewGRPCQuotas("passthrough:///bufnet", dial, client.WithToken(issueToken))
	if err != nil {
		t.Fatal(err)
	}
	defer app.Close()
	ids, err := client.NewGRPC([]string{"passthrough:///bufnet"}, dial, client.WithToken(issueToken))
	if err != nil {
		t.Fatal(err)
	}
	defer ids.Close()
	ctx := context.Background()
	grpcCode := func(err error) codes.Code {
		var e *client.Error
		if !errors.As(err, &e) {
			return codes.Unknown
		}
		return e.GRPCCode
	}
	reason := func(err error) idforge.Code {
		var e *client.Error
		if !errors.As(err, &e) {
			return ""
		}
		return e.Code
	}

	q, err := admin.Define(ctx, client.Quota{Name: "orders", Keys: []string{"order"}, Limit: 2, Per: "day", Description: "two a day"})
	if err != nil || q.Name != "orders" || q.Limit != 2 || q.Per != "day" || q.Origin != "api" || q.Description != "two a day" || q.Retired {
		t.Fatalf("Define = %+v, %v", q, err)
	}
	if list, err := app.List(ctx); err != nil || len(list) != 1 || list[0].Name != "orders" || list[0].Keys[0] != "order" {
		t.Fatalf("List (issue token) = %+v, %v", list, err)
	}
	if got, err := admin.Get(ctx, "orders"); err != nil || got.Limit != 2 || got.Per != "day" {
		t.Fatalf("Get = %+v, %v", got, err)
	}
	if _, err := admin.Get(ctx, "nosuch"); !errors.Is(err, idforge.ErrUnknownKey) || grpcCode(err) != codes.NotFound {
		t.Fatalf("Get of nothing: %v; want NOT_FOUND, unknown_key", err)
	}
	if _, err := admin.Define(ctx, client.Quota{Name: "orders", Closed: true}); !errors.Is(err, idforge.ErrKeyExists) {
		t.Fatalf("Define of a taken name: %v; want ErrKeyExists", err)
	}

	for _, want := range []int64{1, 2} {
		if id, err := ids.Next(ctx, "order"); err != nil || id != want {
			t.Fatalf("Next = %d, %v; want %d", id, err, want)
		}
	}
	for range 3 {
		if _, err := ids.Next(ctx, "order"); reason(err) != idforge.CodeRejected || grpcCode(err) != codes.FailedPrecondition {
			t.Fatalf("Next over the quota: %v; want FAILED_PRECONDITION, rejected", err)
		}
	}
	if _, err := ids.NextN(ctx, "order", 5); !errors.Is(err, idforge.ErrRejected) {
		t.Fatalf("NextN over the quota: %v; want rejected", err)
	}
	resp, err := web.Client().Get(web.URL + "/v1/ids/order")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 403 || !strings.Contains(string(body), `"rejected"`) {
		t.Fatalf("GET /v1/ids/order over the quota: %d %s; want 403 rejected", resp.StatusCode, body)
	}

	for _, tc := range []struct {
		q    client.Quota
		want string
	}{
		{client.Quota{Name: "neg", Limit: -1, Per: "day"}, `limit -1: a quota allows a positive number of IDs`},
		{client.Quota{Name: "zero", Limit: 0, Per: "day"}, `limit 0 per day`},
		{client.Quota{Name: "nothing"}, `refuses nothing`},
		{client.Quota{Name: "period", Limit: 5, Per: "fortnight"}, `unknown period "fortnight"`},
		{client.Quota{Name: "bad name!", Closed: true}, `quota name`},
	} {
		_, err := admin.Define(ctx, tc.q)
		if grpcCode(err) != codes.InvalidArgument || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Define(%+v) = %v; want INVALID_ARGUMENT mentioning %q", tc.q, err, tc.want)
		}
	}

	if _, err := app.Define(ctx, client.Quota{Name: "mine", Closed: true}); grpcCode(err) != codes.PermissionDenied {
		t.Fatalf("Define with an issue token: %v; want PERMISSION_DENIED", err)
	}
	if _, err := app.Retire(ctx, "orders"); grpcCode(err) != codes.PermissionDenied {
		t.Fatalf("Retire with an issue token: %v; want PERMISSION_DENIED", err)
	}
	if q, err := admin.Retire(ctx, "orders"); err != nil || !q.Retired {
		t.Fatalf("Retire = %+v, %v", q, err)
	}
	// The refused calls took nothing: the key goes on at 3.
	if id, err := ids.Next(ctx, "order"); err != nil || id != 3 {
		t.Fatalf("Next after retiring the quota = %d, %v; want 3", id, err)
	}
	if _, err := admin.Define(ctx, client.Quota{Name: "orders", Closed: true}); !errors.Is(err, idforge.ErrKeyExists) {
		t.Fatalf("Define of a retired name: %v; want ErrKeyExists", err)
	}
}
