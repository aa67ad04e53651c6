package main_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/idforge/idforge/client"
	"github.com/idforge/idforge/internal/e2e"
	"github.com/idforge/idforge/internal/testca"
)

// The binary with [tls] and a client CA: the Go client issues over HTTPS
// and over gRPC with TLS when it presents a certificate of that CA, and
// is refused without one or when it does not trust the server.
func TestTLSOnTheBinary(t *testing.T) {
	endToEnd(t, parallel)
	dir := t.TempDir()
	ca := testca.New(t, "idforge e2e CA")
	srvCert, srvKey := ca.Issue(t, 2, true)
	cliCert, cliKey := ca.Issue(t, 3, false)
	cfgFile := filepath.Join(dir, "idforge.toml")
	cfg := fmt.Sprintf(`
[tls]
cert = %q
key = %q
client_ca = %q

[[keys]]
name = "order"
`, testca.WriteFile(t, dir, "server.pem", srvCert), testca.WriteFile(t, dir, "server-key.pem", srvKey),
		testca.WriteFile(t, dir, "ca.pem", ca.PEM))
	if err := os.WriteFile(cfgFile, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	grpcAddr := e2e.FreePort(t)
	n := e2e.StartNode(t, "--config", cfgFile, "--grpc", grpcAddr)
	ctx := context.Background()

	trusted := ca.ClientConfig(t, cliCert, cliKey)
	hc, err := client.NewHTTP([]string{n.Addr}, client.WithTLS(trusted), client.WithRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	defer hc.Close()
	gc, err := client.NewGRPC([]string{grpcAddr}, client.WithTLS(trusted), client.WithRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	defer gc.Close()
	seen := map[int64]bool{}
	for _, c := range []client.Client{hc, gc, hc, gc} {
		ids, err := c.NextN(ctx, "order", 3)
		if err != nil {
			t.Fatalf("with a client certificate: %v", err)
		}
		for _, id := range ids {
			if seen[id] {
				t.Fatalf("ID %d twice", id)
			}
			seen[id] = true
		}
	}

	for name, cfg := range map[string]*testca.CA{"no client certificate": ca, "server not trusted": testca.New(t, "another CA")} {
		tlsCfg := cfg.ClientConfig(t, nil, nil)
		if name == "server not trusted" {
			tlsCfg = cfg.ClientConfig(t, cliCert, cliKey)
		}
		hc, err := client.NewHTTP([]string{n.Addr}, client.WithTLS(tlsCfg), client.WithRetries(0))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := hc.Next(ctx, "order"); err == nil {
			t.Errorf("HTTPS, %s: an ID was issued", name)
		}
		hc.Close()
		gc, err := client.NewGRPC([]string{grpcAddr}, client.WithTLS(tlsCfg), client.WithRetries(0))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := gc.Next(ctx, "order"); err == nil {
			t.Errorf("gRPC with TLS, %s: an ID was issued", name)
		}
		gc.Close()
	}
}
