package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

// readmeCurl matches the curl lines of a README block: an optional
// -XMETHOD, the URL (quoted or not), an optional -d 'BODY'.
var readmeCurl = regexp.MustCompile(`^\s+curl (?:-X(\w+) )?'?(localhost:8080[^' ]*)'?(?: -d '([^']*)')?`)

// TestREADMESerialExampleThroughTheAPI follows the READMEs' steps that
// define the per-day counter and the waybill serial through the API on a
// node as `idforge serve` opens it with no configuration, and checks the
// serials they promise: today's date and 00001, 00002.
func TestREADMESerialExampleThroughTheAPI(t *testing.T) {
	for _, file := range []string{"../../README.md", "../../README.zh-CN.md"} {
		t.Run(file, func(t *testing.T) {
			text, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			_, block, ok := strings.Cut(string(text), "go run ./cmd/idforge serve`")
			if !ok {
				t.Fatal("no step starting from a fresh `go run ./cmd/idforge serve`")
			}
			var steps [][]string
			for _, line := range strings.Split(block, "\n") {
				if m := readmeCurl.FindStringSubmatch(line); m != nil {
					steps = append(steps, m)
				} else if len(steps) > 0 && strings.TrimSpace(line) != "" && !strings.HasPrefix(line, "    ") {
					break
				}
			}
			if len(steps) != 3 {
				t.Fatalf("found %d curl steps, want 3 (counter, serial, issue)", len(steps))
			}
			t.Chdir(t.TempDir()) // the counter's SQLite file is relative
			cfg := defaultConfig()
			cfg.Data = "idforge-data"
			cfg.LogLevel = "error"
			n, err := openNode(context.Background(), cfg, newLogger(io.Discard, "error"), cfg.owner(""), env(nil))
			if err != nil {
				t.Fatal(err)
			}
			defer n.Close()
			// No tokens: serve on localhost is open, as the README runs it.
			srv := httptest.NewServer(httpHandler(n, newLogger(io.Discard, "error"), nil))
			defer srv.Close()
			var last string
			for _, m := range steps {
				method, path, body := m[1], strings.TrimPrefix(m[2], "localhost:8080"), m[3]
				if method == "" {
					method = "GET"
				}
				req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
				resp, err := srv.Client().Do(req)
				if err != nil {
					t.Fatal(err)
				}
				raw, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode/100 != 2 {
					t.Fatalf("%s %s %s: %d %s", method, path, body, resp.StatusCode, raw)
				}
				last = string(raw)
			}
			var got struct{ Values []string }
			if err := json.Unmarshal([]byte(last), &got); err != nil {
				t.Fatal(err)
			}
			day := time.Now().UTC().Format("20060102")
			if len(got.Values) != 2 || got.Values[0] != day+"00001" || got.Values[1] != day+"00002" {
				t.Fatalf("serials = %q, want %s00001 and %s00002", got.Values, day, day)
			}
		})
	}
}
