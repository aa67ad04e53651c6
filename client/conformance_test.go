package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/e2e"
)

// The client conformance suite (clients/conformance, described in
// docs/clients.md, "Conformance") is data that the Go, Java and Python
// clients' tests all run against nodes of the binary built from this
// checkout; this is the Go client's run of it, over HTTP and over gRPC.

const conformanceDir = "../clients/conformance"

func TestMain(m *testing.M) { os.Exit(e2e.Main(m)) }

type confFile struct {
	About string `json:"about"`
	Nodes int    `json:"nodes"`
	Setup []struct {
		Method string          `json:"method"`
		Path   string          `json:"path"`
		Token  string          `json:"token"`
		Body   json.RawMessage `json:"body"`
	} `json:"setup"`
	Cases []confCase `json:"cases"`
}

type confCase struct {
	Name    string            `json:"name"`
	Op      string            `json:"op"`
	Key     string            `json:"key"`
	Count   *int              `json:"count"`
	Params  map[string]string `json:"params"`
	ID      string            `json:"id"`
	Repeat  int               `json:"repeat"`
	Threads int               `json:"threads"`
	IDs     int               `json:"ids"`
	Kill    *int              `json:"kill"`
	Client  struct {
		Nodes []any   `json:"nodes"` // node indexes, or "down"
		Token *string `json:"token"`
		Cache int     `json:"cache"`
	} `json:"client"`
	Expect struct {
		Count      *int           `json:"count"`
		First      string         `json:"first"`
		Last       string         `json:"last"`
		Increasing bool           `json:"increasing"`
		Match      string         `json:"match"`
		Explain    map[string]any `json:"explain"`
		Error      idforge.Code   `json:"error"`
		Retryable  *bool          `json:"retryable"`
	} `json:"expect"`
}

// confToken is the token a case's client sends unless it names another.
const confToken = "conformance-issue"

func TestConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary: not with -short")
	}
	files, err := filepath.Glob(filepath.Join(conformanceDir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no conformance files in %s: %v", conformanceDir, err)
	}
	config, err := filepath.Abs(filepath.Join(conformanceDir, "server.toml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range files {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var f confFile
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&f); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for _, transport := range []string{"http", "grpc"} {
			t.Run(filepath.Base(path)+"/"+transport, func(t *testing.T) {
				runConformance(t, f, config, transport)
			})
		}
	}
}

// confNodes are the nodes of one conformance file's run.
type confNodes struct {
	procs []*e2e.Node
	http  []string // the nodes' HTTP addresses
	grpc  []string // the nodes' gRPC addresses
	down  string   // an address where nothing listens
}

func startConfNodes(t *testing.T, n int, config string) *confNodes {
	store := "sqlite://" + filepath.Join(t.TempDir(), "ids.db")
	cn := &confNodes{down: e2e.FreePort(t)}
	for i := range n {
		grpcAddr := e2e.FreePort(t)
		p := e2e.StartNode(t, "--config", config, "--store", store, "--worker", strconv.Itoa(i+1), "--grpc", grpcAddr)
		cn.procs = append(cn.procs, p)
		cn.http = append(cn.http, "http://"+p.Addr)
		cn.grpc = append(cn.grpc, grpcAddr)
	}
	return cn
}

func runConformance(t *testing.T, f confFile, config, transport string) {
	nodes := startConfNodes(t, f.Nodes, config)
	ctx := testCtx(t)
	for _, s := range f.Setup {
		req, err := http.NewRequestWithContext(ctx, s.Method, nodes.http[0]+s.Path, bytes.NewReader(s.Body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+s.Token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("setup %s %s: %v", s.Method, s.Path, err)
		}
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			t.Fatalf("setup %s %s: %s", s.Method, s.Path, resp.Status)
		}
	}
	seen := map[string]map[string]string{} // key → value → case that got it
	for _, c := range f.Cases {
		ok := t.Run(c.Name, func(t *testing.T) {
			cl := confClient(t, c, nodes, transport)
			defer cl.Close()
			vals, err := confCall(t, cl, c, nodes)
			checkConfCase(t, c, vals, err)
			if c.Op == "explain" {
				return
			}
			if seen[c.Key] == nil {
				seen[c.Key] = map[string]string{}
			}
			for _, v := range vals {
				if other, dup := seen[c.Key][v]; dup {
					t.Fatalf("%s %q was handed out twice: also in case %q", c.Key, v, other)
				}
				seen[c.Key][v] = c.Name
			}
		})
		if !ok {
			return // later cases build on earlier ones
		}
	}
}

func confClient(t *testing.T, c confCase, nodes *confNodes, transport string) Client {
	token := confToken
	if c.Client.Token != nil {
		token = *c.Client.Token
	}
	opts := []Option{WithToken(token)}
	if c.Client.Cache > 0 {
		opts = append(opts, WithRangeCache(c.Client.Cache, 0))
	}
	own := nodes.http
	if transport == "grpc" {
		own = nodes.grpc
	}
	addrs := slices.Clone(own)
	if c.Client.Nodes != nil {
		addrs = nil
		for _, n := range c.Client.Nodes {
			switch n := n.(type) {
			case string: // "down"
				addrs = append(addrs, nodes.down)
			case float64:
				addrs = append(addrs, own[int(n)])
			}
		}
	}
	newClient := NewHTTP
	if transport == "grpc" {
		newClient = NewGRPC
	}
	cl, err := newClient(addrs, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// confCall runs the case's calls and returns every value they returned,
// as decimal or serial strings, and the error of the last call.
func confCall(t *testing.T, cl Client, c confCase, nodes *confNodes) ([]string, error) {
	// Generous: a load case takes 20,000 IDs from -race nodes on a busy machine.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if c.Op == "load" {
		return confLoad(ctx, cl, c, nodes)
	}
	var vals []string
	for range max(c.Repeat, 1) {
		got, err := confOnce(ctx, cl, c)
		if err != nil {
			return vals, err
		}
		vals = append(vals, got...)
	}
	return vals, nil
}

func confOnce(ctx context.Context, cl Client, c confCase) ([]string, error) {
	count := 1
	if c.Count != nil {
		count = *c.Count
	}
	switch c.Op {
	case "next_id":
		id, err := cl.Next(ctx, c.Key)
		return []string{strconv.FormatInt(id, 10)}, err
	case "next_ids":
		ids, err := cl.NextN(ctx, c.Key, count)
		return decimals(ids), err
	case "next_serial":
		return cl.NextSerial(ctx, c.Key, count, c.Params)
	case "explain":
		id, err := strconv.ParseInt(c.ID, 10, 64)
		if err != nil {
			return nil, err
		}
		e, err := cl.Explain(ctx, id)
		if err != nil {
			return nil, err
		}
		fields, _ := json.Marshal(map[string]any{"time": e.Time.UTC().Format("2006-01-02T15:04:05.000Z"),
			"unix_ms": e.Time.UnixMilli(), "datacenter": e.Datacenter, "worker": e.Worker, "sequence": e.Sequence})
		return []string{string(fields)}, nil
	}
	return nil, fmt.Errorf("unknown op %q", c.Op)
}

// confLoad takes c.IDs IDs on c.Threads goroutines with Next, killing
// node c.Kill (when set) once a quarter of them were taken.
func confLoad(ctx context.Context, cl Client, c confCase, nodes *confNodes) ([]string, error) {
	var (
		claimed, taken atomic.Int64
		killOnce       sync.Once
		mu             sync.Mutex
		all            []string
		errs           = make(chan error, c.Threads)
		wg             sync.WaitGroup
	)
	for range c.Threads {
		wg.Go(func() {
			var mine []string
			for claimed.Add(1) <= int64(c.IDs) {
				id, err := cl.Next(ctx, c.Key)
				if err != nil {
					errs <- err
					break
				}
				mine = append(mine, strconv.FormatInt(id, 10))
				if taken.Add(1) >= int64(c.IDs/4) && c.Kill != nil {
					killOnce.Do(nodes.procs[*c.Kill].Kill)
				}
			}
			mu.Lock()
			all = append(all, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	close(errs)
	return all, <-errs
}

func decimals(ids []int64) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = strconv.FormatInt(id, 10)
	}
	return out
}

func checkConfCase(t *testing.T, c confCase, vals []string, err error) {
	t.Helper()
	x := c.Expect
	switch {
	case x.Error == "" && err != nil:
		t.Fatalf("unexpected error after %d values: %v", len(vals), err)
	case x.Error != "" && err == nil:
		t.Fatalf("no error, want %s (got %d values)", x.Error, len(vals))
	case err != nil:
		if code := idforge.ErrorCode(err); code != x.Error {
			t.Fatalf("error code %s, want %s: %v", code, x.Error, err)
		}
		if x.Retryable != nil && idforge.IsRetryable(err) != *x.Retryable {
			t.Fatalf("retryable %v, want %v: %v", !*x.Retryable, *x.Retryable, err)
		}
	}
	if x.Count != nil && len(vals) != *x.Count {
		t.Fatalf("%d values, want %d", len(vals), *x.Count)
	}
	if x.First != "" && (len(vals) == 0 || vals[0] != x.First) {
		t.Fatalf("first value %v, want %s", vals[:min(1, len(vals))], x.First)
	}
	if x.Last != "" && (len(vals) == 0 || vals[len(vals)-1] != x.Last) {
		t.Fatalf("last value %v, want %s", vals[max(0, len(vals)-1):], x.Last)
	}
	for i := 1; x.Increasing && i < len(vals); i++ {
		a, _ := strconv.ParseInt(vals[i-1], 10, 64)
		b, _ := strconv.ParseInt(vals[i], 10, 64)
		if b <= a {
			t.Fatalf("value %d (%d) does not follow %d", i, b, a)
		}
	}
	if x.Match != "" {
		re := regexp.MustCompile(x.Match)
		for _, v := range vals {
			if !re.MatchString(v) {
				t.Fatalf("%q does not match %s", v, x.Match)
			}
		}
	}
	if x.Explain != nil {
		want, _ := json.Marshal(x.Explain)
		if len(vals) != 1 || !jsonEqual(vals[0], string(want)) {
			t.Fatalf("explained %v, want %s", vals, want)
		}
	}
}

func jsonEqual(a, b string) bool {
	var x, y any
	return json.Unmarshal([]byte(a), &x) == nil && json.Unmarshal([]byte(b), &y) == nil && fmt.Sprint(x) == fmt.Sprint(y)
}
