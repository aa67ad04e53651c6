package node_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/testsvc"
	"github.com/idforge/idforge/node"
	_ "github.com/idforge/idforge/sequence/all"
	"github.com/idforge/idforge/server/httpapi"
	"github.com/idforge/idforge/store"
	_ "github.com/idforge/idforge/store/mysql"
	_ "github.com/idforge/idforge/store/sqlite"
)

// apiNode is a node and its HTTP API.
type apiNode struct {
	n   *node.Node
	srv *httptest.Server
}

// openAPINode opens a node on storeURL with its own data directory and
// worker ID, serving its HTTP API.
func openAPINode(t *testing.T, storeURL string, worker int, edit func(*node.Settings)) *apiNode {
	t.Helper()
	s := node.Settings{DataDir: t.TempDir(), Store: storeURL, Worker: fmt.Sprint(worker),
		Logger: slog.New(slog.DiscardHandler), RecheckDefinitions: 100 * time.Millisecond}
	if edit != nil {
		edit(&s)
	}
	n, err := node.Open(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(httpapi.New(n.Issuer(), httpapi.Options{}))
	t.Cleanup(func() { srv.Close(); n.Close() })
	return &apiNode{n: n, srv: srv}
}

// do sends a request and returns the status and the body.
func (a *apiNode) do(t *testing.T, method, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, a.srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := a.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}

// must sends a request that must answer want.
func (a *apiNode) must(t *testing.T, want int, method, path, body string) string {
	t.Helper()
	status, got := a.do(t, method, path, body)
	if status != want {
		t.Fatalf("%s %s %s: %d %s; want %d", method, path, body, status, got, want)
	}
	return got
}

// values issues from path and returns the values of the answer's field.
func (a *apiNode) values(t *testing.T, path, field string) []string {
	t.Helper()
	var out map[string]json.RawMessage
	if err := json.Unmarshal([]byte(a.must(t, 200, "GET", path, "")), &out); err != nil {
		t.Fatal(err)
	}
	var vals []string
	if err := json.Unmarshal(out[field], &vals); err != nil {
		t.Fatal(err)
	}
	return vals
}

// redisKeyURL is a Redis source URL on a key of the test's prefix.
func redisKeyURL(t *testing.T, key string) string {
	u, err := url.Parse(testsvc.Redis(t))
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("key", q.Get("prefix")+":"+key)
	q.Del("prefix")
	u.RawQuery = q.Encode()
	return u.String()
}

// migrated returns storeURL once its tables exist.
func migrated(t *testing.T, storeURL string) string {
	st, err := store.Open(context.Background(), storeURL, store.Options{ForMigrate: true, DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.(idforge.Migrator).Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return storeURL
}

// TestDefinitionsAcrossNodes defines sources and counters over HTTP on
// node A and issues from them on node B, which shares the store (a SQLite
// file, MariaDB) and never restarts: no value repeats between the nodes.
// A retirement on A stops both.
func TestDefinitionsAcrossNodes(t *testing.T) {
	for name, storeURL := range map[string]func(t *testing.T) string{
		"sqlite":  func(t *testing.T) string { return "sqlite://" + filepath.Join(t.TempDir(), "shared.db") },
		"mariadb": func(t *testing.T) string { testsvc.Slow(t); return migrated(t, testsvc.MySQL(t)) },
	} {
		t.Run(name, func(t *testing.T) {
			u := storeURL(t)
			a := openAPINode(t, u, 1, nil)
			b := openAPINode(t, u, 2, nil)

			sources := map[string]string{
				"redis-src":    fmt.Sprintf(`{"url":%q}`, redisKeyURL(t, "src")),
				"balanced-src": fmt.Sprintf(`{"balance":[%q,%q],"expand":2}`, redisKeyURL(t, "b0"), redisKeyURL(t, "b1")),
				"sqlrow-src":   fmt.Sprintf(`{"url":%q}`, "sqlrow+"+testsvc.MySQL(t)+"?name=orders"),
				"pg-src":       fmt.Sprintf(`{"url":%q}`, "sqlrow+"+strings.Replace(testsvc.Postgres(t), "?", "?name=orders&", 1)),
				// Date-packed numbers over one Redis counter both nodes share.
				"packed-src": fmt.Sprintf(`{"date_packed":%q,"bits":14}`, testsvc.Redis(t)+"&period=second&tz=Asia/Shanghai"),
			}
			for name, spec := range sources {
				a.must(t, 201, "POST", "/v1/sources", `{"name":"`+name+`","description":"d",`+spec[1:])
			}
			a.must(t, 201, "POST", "/v1/counters", fmt.Sprintf(`{"name":"daily","url":%q}`, testsvc.Redis(t)+"&period=day"))
			if node := b.must(t, 200, "GET", "/v1/node", ""); !strings.Contains(node, `"counters":["daily"]`) {
				t.Errorf("B's /v1/node does not list the counter defined on A: %s", node)
			}
			// B has never seen the counter: its template resolves it.
			b.must(t, 201, "POST", "/v1/serials", `{"name":"waybill","template":"@{date:yyyyMMdd}@{seq:daily,width=5}"}`)

			for name := range sources {
				issueOnBoth(t, a, b, name)
			}
			t.Run("memcache", func(t *testing.T) {
				addr, prefix := testsvc.Memcached(t)
				a.must(t, 201, "POST", "/v1/sources", fmt.Sprintf(`{"name":"memcache-src","url":"memcache://%s?create=true&key=%ssrc"}`, addr, prefix))
				issueOnBoth(t, a, b, "memcache-src")
				a.must(t, 200, "DELETE", "/v1/sources/memcache-src", "")
			})
			seen := map[string]bool{}
			for range 3 {
				for _, n := range []*apiNode{a, b} {
					for _, v := range n.values(t, "/v1/serials/waybill?count=10", "values") {
						if seen[v] {
							t.Fatalf("serial %s issued twice", v)
						}
						seen[v] = true
					}
				}
			}

			// Both list them, marked as the API's; the password-free URL
			// round-trips.
			var list struct {
				Sources []struct {
					Name, Origin string
					Retired      bool
				}
			}
			if err := json.Unmarshal([]byte(b.must(t, 200, "GET", "/v1/sources", "")), &list); err != nil {
				t.Fatal(err)
			}
			if len(list.Sources) < len(sources) || list.Sources[0].Origin != "api" || list.Sources[0].Name != "balanced-src" {
				t.Fatalf("B lists %+v", list.Sources)
			}

			// Retired on A: A stops at once, B within its re-check.
			a.must(t, 200, "DELETE", "/v1/sources/redis-src", "")
			a.must(t, 409, "GET", "/v1/ids/redis-src", "")
			deadline := time.Now().Add(5 * time.Second)
			for {
				status, body := b.do(t, "GET", "/v1/ids/redis-src", "")
				if status == 409 && strings.Contains(body, `"retired"`) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("B still issues from a retired source: %d %s", status, body)
				}
				time.Sleep(20 * time.Millisecond)
			}
			// Its name stays taken.
			a.must(t, 409, "POST", "/v1/sources", `{"name":"redis-src","url":"redis://127.0.0.1:6379/0?key=x"}`)
			a.must(t, 409, "POST", "/v1/counters", `{"name":"redis-src","url":"redis://127.0.0.1:6379/0"}`)
		})
	}
}

// issueOnBoth issues from a source on both nodes in turn: no value twice.
func issueOnBoth(t *testing.T, a, b *apiNode, name string) {
	t.Helper()
	seen := map[string]string{}
	for round := range 4 {
		for i, n := range []*apiNode{a, b} {
			for _, v := range n.values(t, "/v1/ids/"+name+"?count=25", "ids") {
				if who, dup := seen[v]; dup {
					t.Fatalf("%s: %s issued by %s and node %d (round %d)", name, v, who, i, round)
				}
				seen[v] = fmt.Sprint("node ", i)
			}
		}
	}
}

// TestDefinitionsRefused: every bad definition is a specific 400 (409
// for a taken name) and leaves the lists as they were.
func TestDefinitionsRefused(t *testing.T) {
	redisURL := redisKeyURL(t, "ok")
	a := openAPINode(t, "sqlite://"+filepath.Join(t.TempDir(), "shared.db"), 1, func(s *node.Settings) {
		s.Sources = []node.Source{{Name: "filesrc", URL: redisKeyURL(t, "file")}}
		s.Counters = []node.Counter{{Name: "filectr", URL: testsvc.Redis(t) + "&period=day"}}
	})
	a.must(t, 201, "POST", "/v1/keys", `{"key":"order"}`)
	before := a.must(t, 200, "GET", "/v1/sources", "") + a.must(t, 200, "GET", "/v1/counters", "")
	for _, tc := range []struct {
		path, body string
		status     int
		says       string
	}{
		{"/v1/sources", `{"name":"s","url":"nosuch://x"}`, 400, "unknown scheme"},
		{"/v1/sources", `{"name":"s","date_packed":"redis://127.0.0.1:6379/0?period=second","bits":14}`, 400, "tz="},
		{"/v1/sources", `{"name":"s","date_packed":"redis://127.0.0.1:6379/0?period=second&tz=UTC&cap=20000","bits":14}`, 400, "cap 20000"},
		{"/v1/sources", `{"name":"s","url":"redis://127.0.0.1:1/0?key=x"}`, 400, "connection refused"},
		{"/v1/sources", `{"name":"s","url":"memcache://127.0.0.1:1?key=x"}`, 400, "127.0.0.1:1"},
		{"/v1/sources", `{"name":"s","url":"sqlrow+mysql://root@127.0.0.1:1/db?name=x"}`, 400, "127.0.0.1:1"},
		{"/v1/sources", `{"name":"s","url":"sqlrow+postgres://postgres@127.0.0.1:1/db?name=x"}`, 400, "127.0.0.1"},
		{"/v1/sources", `{"name":"s","balance":["` + redisURL + `"]}`, 400, "balance has 1 member"},
		{"/v1/sources", `{"name":"s","balance":["a","b","c"]}`, 400, "balance has 3 members; want a power of two"},
		{"/v1/sources", `{"name":"s","url":"` + redisURL + `","expand":33}`, 400, "expand 33 out of 0..32"},
		{"/v1/sources", `{"name":"s","url":"` + redisURL + `","balance":["a","b"]}`, 400, "give either url or balance"},
		{"/v1/sources", `{"name":"s"}`, 400, "give either url or balance"},
		{"/v1/sources", `{"name":"s","url":"` + redisURL + `","rescue_after":"5m"}`, 400, "tune balance"},
		{"/v1/sources", `{"name":"s","url":"` + redisURL + `","colour":"red"}`, 400, "unknown field"},
		{"/v1/sources", `{"name":"s","url":"` + redisURL + `","slow_window":"soon"}`, 400, "slow_window"},
		{"/v1/sources", `{"name":"a b","url":"` + redisURL + `"}`, 400, "names use"},
		{"/v1/sources", `{"url":"` + redisURL + `"}`, 400, "name is required"},
		{"/v1/sources", `{"name":"filesrc","url":"` + redisURL + `"}`, 409, "configuration file"},
		{"/v1/sources", `{"name":"filectr","url":"` + redisURL + `"}`, 409, "configuration file"},
		{"/v1/sources", `{"name":"order","url":"` + redisURL + `"}`, 409, "is a key"},
		{"/v1/counters", `{"name":"c","url":"nosuch://x?period=day"}`, 400, "unknown scheme"},
		{"/v1/counters", `{"name":"c","url":"redis://127.0.0.1:1/0?period=day"}`, 400, "127.0.0.1:1"},
		{"/v1/counters", `{"name":"c","url":"` + testsvc.Redis(t) + `&period=fortnight"}`, 400, "fortnight"},
		{"/v1/counters", `{"name":"c"}`, 400, "no url"},
		{"/v1/counters", `{"name":"filesrc","url":"` + testsvc.Redis(t) + `&period=day"}`, 409, "configuration file"},
	} {
		status, body := a.do(t, "POST", tc.path, tc.body)
		if status != tc.status || !strings.Contains(body, tc.says) {
			t.Errorf("POST %s %s: %d %s; want %d saying %q", tc.path, tc.body, status, body, tc.status, tc.says)
		}
	}
	if after := a.must(t, 200, "GET", "/v1/sources", "") + a.must(t, 200, "GET", "/v1/counters", ""); after != before {
		t.Errorf("refused definitions changed the lists:\n%s\n%s", before, after)
	}
	// The file's definitions are listed as such, and cannot be retired.
	if !strings.Contains(before, `"name":"filesrc","origin":"file"`) || !strings.Contains(before, `"name":"filectr","origin":"file"`) {
		t.Errorf("lists = %s; want the file's definitions marked origin file", before)
	}
	a.must(t, 400, "DELETE", "/v1/sources/filesrc", "")
	a.must(t, 404, "DELETE", "/v1/sources/nosuch", "")
	a.must(t, 404, "GET", "/v1/counters/nosuch", "")
	a.must(t, 405, "PUT", "/v1/sources/filesrc", "")
}

// A counter defined through the API counts per unit per day under a
// serial's by=, and its members stop with it when it is retired.
func TestDefinedCounterPerUnit(t *testing.T) {
	a := openAPINode(t, "sqlite://"+filepath.Join(t.TempDir(), "shared.db"), 1, nil)
	a.must(t, 201, "POST", "/v1/counters", fmt.Sprintf(`{"name":"daily","url":"sqlite://%s?period=day"}`, filepath.Join(t.TempDir(), "c.db")))
	a.must(t, 201, "POST", "/v1/serials", `{"name":"jobs","template":"@{date:yyyyMMdd}-@{param:unit,width=4,chars=digits}-@{seq:daily,by=unit,width=5}"}`)
	for unit, want := range map[string]string{"6541": "-6541-00002", "6542": "-6542-00002"} {
		got := a.values(t, "/v1/serials/jobs?count=2&param.unit="+unit, "values")
		if len(got) != 2 || !strings.HasSuffix(got[1], want) {
			t.Fatalf("unit %s: %v; want the second to end in %s", unit, got, want)
		}
	}
	a.must(t, 200, "DELETE", "/v1/counters/daily", "")
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if status, body := a.do(t, "GET", "/v1/serials/jobs?param.unit=6541", ""); status == 409 && strings.Contains(body, "retired") {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("a member of a retired counter still answers: %d %s", status, body)
		}
	}
}

// A counter's relative SQLite file is the data directory's, whether the
// counter comes from the configuration or the API, wherever the node was
// started (issue 24, item 8).
func TestRelativeCounterFileInDataDir(t *testing.T) {
	work, data := t.TempDir(), t.TempDir()
	t.Chdir(work)
	ctx := context.Background()
	n, err := node.Open(ctx, node.Settings{DataDir: data, Logger: slog.New(slog.DiscardHandler),
		Counters: []node.Counter{{Name: "daily", URL: "sqlite:daily.db?period=day"}},
		Serials:  []idforge.Serial{{Name: "d", Template: "@{date:yyyyMMdd}@{seq:daily,width=5}"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if err := n.Issuer().Define(ctx, idforge.Definition{Kind: node.KindCounter, Name: "monthly", Spec: `{"url":"sqlite:monthly.db?period=month"}`}); err != nil {
		t.Fatal(err)
	}
	if _, err := n.Issuer().NextSerial(ctx, "d", 1, nil); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"daily.db", "monthly.db"} {
		if _, err := os.Stat(filepath.Join(data, f)); err != nil {
			t.Errorf("%s is not in the data directory: %v", f, err)
		}
		if _, err := os.Stat(filepath.Join(work, f)); err == nil {
			t.Errorf("%s is in the working directory", f)
		}
	}
}
