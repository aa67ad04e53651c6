package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/auth"
	"github.com/idforge/idforge/internal/testsvc"
	"github.com/idforge/idforge/store"
	"github.com/idforge/idforge/worker"
)

// checkErrorLine fails unless stderr is one message that names idforge
// exactly once, at its start, and says want.
func checkErrorLine(t *testing.T, stderr, want string) {
	t.Helper()
	line := strings.TrimSuffix(stderr, "\n")
	if !strings.HasPrefix(line, prefix) || strings.Count(line, prefix) != 1 || strings.Contains(line, "\n") {
		t.Errorf("stderr %q: want one line naming idforge once, at its start", stderr)
	}
	if !strings.Contains(line, want) {
		t.Errorf("stderr %q: want it to say %q", stderr, want)
	}
}

// TestErrorsNameIdforgeOnce runs command lines that fail on idforge's own
// errors (which begin with "idforge: " themselves), through the usage
// path (exit 2) and the failure path (exit 1): each prints its message
// with the prefix once, never "idforge: idforge:".
func TestErrorsNameIdforgeOnce(t *testing.T) {
	badKeys := filepath.Join(t.TempDir(), "keys.toml")
	os.WriteFile(badKeys, []byte("[[keys]]\nname = \"订单\"\n"), 0o600)
	badFormat := filepath.Join(t.TempDir(), "format.toml")
	os.WriteFile(badFormat, []byte("[[keys]]\nname = \"k\"\nformat = \"base62:min=订\"\n"), 0o600)
	badSource := filepath.Join(t.TempDir(), "sources.toml")
	os.WriteFile(badSource, []byte("[[sources]]\nname = \"a b\"\nurl = \"memory://\"\n"), 0o600)
	for _, tc := range []struct {
		name string
		code int
		want string
		args []string
	}{
		{"invalid key, next", 2, "invalid key name: character 1 '订' (U+8BA2) is not allowed", []string{"next", "订单"}},
		{"invalid key, keys create", 2, "invalid key name: character 1 '订'", []string{"keys", "create", "订单"}},
		{"worker out of range", 2, "worker ID out of range: worker ID 99999, the layout allows 0..31", []string{"next", "order", "--worker", "99999"}},
		{"make, worker out of range", 2, "invalid argument: worker 99999 out of range 0..31", []string{"make", "--time", "1700000000000", "--worker", "99999"}},
		{"bad layout", 2, "invalid snowflake layout", []string{"next", "order", "--layout", "bogus"}},
		{"config key", 2, "invalid key name: character 1 '订' (U+8BA2) is not allowed; names use A-Z a-z 0-9 . _ : - (keys[0])", []string{"next", "order", "--config", badKeys}},
		{"config source", 2, "invalid key name: character 2 ' ' (U+0020) is not allowed; names use A-Z a-z 0-9 . _ : - (sources[0])", []string{"next", "order", "--config", badSource}},
		{"config format", 2, "option min: character 1 '订' (U+8BA2) is not allowed", []string{"next", "order", "--config", badFormat}},
		{"unknown key", 1, "unknown key", []string{"next", "nosuch"}},
		{"unknown command", 2, `unknown command "frob"`, []string{"frob"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append(tc.args, "--data", t.TempDir())
			if tc.args[0] == "make" || tc.args[0] == "frob" {
				args = tc.args
			}
			code, _, stderr := runCmd(t, env(nil), args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tc.code, stderr)
			}
			checkErrorLine(t, stderr, tc.want)
		})
	}
}

// TestInContext: context goes after an error of idforge's own (whose
// message begins with what went wrong) and before any other error; either
// way the error still matches its sentinel.
func TestInContext(t *testing.T) {
	own := fmt.Errorf("%w: character 1 '订' (U+8BA2) is not allowed", idforge.ErrInvalidKey)
	err := inContext(own, "config key %q", "订单")
	if got, want := err.Error(), `idforge: invalid key name: character 1 '订' (U+8BA2) is not allowed (config key "订单")`; got != want {
		t.Errorf("own error in context = %q, want %q", got, want)
	}
	if !errors.Is(err, idforge.ErrInvalidKey) {
		t.Errorf("%v lost its sentinel", err)
	}
	other := inContext(errors.New("connection refused"), "store %s", "mysql://db/ids")
	if got, want := other.Error(), "store mysql://db/ids: connection refused"; got != want {
		t.Errorf("other error in context = %q, want %q", got, want)
	}
	if got := errorLine(usageIn(own, "keys[0]")); strings.Count(got, prefix) != 1 {
		t.Errorf("errorLine(usage error) = %q, want the prefix once", got)
	}
	if got := errorLine(other); got != "idforge: store mysql://db/ids: connection refused" {
		t.Errorf("errorLine(other) = %q", got)
	}
}

// TestServeAddressErrors: an address that can never be listened on is a
// configuration error (exit 2) found before anything opens, so no data
// directory appears; an address another process holds is found by
// listening, a runtime failure (exit 1).
func TestServeAddressErrors(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		args       []string
	}{
		{"http port out of range", `http address "127.0.0.1:99999": port "99999" is not a number in 0..65535`, []string{"--http", "127.0.0.1:99999"}},
		{"http without port", `http address "127.0.0.1": want host:port`, []string{"--http", "127.0.0.1"}},
		{"grpc port out of range", `grpc address "127.0.0.1:65536": port "65536"`, []string{"--grpc", "127.0.0.1:65536"}},
		{"grpc port not a number", `grpc address "127.0.0.1:nosuchservice-x"`, []string{"--grpc", "127.0.0.1:nosuchservice-x"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "data")
			code, _, stderr := runCmd(t, env(nil), append([]string{"serve", "--data", data}, tc.args...)...)
			if code != 2 {
				t.Errorf("exit %d, want 2 (stderr %q)", code, stderr)
			}
			checkErrorLine(t, stderr, tc.want)
			if _, err := os.Stat(data); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the data directory was created (%v): the address must be checked before anything opens", err)
			}
		})
	}
	for _, setting := range []string{"--http", "--grpc"} {
		t.Run(setting+" in use", func(t *testing.T) {
			taken, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer taken.Close()
			args := []string{"serve", "--data", t.TempDir(), "--http", "127.0.0.1:0", setting, taken.Addr().String()}
			code, _, stderr := runCmd(t, env(nil), args...)
			if code != 1 {
				t.Errorf("exit %d, want 1 (stderr %q)", code, stderr)
			}
			checkErrorLine(t, stderr, "address already in use")
		})
	}
}

// TestHelpListsEverySource: the --worker and --store help of every
// command that takes them names every scheme the worker and store
// registries know, so a new coordinator or backend cannot be missing.
// Commands that only read or define take no --worker; migrate takes it
// for the table of a SQL worker-ID provider.
func TestHelpListsEverySource(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		worker bool
	}{
		{[]string{"serve"}, true}, {[]string{"next"}, true}, {[]string{"serial"}, true},
		{[]string{"keys", "create"}, false}, {[]string{"keys", "list"}, false}, {[]string{"migrate"}, true},
	} {
		code, _, help := runCmd(t, env(nil), append(tc.args, "-h")...)
		if code != 0 {
			t.Fatalf("%v -h: exit %d", tc.args, code)
		}
		if has := strings.Contains(help, "-worker"); has != tc.worker {
			t.Errorf("%v -h: takes --worker: %v, want %v", tc.args, has, tc.worker)
		}
		if tc.worker {
			for _, scheme := range worker.Names() {
				if !strings.Contains(help, scheme+"://") {
					t.Errorf("%v -h: --worker does not name %s://", tc.args, scheme)
				}
			}
			if !strings.Contains(help, "N or static://N") {
				t.Errorf("%v -h: --worker does not name a plain number", tc.args)
			}
		}
		for _, scheme := range store.Names() {
			if !strings.Contains(help, scheme+"://") {
				t.Errorf("%v -h: --store does not name %s://", tc.args, scheme)
			}
		}
	}
}

// sqlStores are the database servers the store-only commands are tried on.
var sqlStores = []struct {
	name  string
	fresh func(testing.TB) string
	// create is what the hint for a missing database must say.
	create string
}{
	{"mariadb", testsvc.MySQL, "-e 'CREATE DATABASE `"},
	{"postgres", testsvc.Postgres, "createdb -h 127.0.0.1 -p 5432 -U postgres '"},
	// A SQLite file outside the data directory: it creates its tables
	// when it opens, and is created itself when missing.
	{"sqlite", func(tb testing.TB) string { return "sqlite://" + filepath.Join(tb.TempDir(), "ids.db") }, ""},
}

// withDatabase returns storeURL naming database name instead.
func withDatabase(t *testing.T, storeURL, name string) string {
	t.Helper()
	u, err := url.Parse(storeURL)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}

// TestStoreCommandsOpenNoNode: migrate, keys create and keys list against
// a database server only talk to it. They create no data directory and
// take no worker ID (nor warn about one); migrate says what it did, and a
// database that does not exist is answered with how to create it.
func TestStoreCommandsOpenNoNode(t *testing.T) {
	for _, db := range sqlStores {
		t.Run(db.name, func(t *testing.T) {
			storeURL := db.fresh(t)
			data := filepath.Join(t.TempDir(), "idforge-data")
			e := env(map[string]string{"IDFORGE_DATA": data, "IDFORGE_STORE": storeURL})

			code, out, stderr := runCmd(t, e, "migrate")
			if code != 0 || !strings.HasPrefix(out, "created leaf_alloc, idforge_keys, idforge_serials") || stderr != "" {
				t.Fatalf("first migrate: %d %q %q; want it to say it created the tables", code, out, stderr)
			}
			code, out, stderr = runCmd(t, e, "migrate")
			if code != 0 || !strings.Contains(out, "already up to date") || stderr != "" {
				t.Fatalf("second migrate: %d %q %q; want it to say nothing changed", code, out, stderr)
			}
			if code, out, stderr = runCmd(t, e, "keys", "create", "order", "--step", "10"); code != 0 || stderr != "" {
				t.Fatalf("keys create: %d %q %q", code, out, stderr)
			}
			code, out, stderr = runCmd(t, e, "keys", "list")
			if code != 0 || !strings.Contains(out, "order") || stderr != "" {
				t.Fatalf("keys list: %d %q %q (want the key, and no warning about worker IDs)", code, out, stderr)
			}
			if _, err := os.Stat(data); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the data directory %s was created (%v): these commands only talk to the store", data, err)
			}
			if code, _, stderr = runCmd(t, e, "keys", "list", "--worker", "3"); code != 2 {
				t.Errorf("keys list --worker: exit %d (%q), want 2: it takes no worker ID", code, stderr)
			}

			if db.create == "" {
				return
			}
			missing := "idforge_t_missing_" + strings.ToLower(filepath.Base(t.TempDir()))
			for _, args := range [][]string{{"migrate"}, {"keys", "list"}} {
				code, _, stderr = runCmd(t, e, append(args, "--store", withDatabase(t, storeURL, missing))...)
				if code != 1 || !strings.Contains(stderr, "the database does not exist: create it with") ||
					!strings.Contains(stderr, db.create+missing) || !strings.Contains(stderr, "then run `idforge migrate`") {
					t.Errorf("%v on a missing database: %d %q; want the command that creates it", args, code, stderr)
				}
			}
		})
	}
}

// TestHTTPErrorsNameIdforgeOnce sends failing requests of every kind to
// the node's whole HTTP surface (idforge's API, Leaf's, Tinyid's and
// Vesta's endpoints, authentication): no answer repeats the prefix
// ("idforge: idforge: …") or names idforge twice (Leaf's decode answer
// carries its message twice, once in Leaf's errorMsg), and a refused key
// name names the character.
func TestHTTPErrorsNameIdforgeOnce(t *testing.T) {
	cfg := defaultConfig()
	cfg.Data = t.TempDir()
	cfg.LogLevel = "error"
	cfg.Auth.Tokens = []auth.Token{{Name: "ops", Token: "admin-token-0123456789", Role: auth.RoleAdmin}}
	ctx := context.Background()
	n, err := openNode(ctx, cfg, newLogger(io.Discard, "error"), cfg.owner(""), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	authn, err := auth.New(auth.FromEnv(cfg.Auth))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(httpHandler(n, newLogger(io.Discard, "error"), authn))
	defer srv.Close()

	const token = "admin-token-0123456789"
	do := func(method, path, body string, withToken bool) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if withToken {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(raw)
	}
	if status, body := do("POST", "/v1/keys", `{"key":"order"}`, true); status != 201 {
		t.Fatalf("create order: %d %s", status, body)
	}
	if status, body := do("POST", "/v1/keys", `{"key":"msg","strategy":"snowflake"}`, true); status != 201 {
		t.Fatalf("create msg: %d %s", status, body)
	}
	han := url.PathEscape("订单")
	for _, tc := range []struct {
		method, path, body string
		noToken            bool
		want               string // the message must say this
	}{
		{"POST", "/v1/keys", `{"key":"订单"}`, false, "character 1 '订' (U+8BA2) is not allowed"},
		{"GET", "/v1/ids/" + han, "", false, "character 1 '订' (U+8BA2) is not allowed"},
		{"GET", "/v1/keys/" + han, "", false, "character 1 '订'"},
		{"GET", "/v1/serials/" + han, "", false, "character 1 '订'"},
		{"GET", "/api/segment/get/" + han, "", false, ""},
		{"GET", "/tinyid/id/nextIdSimple?bizType=" + han, "", false, ""},
		{"GET", "/v1/ids/nosuch", "", false, "unknown key"},
		{"GET", "/v1/ids/order?count=0", "", false, "invalid count"},
		{"GET", "/v1/ids/order?count=x", "", false, "invalid count"},
		{"POST", "/v1/keys", `{"key":"order"}`, false, "already exists"},
		{"POST", "/v1/keys", `{"key":"x","strategy":"nope"}`, false, ""},
		{"POST", "/v1/keys", `{"key":"x","step":-1}`, false, ""},
		{"POST", "/v1/keys", `{`, false, ""},
		{"POST", "/v1/keys", `{"key":"x","bogus":1}`, false, ""},
		{"POST", "/v1/serials", `{"name":"s","template":"@{nosuch}"}`, false, ""},
		{"POST", "/v1/serials", `{"name":"订单","template":"A@{seq:order}"}`, false, "character 1 '订'"},
		{"GET", "/v1/serials/nosuch", "", false, ""},
		{"GET", "/v1/explain/abc", "", false, ""},
		{"GET", "/v1/decode/order/!!", "", false, ""},
		{"GET", "/api/segment/get/msg", "", false, ""},
		{"GET", "/api/segment/get/nosuch", "", false, ""},
		{"GET", "/decodeSnowflakeId?snowflakeId=abc", "", false, ""},
		{"GET", "/makeid?time=-5", "", false, ""},
		{"GET", "/expid?id=abc", "", false, ""},
		{"GET", "/v1/ids/order", "", true, `the header \"Authorization: Bearer`},
	} {
		status, body := do(tc.method, tc.path, tc.body, !tc.noToken)
		if status < 400 && !strings.HasPrefix(tc.path, "/tinyid/") {
			t.Errorf("%s %s: %d %s; want an error", tc.method, tc.path, status, body)
			continue
		}
		if strings.Contains(body, "idforge: idforge:") || strings.Count(body, prefix) > 2 ||
			strings.Count(body, prefix) == 2 && !strings.Contains(body, `"errorMsg"`) {
			t.Errorf("%s %s: %d %s names idforge more than once", tc.method, tc.path, status, body)
		}
		var answer struct {
			Error struct{ Message string } `json:"error"`
		}
		if err := json.Unmarshal([]byte(body), &answer); err == nil {
			if msg := answer.Error.Message; strings.Contains(msg, prefix) && !strings.HasPrefix(msg, prefix) {
				t.Errorf("%s %s: message %q puts context before idforge's own message", tc.method, tc.path, msg)
			}
		}
		if tc.want != "" && !strings.Contains(body, tc.want) {
			t.Errorf("%s %s: %d %s; want it to say %q", tc.method, tc.path, status, body, tc.want)
		}
	}
}

// keys repair says what is missing, refuses a store without a fence, and
// leaves a store that has not failed over alone.
func TestKeysRepairMessages(t *testing.T) {
	for _, db := range sqlStores {
		t.Run(db.name, func(t *testing.T) {
			storeURL := db.fresh(t)
			e := env(map[string]string{"IDFORGE_DATA": filepath.Join(t.TempDir(), "d"), "IDFORGE_STORE": storeURL})
			if code, _, stderr := runCmd(t, e, "keys", "repair"); code != 2 || !strings.Contains(stderr, "--floor N or --from-nodes") {
				t.Fatalf("keys repair without a floor: %d %q; want exit 2 saying what to give", code, stderr)
			}
			if code, out, stderr := runCmd(t, e, "migrate"); code != 0 {
				t.Fatalf("migrate: %d %q %q", code, out, stderr)
			}
			code, out, stderr := runCmd(t, e, "keys", "repair", "--floor", "100", "--wait", "0s")
			if db.name == "sqlite" {
				if code != 2 || !strings.Contains(stderr, "nothing to repair") {
					t.Fatalf("keys repair on SQLite: %d %q %q; want exit 2, nothing to repair", code, out, stderr)
				}
				return
			}
			if code != 0 || !strings.Contains(out, "has not failed over") {
				t.Fatalf("keys repair on the primary: %d %q %q; want it to say nothing failed over", code, out, stderr)
			}
			code, out, stderr = runCmd(t, e, "keys", "repair", "--floor", "100", "--wait", "0s", "--force")
			if code != 0 || !strings.Contains(out, "claims are made on") {
				t.Fatalf("keys repair --force: %d %q %q", code, out, stderr)
			}
		})
	}
}
