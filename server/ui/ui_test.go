package ui

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestHandler(t *testing.T) {
	srv := httptest.NewServer(Handler(nil))
	defer srv.Close()

	resp, err := srv.Client().Get(srv.URL + "/ui")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !bytes.Equal(body, bytes.Replace(page, placeholder, []byte("null"), 1)) {
		t.Fatalf("GET /ui: %d, %d bytes", resp.StatusCode, len(body))
	}
	h := resp.Header
	if ct := h.Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	c := h.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "script-src 'sha256-", "style-src 'sha256-", "connect-src 'self'", "frame-ancestors 'none'"} {
		if !strings.Contains(c, want) {
			t.Errorf("CSP %q lacks %q", c, want)
		}
	}
	if h.Get("X-Frame-Options") != "DENY" || h.Get("Referrer-Policy") != "no-referrer" {
		t.Errorf("headers %v", h)
	}
	// Self-contained: nothing is loaded from elsewhere.
	for _, ref := range []string{"http://", "https://", "//cdn", "src=\"/", "href=\"/"} {
		if bytes.Contains(page, []byte(ref)) {
			t.Errorf("the page refers to %q", ref)
		}
	}

	req, _ := http.NewRequest(http.MethodHead, srv.URL+"/ui/", nil)
	resp, err = srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("HEAD: %d", resp.StatusCode)
	}
	resp, err = srv.Client().Post(srv.URL+"/ui", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed || !strings.Contains(string(body), `"code":"method_not_allowed"`) {
		t.Errorf("POST: %d %s", resp.StatusCode, body)
	}
}
