package ui

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"fmt"
	"net/http"
	"strconv"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/httperr"
)

//go:embed index.html
var page []byte

// csp is the page's Content-Security-Policy, computed once from the page.
var csp = policy(page)

// policy allows exactly the page's inline script and style, by their
// SHA-256 hashes, and requests to the page's own origin.
func policy(html []byte) string {
	return fmt.Sprintf("default-src 'none'; script-src %s; style-src %s; connect-src 'self'; img-src data:; "+
		"base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
		inlineHash(html, "script"), inlineHash(html, "style"))
}

// inlineHash returns the CSP source of the first inline <tag> element of
// html: 'sha256-…' of its content. The page is ours and has exactly one
// of each; a page without one panics at start-up, as a programming error.
func inlineHash(html []byte, tag string) string {
	open, closing := []byte("<"+tag+">"), []byte("</"+tag+">")
	i := bytes.Index(html, open)
	j := bytes.Index(html, closing)
	if i < 0 || j < i {
		panic("ui: index.html has no inline <" + tag + ">")
	}
	sum := sha256.Sum256(html[i+len(open) : j])
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

// Handler returns the handler of the admin page. It answers GET and HEAD
// on whatever path it is mounted at with the page; mount it at /ui (and
// /ui/), beside the API, since the page calls the API relative to the
// parent of its "ui" path element. Other methods get 405.
func Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			h.Set("Allow", "GET, HEAD")
			httperr.Write(w, r, nil, fmt.Errorf("%w: %s; use GET", idforge.ErrMethodNotAllowed, r.Method))
			return
		}
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Content-Length", strconv.Itoa(len(page)))
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-cache")
		w.WriteHeader(http.StatusOK)
		if r.Method == http.MethodGet {
			w.Write(page)
		}
	})
}
