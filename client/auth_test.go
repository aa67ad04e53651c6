package client

import (
	"errors"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/idforge/idforge/auth"
)

// WithToken passes the auth package's checks over both transports, the
// range cache's key lookup included; a refused token is not retried on
// another node.
func TestToken(t *testing.T) {
	const token, other = "orders-0123456789abcdef", "unknown-0123456789abcdef"
	a, err := auth.New(auth.Config{Tokens: []auth.Token{{Name: "orders", Token: token, Role: auth.RoleIssue, Keys: []string{"order"}}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range variants() {
		if !v.mode.remote {
			continue
		}
		t.Run(v.name, func(t *testing.T) {
			st := newStore(t)
			n, spare := newGuardedNode(t, st, 1, 1000, a), newGuardedNode(t, st, 2, 1000, a)
			ctx := testCtx(t)

			c := v.mode.new(t, []*node{n, spare}, append(v.opts, WithToken(token))...)
			defer c.Close()
			if _, err := c.NextN(ctx, "order", 3); err != nil {
				t.Fatalf("with the token: %v", err)
			}
			var e *Error
			if _, err := c.Next(ctx, "msg"); !errors.As(err, &e) || (e.HTTPStatus != 403 && e.GRPCCode != codes.PermissionDenied) {
				t.Fatalf("a key the token does not list: %v", err)
			}

			bad := v.mode.new(t, []*node{n, spare}, append(v.opts, WithToken(other))...)
			defer bad.Close()
			before := v.mode.idCalls(spare)
			_, err := bad.Next(ctx, "order")
			if !errors.As(err, &e) || (e.Code != "unauthenticated" && e.GRPCCode != codes.Unauthenticated) {
				t.Fatalf("unknown token: %v", err)
			}
			if v.mode.idCalls(spare) != before {
				t.Fatal("a refused token was tried on the next node")
			}
		})
	}
}
