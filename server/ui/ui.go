package ui

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/httperr"
)

//go:embed index.html
var page []byte

// placeholder is where the page receives the API's answers at its first
// paint, inside <script type="application/json" id="initial">.
var placeholder = []byte("{{INITIAL}}")

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
// html (one without attributes): 'sha256-…' of its content. The page is
// ours and has exactly one of each; a page without one panics at
// start-up, as a programming error.
func inlineHash(html []byte, tag string) string {
	open, closing := []byte("<"+tag+">"), []byte("</"+tag+">")
	i := bytes.Index(html, open)
	if i < 0 {
		panic("ui: index.html has no inline <" + tag + ">")
	}
	j := bytes.Index(html[i:], closing)
	if j < 0 {
		panic("ui: index.html has no inline <" + tag + ">")
	}
	sum := sha256.Sum256(html[i+len(open) : i+j])
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

// Paths are the API paths the page shows, relative to where the API is
// mounted; the page polls the same ones.
var Paths = []string{"v1/keys", "readyz", "metrics", "v1/node", "v1/serials"}

// answer is one API answer embedded in the page.
type answer struct {
	Status int `json:"status"`
	Body   any `json:"body"`
}

// initial is what the page renders at its first paint.
type initial struct {
	At      time.Time          `json:"at"`
	Answers map[string]*answer `json:"answers"`
}

// metricPrefixes are the metrics the page reads; the rest of /metrics
// (the Go runtime's) stays out of the page.
var metricPrefixes = []string{"idforge_segment_", "idforge_source_"}

// embed asks api for every path the page shows, as the request r would
// (its Authorization and Cookie headers: a node that wants a token
// answers 401 without one, and the page asks for it), and returns the
// answers as JSON safe inside a <script> element.
func embed(api http.Handler, r *http.Request) []byte {
	in := initial{At: time.Now().UTC(), Answers: map[string]*answer{}}
	for _, p := range Paths {
		req := httptest.NewRequestWithContext(r.Context(), http.MethodGet, "/"+p, nil)
		req.RemoteAddr = r.RemoteAddr
		for _, h := range []string{"Authorization", "Cookie"} {
			if v := r.Header.Get(h); v != "" {
				req.Header.Set(h, v)
			}
		}
		rec := httptest.NewRecorder()
		api.ServeHTTP(rec, req)
		a := &answer{Status: rec.Code}
		if p == "metrics" {
			a.Body = filterMetrics(rec.Body.Bytes())
		} else if err := json.Unmarshal(rec.Body.Bytes(), &a.Body); err != nil {
			a.Body = nil
		}
		in.Answers[p] = a
	}
	out, err := json.Marshal(in) // escapes <, > and &: safe in <script>
	if err != nil {
		return []byte("null")
	}
	return out
}

// filterMetrics keeps the lines of a Prometheus text answer the page
// reads.
func filterMetrics(body []byte) string {
	var sb strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		for _, p := range metricPrefixes {
			if strings.HasPrefix(line, p) {
				sb.WriteString(line)
				sb.WriteByte('\n')
				break
			}
		}
	}
	return sb.String()
}

// Handler returns the handler of the admin page. It answers GET and HEAD
// on whatever path it is mounted at with the page; mount it at /ui (and
// /ui/), beside the API, since the page calls the API relative to the
// parent of its "ui" path element. Other methods get 405.
//
// When api is not nil, the page comes with api's answers to Paths
// embedded, asked as the request for the page would ask them (with its
// credentials), so its first paint shows the tables filled; pass the
// handler that serves the API at the root, authentication included. With
// nil the page fetches everything after loading.
func Handler(api http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			h.Set("Allow", "GET, HEAD")
			httperr.Write(w, r, nil, fmt.Errorf("%w: %s; use GET", idforge.ErrMethodNotAllowed, r.Method))
			return
		}
		data := []byte("null")
		if api != nil && r.Method == http.MethodGet {
			data = embed(api, r)
		}
		body := bytes.Replace(page, placeholder, data, 1)
		h.Set("Content-Type", "text/html; charset=utf-8")
		if r.Method == http.MethodGet {
			h.Set("Content-Length", strconv.Itoa(len(body)))
		}
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusOK)
		if r.Method == http.MethodGet {
			w.Write(body)
		}
	})
}
