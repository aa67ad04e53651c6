package auth

import (
	"crypto/tls"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/idforge/idforge/internal/testca"
)

// serveTLS starts an HTTPS server with cfg and returns its URL.
func serveTLS(t *testing.T, cfg *tls.Config) string {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello")
	}))
	srv.TLS = cfg
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv.URL
}

func get(url string, cfg *tls.Config) error {
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}, Timeout: 5 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if string(b) != "hello" {
		return errors.New("unexpected body " + string(b))
	}
	return nil
}

func TestServerTLS(t *testing.T) {
	dir := t.TempDir()
	ca := testca.New(t, "idforge test CA")
	srvCert, srvKey := ca.Issue(t, 2, true)
	cliCert, cliKey := ca.Issue(t, 3, false)
	other := testca.New(t, "another CA")
	strangerCert, strangerKey := other.Issue(t, 4, false)

	certFile := testca.WriteFile(t, dir, "server.pem", srvCert)
	keyFile := testca.WriteFile(t, dir, "server-key.pem", srvKey)
	caFile := testca.WriteFile(t, dir, "ca.pem", ca.PEM)

	roots := ca.Pool()
	clientPair := func(c, k []byte) []tls.Certificate { return ca.ClientConfig(t, c, k).Certificates }

	t.Run("server certificate only", func(t *testing.T) {
		cfg, err := ServerTLS(certFile, keyFile, "")
		if err != nil {
			t.Fatal(err)
		}
		if cfg.MinVersion != tls.VersionTLS12 || cfg.ClientAuth != tls.NoClientCert {
			t.Errorf("MinVersion %x, ClientAuth %v", cfg.MinVersion, cfg.ClientAuth)
		}
		url := serveTLS(t, cfg)
		if err := get(url, &tls.Config{RootCAs: roots}); err != nil {
			t.Fatalf("a client trusting the CA: %v", err)
		}
		if err := get(url, &tls.Config{}); err == nil {
			t.Fatal("a client not trusting the CA connected")
		}
		if err := get(url, &tls.Config{RootCAs: roots, MaxVersion: tls.VersionTLS11}); err == nil {
			t.Fatal("a TLS 1.1 client connected")
		}
	})

	t.Run("client certificates required", func(t *testing.T) {
		cfg, err := ServerTLS(certFile, keyFile, caFile)
		if err != nil {
			t.Fatal(err)
		}
		url := serveTLS(t, cfg)
		if err := get(url, &tls.Config{RootCAs: roots, Certificates: clientPair(cliCert, cliKey)}); err != nil {
			t.Fatalf("a client with a certificate of the CA: %v", err)
		}
		if err := get(url, &tls.Config{RootCAs: roots}); err == nil {
			t.Fatal("a client without a certificate connected")
		}
		if err := get(url, &tls.Config{RootCAs: roots, Certificates: clientPair(strangerCert, strangerKey)}); err == nil {
			t.Fatal("a client with a certificate of another CA connected")
		}
	})

	t.Run("errors", func(t *testing.T) {
		for _, tc := range []struct{ cert, key, ca string }{
			{"", keyFile, ""},
			{certFile, "", ""},
			{filepath.Join(dir, "missing.pem"), keyFile, ""},
			{certFile, certFile, ""},
			{certFile, keyFile, filepath.Join(dir, "missing-ca.pem")},
			{certFile, keyFile, keyFile}, // no certificate in it
		} {
			if _, err := ServerTLS(tc.cert, tc.key, tc.ca); err == nil {
				t.Errorf("ServerTLS(%q, %q, %q) succeeded", tc.cert, tc.key, tc.ca)
			}
		}
	})
}
