package auth

import (
	"context"
	"encoding/json"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"
)

// The test service speaks JSON (a codec registered for the content
// subtype "json"), so it needs no generated code. Its requests have a key,
// like idforge.v1's, or, for NextSerial, a serial's name.

type keyRequest struct {
	Key string `json:"key"`
}

func (r *keyRequest) GetKey() string { return r.Key }

type nameRequest struct {
	Name string `json:"name"`
}

func (r *nameRequest) GetName() string { return r.Name }

// newRequest returns the request message of a test method naming key.
func newRequest(method, key string) any {
	if method == "NextSerial" {
		return &nameRequest{Name: key}
	}
	return &keyRequest{Key: key}
}

type callerReply struct {
	Caller string `json:"caller"`
}

type jsonCodec struct{}

func (jsonCodec) Marshal(v any) ([]byte, error)      { return json.Marshal(v) }
func (jsonCodec) Unmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }
func (jsonCodec) Name() string                       { return "json" }

func init() { encoding.RegisterCodec(jsonCodec{}) }

const testService = "idforge.test.IDs"

// unary returns the handler of a unary method that answers with the
// caller's name.
func unary(name string) grpc.MethodDesc {
	return grpc.MethodDesc{MethodName: name, Handler: func(srv any, ctx context.Context, dec func(any) error, ic grpc.UnaryServerInterceptor) (any, error) {
		in := newRequest(name, "")
		if err := dec(in); err != nil {
			return nil, err
		}
		h := func(ctx context.Context, req any) (any, error) {
			c, _ := CallerFrom(ctx)
			return &callerReply{Caller: c.Name}, nil
		}
		if ic == nil {
			return h(ctx, in)
		}
		return ic(ctx, in, &grpc.UnaryServerInfo{Server: srv, FullMethod: "/" + testService + "/" + name}, h)
	}}
}

var testServiceDesc = grpc.ServiceDesc{
	ServiceName: testService,
	HandlerType: (*any)(nil),
	Methods: []grpc.MethodDesc{unary("Next"), unary("NextStrings"), unary("NextSerial"),
		unary("CreateKey"), unary("ListKeys")},
	Streams: []grpc.StreamDesc{{StreamName: "Stream", ServerStreams: true, Handler: func(srv any, ss grpc.ServerStream) error {
		in := new(keyRequest)
		if err := ss.RecvMsg(in); err != nil {
			return err
		}
		c, _ := CallerFrom(ss.Context())
		for range 2 {
			if err := ss.SendMsg(&callerReply{Caller: c.Name}); err != nil {
				return err
			}
		}
		return nil
	}}},
}

func newGRPC(t *testing.T, a *Authenticator) *grpc.ClientConn {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	srv := grpc.NewServer(grpc.UnaryInterceptor(a.UnaryInterceptor()), grpc.StreamInterceptor(a.StreamInterceptor()))
	srv.RegisterService(&testServiceDesc, struct{}{})
	healthpb.RegisterHealthServer(srv, health.NewServer())
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func withToken(ctx context.Context, tok string) context.Context {
	if tok == "" {
		return ctx
	}
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+tok)
}

func callUnary(ctx context.Context, conn *grpc.ClientConn, method, tok, key string, opts ...grpc.CallOption) (string, error) {
	var out callerReply
	err := conn.Invoke(withToken(ctx, tok), "/"+testService+"/"+method, newRequest(method, key), &out,
		append(opts, grpc.CallContentSubtype("json"))...)
	return out.Caller, err
}

func callStream(ctx context.Context, conn *grpc.ClientConn, tok, key string) (string, error) {
	cs, err := conn.NewStream(withToken(ctx, tok), &grpc.StreamDesc{ServerStreams: true}, "/"+testService+"/Stream", grpc.CallContentSubtype("json"))
	if err != nil {
		return "", err
	}
	if err := cs.SendMsg(&keyRequest{Key: key}); err != nil {
		return "", err
	}
	if err := cs.CloseSend(); err != nil {
		return "", err
	}
	var out callerReply
	if err := cs.RecvMsg(&out); err != nil {
		return "", err
	}
	return out.Caller, nil
}

func TestGRPC(t *testing.T) {
	a, clk := newTestAuth(t)
	conn := newGRPC(t, a)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	tests := []struct {
		name, method, token, key string
		code                     codes.Code
		caller                   string
	}{
		{"no token", "Next", "", "order", codes.Unauthenticated, ""},
		{"wrong token", "Next", unknownTok, "order", codes.Unauthenticated, ""},
		{"issue", "Next", issueTok, "order", codes.OK, "issue"},
		{"key token, its key", "Next", orderTok, "order", codes.OK, "order"},
		{"key token, other key", "Next", orderTok, "msg", codes.PermissionDenied, ""},
		{"strings, issue", "NextStrings", issueTok, "trace", codes.OK, "issue"},
		{"strings, key token, its key", "NextStrings", orderTok, "order", codes.OK, "order"},
		{"strings, key token, other key", "NextStrings", orderTok, "trace", codes.PermissionDenied, ""},
		{"strings, no token", "NextStrings", "", "order", codes.Unauthenticated, ""},
		// A serial is scoped by its own name, read from the request's
		// name field: the key token lists "order", so it may issue the
		// serial named order and no other.
		{"serial, issue", "NextSerial", issueTok, "bill", codes.OK, "issue"},
		{"serial, key token, its name", "NextSerial", orderTok, "order", codes.OK, "order"},
		{"serial, key token, other name", "NextSerial", orderTok, "bill", codes.PermissionDenied, ""},
		{"serial, key token, no name", "NextSerial", orderTok, "", codes.PermissionDenied, ""},
		{"serial, no token", "NextSerial", "", "bill", codes.Unauthenticated, ""},
		{"issue token on admin call", "CreateKey", issueTok, "new", codes.PermissionDenied, ""},
		{"admin call", "CreateKey", adminTok, "new", codes.OK, "admin"},
		{"read", "ListKeys", orderTok, "", codes.OK, "order"},
		{"read without token", "ListKeys", "", "", codes.Unauthenticated, ""},
		{"stream, no token", "Stream", "", "order", codes.Unauthenticated, ""},
		{"stream, its key", "Stream", orderTok, "order", codes.OK, "order"},
		{"stream, other key", "Stream", orderTok, "msg", codes.PermissionDenied, ""},
		{"stream, admin", "Stream", adminTok, "msg", codes.OK, "admin"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var (
				caller string
				err    error
			)
			if tc.method == "Stream" {
				caller, err = callStream(ctx, conn, tc.token, tc.key)
			} else {
				caller, err = callUnary(ctx, conn, tc.method, tc.token, tc.key)
			}
			if got := status.Code(err); got != tc.code {
				t.Fatalf("code %v (%v), want %v", got, err, tc.code)
			}
			if caller != tc.caller {
				t.Errorf("caller %q, want %q", caller, tc.caller)
			}
		})
	}

	t.Run("health is open", func(t *testing.T) {
		resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
		if err != nil || resp.Status != healthpb.HealthCheckResponse_SERVING {
			t.Fatalf("health check: %v, %v", resp, err)
		}
	})

	t.Run("rate limit", func(t *testing.T) {
		for range 2 {
			if _, err := callUnary(ctx, conn, "Next", limitedTok, "order"); err != nil {
				t.Fatal(err)
			}
		}
		var hdr metadata.MD
		_, err := callUnary(ctx, conn, "Next", limitedTok, "order", grpc.Header(&hdr))
		if status.Code(err) != codes.ResourceExhausted {
			t.Fatalf("over the rate: %v, want ResourceExhausted", err)
		}
		if got := hdr.Get("retry-after"); len(got) != 1 || got[0] != "1" {
			t.Errorf("retry-after header %q, want 1", got)
		}
		if _, err := callStream(ctx, conn, limitedTok, "order"); status.Code(err) != codes.ResourceExhausted {
			t.Fatalf("stream over the rate: %v, want ResourceExhausted", err)
		}
		clk.advance(time.Second)
		if _, err := callUnary(ctx, conn, "Next", limitedTok, "order"); err != nil {
			t.Fatalf("after a second: %v", err)
		}
	})

	// Serials and string IDs draw from the token's rate like any call.
	t.Run("rate limit, serials and strings", func(t *testing.T) {
		clk.advance(2 * time.Second) // the burst of 2 is back
		for _, method := range []string{"NextSerial", "NextStrings"} {
			if _, err := callUnary(ctx, conn, method, limitedTok, "bill"); err != nil {
				t.Fatalf("%s within the burst: %v", method, err)
			}
		}
		for _, method := range []string{"NextSerial", "NextStrings"} {
			var hdr metadata.MD
			_, err := callUnary(ctx, conn, method, limitedTok, "bill", grpc.Header(&hdr))
			if status.Code(err) != codes.ResourceExhausted {
				t.Fatalf("%s over the rate: %v, want ResourceExhausted", method, err)
			}
			if got := hdr.Get("retry-after"); len(got) != 1 || got[0] != "1" {
				t.Errorf("%s: retry-after header %q, want 1", method, got)
			}
		}
	})
}

// bothRequest names a key and a name; the key is what is checked.
type bothRequest struct{}

func (bothRequest) GetKey() string  { return "key" }
func (bothRequest) GetName() string { return "name" }

func TestRequestKey(t *testing.T) {
	for _, tc := range []struct {
		name string
		msg  any
		key  string
		ok   bool
	}{
		{"key field", &keyRequest{Key: "order"}, "order", true},
		{"name field", &nameRequest{Name: "bill"}, "bill", true},
		{"empty name", &nameRequest{}, "", true},
		{"both: the key", bothRequest{}, "key", true},
		{"neither", &callerReply{Caller: "x"}, "", false},
	} {
		if key, ok := requestKey(tc.msg); key != tc.key || ok != tc.ok {
			t.Errorf("%s: requestKey = %q, %v; want %q, %v", tc.name, key, ok, tc.key, tc.ok)
		}
	}
}

func TestDefaultMethodLevel(t *testing.T) {
	for method, want := range map[string]Level{
		"/grpc.health.v1.Health/Check":                                   Open,
		"/grpc.health.v1.Health/Watch":                                   Open,
		"/grpc.reflection.v1.ServerReflection/ServerReflectionInfo":      Open,
		"/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo": Open,
		"/idforge.v1.IDForge/Next":                                       Issue,
		"/idforge.v1.IDForge/NextBatch":                                  Issue,
		"/idforge.v1.IDForge/Stream":                                     Issue,
		"/idforge.v1.IDForge/NextSerial":                                 Issue,
		"/idforge.v1.IDForge/Reserve":                                    Issue,
		"/idforge.v1.IDForge/Void":                                       Issue,
		"/idforge.v1.IDForge/Audit":                                      Read,
		"/idforge.v1.IDForge/NextStrings":                                Issue,
		"/idforge.v1.IDForge/CreateKey":                                  Admin,
		"/idforge.v1.IDForge/DeleteKey":                                  Admin,
		"/idforge.v1.IDForge/Explain":                                    Read,
		"/idforge.v1.IDForge/Make":                                       Read,
		"/idforge.v1.IDForge/GetKey":                                     Read,
		"/idforge.v1.IDForge/ListKeys":                                   Read,
		"/idforge.v1.IDForge/CreateQuota":                                Admin,
		"/idforge.v1.IDForge/RetireQuota":                                Admin,
		"/idforge.v1.IDForge/GetQuota":                                   Read,
		"/idforge.v1.IDForge/ListQuotas":                                 Read,
	} {
		if got := DefaultMethodLevel(method); got != want {
			t.Errorf("DefaultMethodLevel(%s) = %v, want %v", method, got, want)
		}
	}
}
