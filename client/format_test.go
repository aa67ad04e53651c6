package client

import (
	"context"
	"errors"
	"net"
	"net/http/httptest"
	"testing"

	"google.golang.org/grpc"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/issuer"
	"github.com/idforge/idforge/obfuscate"
	"github.com/idforge/idforge/server/grpcapi"
	"github.com/idforge/idforge/server/httpapi"
)

// A key shown as permuted base62 gives the HTTP and the gRPC client the
// same set of integers: the permuted ones, never raw values that could
// equal them.
func TestPermutedKeyOverHTTPAndGRPC(t *testing.T) {
	f, err := obfuscate.ParseFormat("feistel:bits=40+base62:min=7")
	if err != nil {
		t.Fatal(err)
	}
	if f, err = f.WithKey([]byte("a test key, 16+ bytes")); err != nil {
		t.Fatal(err)
	}
	iss := issuer.New(newStore(t), nil, issuer.Settings{Logger: quiet, Formats: map[string]obfuscate.Format{"order": f}})
	defer iss.Close()
	srv := httptest.NewServer(httpapi.New(iss, httpapi.Options{Logger: quiet}))
	defer srv.Close()
	g := grpc.NewServer()
	grpcapi.New(iss, grpcapi.Options{Logger: quiet}).Register(g)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go g.Serve(ln)
	defer g.Stop()

	hc, err := NewHTTP([]string{srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	defer hc.Close()
	gc, err := NewGRPC([]string{ln.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	defer gc.Close()

	ctx := context.Background()
	raws := map[int64]bool{}
	for i := range 50 {
		c := []Client{hc, gc}[i%2]
		ids, err := c.NextN(ctx, "order", 3)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			raw, err := f.Permute.Decode(id)
			if err != nil || raw < 1 || raw > 150 {
				t.Fatalf("client %d got %d: not a permuted ID of order (raw %d, %v)", i%2, id, raw, err)
			}
			if raws[raw] {
				t.Fatalf("raw ID %d issued twice", raw)
			}
			raws[raw] = true
		}
	}
	if _, err := iss.ClaimRange(ctx, "order", 5); !errors.Is(err, idforge.ErrWrongStrategy) {
		t.Fatalf("range of a permuted key: %v", err)
	}
}
