package grpcapi

import (
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	idforgev1 "github.com/idforge/idforge/api/idforge/v1"
	"github.com/idforge/idforge/auth"
)

func TestUpdateAndRetireKey(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	ctx := testCtx(t)
	got, err := f.client.UpdateKey(ctx, &idforgev1.UpdateKeyRequest{Key: "order", Step: proto.Int64(50), Description: proto.String("orders"), MaxStep: proto.Int64(400)})
	if err != nil || got.GetStep() != 50 || got.GetDescription() != "orders" || got.GetMaxStep() != 400 || got.GetRetired() {
		t.Fatalf("UpdateKey = %v, %v", got, err)
	}
	for name, tc := range map[string]struct {
		req    *idforgev1.UpdateKeyRequest
		code   codes.Code
		reason string
	}{
		"nothing":       {&idforgev1.UpdateKeyRequest{Key: "order"}, codes.InvalidArgument, "invalid_argument"},
		"step 0":        {&idforgev1.UpdateKeyRequest{Key: "order", Step: proto.Int64(0)}, codes.InvalidArgument, "invalid_argument"},
		"min above max": {&idforgev1.UpdateKeyRequest{Key: "order", MinStep: proto.Int64(500)}, codes.InvalidArgument, "invalid_argument"},
		"unknown":       {&idforgev1.UpdateKeyRequest{Key: "nope", Step: proto.Int64(5)}, codes.NotFound, "unknown_key"},
	} {
		_, err := f.client.UpdateKey(ctx, tc.req)
		if c, r := reasonOf(err); c != tc.code || r != tc.reason {
			t.Errorf("%s: %v, want %v %s", name, err, tc.code, tc.reason)
		}
	}
	got, err = f.client.RetireKey(ctx, &idforgev1.RetireKeyRequest{Key: "order"})
	if err != nil || !got.GetRetired() {
		t.Fatalf("RetireKey = %v, %v", got, err)
	}
	_, err = f.client.Next(ctx, &idforgev1.NextRequest{Key: "order"})
	if c, r := reasonOf(err); c != codes.FailedPrecondition || r != "retired" {
		t.Fatalf("Next(retired) = %v, want FAILED_PRECONDITION retired", err)
	}
	_, err = f.client.CreateKey(ctx, &idforgev1.CreateKeyRequest{Key: "order"})
	if c, r := reasonOf(err); c != codes.AlreadyExists || r != "key_exists" {
		t.Fatalf("CreateKey(retired name) = %v, want key_exists", err)
	}
	_, err = f.client.RetireKey(ctx, &idforgev1.RetireKeyRequest{Key: "nope"})
	if c, r := reasonOf(err); c != codes.NotFound || r != "unknown_key" {
		t.Fatalf("RetireKey(unknown) = %v", err)
	}
	if auth.DefaultMethodLevel("/idforge.v1.IDForge/RetireKey") != auth.Admin || auth.DefaultMethodLevel("/idforge.v1.IDForge/UpdateKey") != auth.Admin {
		t.Fatal("UpdateKey and RetireKey do not need the admin right")
	}
}
