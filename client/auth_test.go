package client

import (
	"errors"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/auth"
)

// WithToken passes the auth package's checks over both transports, the
// range cache's key lookup included; a serial is allowed by its own name;
// a refused token is not retried on another node.
func TestToken(t *testing.T) {
	const token, other = "orders-0123456789abcdef", "unknown-0123456789abcdef"
	a, err := auth.New(auth.Config{Tokens: []auth.Token{{Name: "orders", Token: token, Role: auth.RoleIssue, Keys: []string{"order", "bill"}}}})
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
			if _, err := c.NextStrings(ctx, "order", 2); err != nil {
				t.Fatalf("NextStrings with the token: %v", err)
			}
			// bill draws on invoice, which the token does not list: what
			// counts is the serial's name.
			if _, err := c.NextSerial(ctx, "bill", 2, nil); err != nil {
				t.Fatalf("NextSerial of a serial the token lists: %v", err)
			}
			var e *Error
			if _, err := c.Next(ctx, "msg"); !errors.As(err, &e) || (e.HTTPStatus != 403 && e.GRPCCode != codes.PermissionDenied) || !errors.Is(err, idforge.ErrForbidden) {
				t.Fatalf("a key the token does not list: %v", err)
			}
			if _, err := c.NextStrings(ctx, "trace", 1); !errors.As(err, &e) || (e.HTTPStatus != 403 && e.GRPCCode != codes.PermissionDenied) {
				t.Fatalf("NextStrings of a key the token does not list: %v", err)
			}
			if _, err := c.NextSerial(ctx, "job", 1, map[string]string{"area": "1"}); !errors.As(err, &e) || (e.HTTPStatus != 403 && e.GRPCCode != codes.PermissionDenied) {
				t.Fatalf("NextSerial of a serial the token does not list: %v", err)
			}

			bad := v.mode.new(t, []*node{n, spare}, append(v.opts, WithToken(other))...)
			defer bad.Close()
			before := v.mode.idCalls(spare)
			_, err := bad.Next(ctx, "order")
			if !errors.As(err, &e) || e.Code != "unauthenticated" || !errors.Is(err, idforge.ErrUnauthenticated) {
				t.Fatalf("unknown token: %v", err)
			}
			if v.mode.idCalls(spare) != before {
				t.Fatal("a refused token was tried on the next node")
			}
		})
	}
}
