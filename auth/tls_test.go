package auth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// testCA is a certificate authority made for one test.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newTestCA(t *testing.T, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// issue returns a certificate and key in PEM signed by ca: a server
// certificate for 127.0.0.1 or a client certificate.
func (ca *testCA) issue(t *testing.T, serial int64, server bool) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      pkix.Name{CommonName: "client"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if server {
		tmpl.Subject.CommonName = "127.0.0.1"
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
}

func writeFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

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
	ca := newTestCA(t, "idforge test CA")
	srvCert, srvKey := ca.issue(t, 2, true)
	cliCert, cliKey := ca.issue(t, 3, false)
	other := newTestCA(t, "another CA")
	strangerCert, strangerKey := other.issue(t, 4, false)

	certFile := writeFile(t, dir, "server.pem", srvCert)
	keyFile := writeFile(t, dir, "server-key.pem", srvKey)
	caFile := writeFile(t, dir, "ca.pem", ca.pem)

	roots := x509.NewCertPool()
	roots.AddCert(ca.cert)
	clientPair := func(c, k []byte) []tls.Certificate {
		pair, err := tls.X509KeyPair(c, k)
		if err != nil {
			t.Fatal(err)
		}
		return []tls.Certificate{pair}
	}

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
