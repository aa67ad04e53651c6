package main_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/idforge/idforge"
	idforgev1 "github.com/idforge/idforge/api/idforge/v1"
	"github.com/idforge/idforge/client"
	"github.com/idforge/idforge/internal/e2e"
	"github.com/idforge/idforge/internal/grpcwire"
)

// One truth on every surface (issue 24): every kind of definition, made
// once in the configuration file and once through the API, is read back
// through every surface of the real binary, and each says the same
// facts: that it exists, its kind, its health, whether it is retired.
// Then everything that can be retired is, and every surface agrees at
// once on the retiring node, which issues nothing more from that moment;
// another node sharing the store stops within its refresh. surfaceCells
// is a table of kind × surface: a kind or surface added without a cell
// (a check, or the reason the surface says nothing of the kind) fails.

// The kinds of definition and the surfaces that show them.
var (
	surfaceKinds = []string{"segment key", "snowflake key", "uuidv7 key", "ulid key", "uuidv4 key", "source", "balanced source", "counter", "serial", "quota"}
	surfaceNames = []string{"http", "grpc", "client", "cli", "page", "readyz", "metrics", "doctor"}
)

// A definition of the test, and what it should be now.
type surfaceDef struct {
	kind, name, origin string
	strategy           string // keys
	draws              string // serials: the key its template draws from
	// issue is an HTTP path that issues from it: live answers liveStatus,
	// retired retiredStatus (a quota refuses while live, nothing once
	// retired).
	issue                     string
	liveStatus, retiredStatus int
	// retire is the DELETE path that retires it: "" when it cannot be
	// retired itself (a serial, whose key is), refused (400) for the
	// file's sources, counters and quotas.
	retire  string
	retired bool
}

// A cell checks what one surface says of one definition, or says why the
// surface shows nothing of the kind.
type surfaceCell struct {
	check func(w *surfaceWorld, d *surfaceDef) error
	none  string
}

func TestOneTruthOnEverySurface(t *testing.T) {
	endToEnd(t, parallel)
	for _, kind := range surfaceKinds {
		for _, s := range surfaceNames {
			c, ok := surfaceCells[kind][s]
			if !ok || (c.check == nil) == (c.none == "") {
				t.Fatalf("surfaceCells has no check (nor a reason for none) of %s on %s", kind, s)
			}
		}
	}
	for kind := range surfaceCells {
		if !slices.Contains(surfaceKinds, kind) {
			t.Fatalf("surfaceCells covers %s, which is no kind of surfaceKinds", kind)
		}
	}
	// Every strategy a key can have (the API's enum) is a kind.
	for v := range idforgev1.Strategy_name {
		if s, ok := grpcwire.FromStrategy(idforgev1.Strategy(v)); ok && s != idforge.StrategySource && !slices.Contains(surfaceKinds, string(s)+" key") {
			t.Fatalf("keys of strategy %s are no kind of surfaceKinds", s)
		}
	}

	dir := t.TempDir()
	store := "sqlite://" + filepath.ToSlash(filepath.Join(dir, "shared.db"))
	config := filepath.Join(dir, "idforge.toml")
	if err := os.WriteFile(config, []byte(surfaceConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	grpcAddr := e2e.FreePort(t)
	a := e2e.StartNode(t, "--config", config, "--store", store, "--worker", "1", "--grpc", grpcAddr)
	b := e2e.StartNode(t, "--config", config, "--store", store, "--worker", "2")
	ctx := context.Background()
	for _, body := range []struct{ path, body string }{
		{"/v1/keys", `{"key":"a-seg"}`},
		{"/v1/keys", `{"key":"a-snow","strategy":"snowflake"}`},
		{"/v1/keys", `{"key":"a-u7","strategy":"uuidv7"}`},
		{"/v1/keys", `{"key":"a-ul","strategy":"ulid"}`},
		{"/v1/keys", `{"key":"a-u4","strategy":"uuidv4"}`},
		{"/v1/keys", `{"key":"qa-1"}`},
		{"/v1/sources", `{"name":"a-src","url":"sqlrow+sqlite:a-src.db?name=a"}`},
		{"/v1/sources", `{"name":"a-bal","balance":["sqlrow+sqlite:a-bal1.db?name=a","sqlrow+sqlite:a-bal2.db?name=a"]}`},
		{"/v1/counters", `{"name":"a-ctr","url":"sqlite:a-ctr.db?period=day"}`},
		{"/v1/serials", `{"name":"a-ser","template":"A@{seq:a-snow}"}`},
		{"/v1/serials", `{"name":"a-ctrser","template":"@{date:yyyyMMdd}@{seq:a-ctr,width=5}"}`},
		{"/v1/quotas", `{"name":"a-quota","keys":["qa-*"],"closed":true}`},
	} {
		if status, resp, err := e2e.Do(ctx, "POST", a.URL(body.path), body.body); err != nil || status != 201 {
			t.Fatalf("POST %s %s: %d %s %v", body.path, body.body, status, resp, err)
		}
	}
	defs := surfaceDefs()

	conn, err := grpc.NewClient(grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ids, err := client.NewHTTP([]string{a.Addr})
	if err != nil {
		t.Fatal(err)
	}
	defer ids.Close()
	admin, err := client.NewAdmin(a.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	quotas, err := client.NewQuotas(a.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer quotas.Close()
	newWorld := func() *surfaceWorld {
		return &surfaceWorld{t: t, ctx: ctx, node: a, grpc: idforgev1.NewIDForgeClient(conn), ids: ids, admin: admin, quotas: quotas,
			config: config, store: store, data: t.TempDir(), cache: map[string]any{}}
	}
	// Both nodes issue from everything (a segment key that has issued is
	// in readiness and metrics; the other node takes the definitions
	// made here within its refresh), and all surfaces agree.
	answers(t, a, defs)
	answers(t, b, defs)
	agree(t, newWorld, defs, "defined")

	// Retire everything that can be; from the answer on, the retiring
	// node issues nothing more of it.
	for _, d := range defs {
		if d.retire == "" {
			continue
		}
		status, body, err := e2e.Do(ctx, "DELETE", a.URL(d.retire), "")
		switch {
		case err != nil:
			t.Fatal(err)
		case d.origin == "file" && !strings.HasSuffix(d.kind, "key"):
			if status != 400 || !strings.Contains(body, "configuration file") {
				t.Errorf("DELETE %s (from the file): %d %s, want 400 saying to remove it there", d.retire, status, body)
			}
			continue
		case status != 200:
			t.Fatalf("DELETE %s: %d %s", d.retire, status, body)
		}
		d.retired = true
		for _, s := range defs {
			if s.kind == "serial" && s.draws == d.name {
				s.retired = true
			}
		}
	}
	for _, d := range defs {
		want := d.liveStatus
		if d.retired {
			want = d.retiredStatus
		}
		if status, body, err := e2e.Get(ctx, a.URL(d.issue)); err != nil || status != want {
			t.Errorf("%s %s on the retiring node: GET %s: %d %s %v, want %d", d.kind, d.name, d.issue, status, body, err, want)
		}
	}
	agree(t, newWorld, defs, "retired")
	// The other node within its refresh (refresh_keys, the definitions'
	// re-check).
	answers(t, b, defs)
}

// answers waits until every definition's issuing path on n answers as the
// definition now should: generous, for a loaded machine and a node that
// learns of a change at its next refresh.
func answers(t *testing.T, n *e2e.Node, defs []*surfaceDef) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for _, d := range defs {
		want := d.liveStatus
		if d.retired {
			want = d.retiredStatus
		}
		for {
			status, body, err := e2e.Get(context.Background(), n.URL(d.issue))
			if err == nil && status == want {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s %s on %s: GET %s: %d %s %v, want %d", d.kind, d.name, n.Data, d.issue, status, body, err, want)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

// agree checks every cell for every definition until all agree, and
// fails with what still disagrees. The surfaces of the node that made
// the change agree at once; the wait is for a loaded machine.
func agree(t *testing.T, newWorld func() *surfaceWorld, defs []*surfaceDef, phase string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		w := newWorld()
		var wrong []string
		for _, d := range defs {
			for _, s := range surfaceNames {
				if c := surfaceCells[d.kind][s]; c.check != nil {
					if err := c.check(w, d); err != nil {
						wrong = append(wrong, fmt.Sprintf("%s %s %q (%s): %v", s, d.kind, d.name, d.origin, err))
					}
				}
			}
		}
		if len(wrong) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the surfaces disagree:\n%s", phase, strings.Join(wrong, "\n"))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

const surfaceConfig = `
refresh_keys = "1s"

[[keys]]
name = "f-seg"
[[keys]]
name = "f-snow"
strategy = "snowflake"
[[keys]]
name = "f-u7"
strategy = "uuidv7"
[[keys]]
name = "f-ul"
strategy = "ulid"
[[keys]]
name = "f-u4"
strategy = "uuidv4"
[[keys]]
name = "qf-1"

[[sources]]
name = "f-src"
url = "sqlrow+sqlite:f-src.db?name=f"
[[sources]]
name = "f-bal"
balance = ["sqlrow+sqlite:f-bal1.db?name=f", "sqlrow+sqlite:f-bal2.db?name=f"]

[[counters]]
name = "f-ctr"
url = "sqlite:f-ctr.db?period=day"

[[serials]]
name = "f-ser"
template = "F@{seq:f-snow}"
[[serials]]
name = "f-ctrser"
template = "@{date:yyyyMMdd}@{seq:f-ctr,width=5}"

[[quotas]]
name = "f-quota"
keys = ["qf-*"]
closed = true
`

// surfaceDefs are the definitions of surfaceConfig and of the API calls
// of the test, each kind from both.
func surfaceDefs() []*surfaceDef {
	var defs []*surfaceDef
	for _, o := range []struct{ origin, p string }{{"file", "f"}, {"api", "a"}} {
		p := o.p
		for _, k := range []struct{ strategy, suffix string }{{"segment", "seg"}, {"snowflake", "snow"}, {"uuidv7", "u7"}, {"ulid", "ul"}, {"uuidv4", "u4"}} {
			name := p + "-" + k.suffix
			defs = append(defs, &surfaceDef{kind: k.strategy + " key", name: name, origin: o.origin, strategy: k.strategy,
				issue: "/v1/ids/" + name, liveStatus: 200, retiredStatus: 409, retire: "/v1/keys/" + name})
		}
		for _, s := range []struct{ kind, name string }{{"source", p + "-src"}, {"balanced source", p + "-bal"}} {
			defs = append(defs, &surfaceDef{kind: s.kind, name: s.name, origin: o.origin, strategy: "source",
				issue: "/v1/ids/" + s.name, liveStatus: 200, retiredStatus: 409, retire: "/v1/sources/" + s.name})
		}
		defs = append(defs,
			&surfaceDef{kind: "counter", name: p + "-ctr", origin: o.origin,
				issue: "/v1/serials/" + p + "-ctrser", liveStatus: 200, retiredStatus: 409, retire: "/v1/counters/" + p + "-ctr"},
			&surfaceDef{kind: "serial", name: p + "-ser", origin: o.origin, draws: p + "-snow",
				issue: "/v1/serials/" + p + "-ser", liveStatus: 200, retiredStatus: 409},
			&surfaceDef{kind: "quota", name: p + "-quota", origin: o.origin,
				issue: "/v1/ids/q" + p + "-1", liveStatus: 403, retiredStatus: 200, retire: "/v1/quotas/" + p + "-quota"})
	}
	return defs
}

// surfaceWorld reads the surfaces of the node, each once per round.
type surfaceWorld struct {
	t      *testing.T
	ctx    context.Context
	node   *e2e.Node
	grpc   idforgev1.IDForgeClient
	ids    client.Client
	admin  *client.Admin
	quotas *client.Quotas
	config string
	store  string
	data   string // the data directory of the commands
	cache  map[string]any
}

// once returns what read returns, read once per round under name.
func once[T any](w *surfaceWorld, name string, read func() (T, error)) (T, error) {
	if v, ok := w.cache[name]; ok {
		if err, bad := v.(error); bad {
			var zero T
			return zero, err
		}
		return v.(T), nil
	}
	v, err := read()
	if err != nil {
		w.cache[name] = err
		return v, err
	}
	w.cache[name] = v
	return v, nil
}

// json fetches a JSON answer of the node.
func (w *surfaceWorld) json(path string) (map[string]any, error) {
	return once(w, "GET "+path, func() (map[string]any, error) {
		status, body, err := e2e.Get(w.ctx, w.node.URL(path))
		if err != nil {
			return nil, err
		}
		if status != 200 && !(path == "/readyz?verbose=1" && status == 503) {
			return nil, fmt.Errorf("GET %s: %d %s", path, status, body)
		}
		var out map[string]any
		return out, json.Unmarshal([]byte(body), &out)
	})
}

// text fetches a text answer of the node.
func (w *surfaceWorld) text(path string) (string, error) {
	return once(w, "GET "+path, func() (string, error) {
		status, body, err := e2e.Get(w.ctx, w.node.URL(path))
		if err == nil && status != 200 {
			err = fmt.Errorf("GET %s: %d", path, status)
		}
		return body, err
	})
}

// cli runs the binary and returns its standard output; stderr joins an
// error.
func (w *surfaceWorld) cli(args ...string) (string, error) {
	return once(w, "cli "+strings.Join(args, " "), func() (string, error) {
		cmd := exec.Command(e2e.Binary(w.t), args...)
		cmd.Env = append(os.Environ(), "IDFORGE_CONFIG=")
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return string(out), fmt.Errorf("idforge %s: %v: %s", strings.Join(args, " "), err, stderr.String())
		}
		return string(out), nil
	})
}

// row finds the line of a CLI table whose first field is name and
// returns its fields by the header's names.
func row(table, name string) (map[string]string, error) {
	lines := strings.Split(strings.TrimSpace(table), "\n")
	header := strings.Fields(lines[0])
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		if len(f) > 0 && f[0] == name {
			out := map[string]string{}
			for i, h := range header {
				if i < len(f) {
					out[h] = f[i]
				}
			}
			return out, nil
		}
	}
	return nil, fmt.Errorf("no row %s in\n%s", name, table)
}

// entry finds the object of a JSON list (at field list of answer) whose
// field by is name.
func entry(answer map[string]any, list, by, name string) (map[string]any, error) {
	items, _ := answer[list].([]any)
	for _, it := range items {
		if m, ok := it.(map[string]any); ok && m[by] == name {
			return m, nil
		}
	}
	return nil, fmt.Errorf("no %s %q in %s", by, name, list)
}

// contains reports whether a JSON list of strings holds s.
func contains(v any, s string) bool {
	l, _ := v.([]any)
	return slices.Contains(l, any(s))
}

// flag is a JSON boolean, false when absent.
func flag(m map[string]any, field string) bool {
	b, _ := m[field].(bool)
	return b
}

// want compares what a surface says with what it should.
func want[T comparable](what string, got, want T) error {
	if got != want {
		return fmt.Errorf("%s is %v, want %v", what, got, want)
	}
	return nil
}

// health is what a surface should say of a source's health: "up" while
// it lives (one that reports its health), nothing once retired.
func health(d *surfaceDef) string {
	if d.kind == "balanced source" && !d.retired {
		return "up"
	}
	return ""
}

// viaKeys checks a key or source as an answer of GET /v1/keys lists it.
func viaKeys(answer map[string]any, d *surfaceDef) error {
	k, err := entry(answer, "keys", "key", d.name)
	if err != nil {
		return err
	}
	h, _ := k["health"].(string)
	return errors.Join(want("strategy", k["strategy"], any(d.strategy)), want("retired", flag(k, "retired"), d.retired), want("health", h, health(d)))
}

// viaDefinition checks a source, counter or quota as a /v1 list shows it.
func viaDefinition(answer map[string]any, list string, d *surfaceDef) error {
	m, err := entry(answer, list, "name", d.name)
	if err != nil {
		return err
	}
	errs := []error{want("origin", m["origin"], any(d.origin)), want("retired", flag(m, "retired"), d.retired)}
	if list == "sources" {
		st, _ := m["status"].(map[string]any)
		h, _ := st["health"].(string)
		errs = append(errs, want("status.health", h, health(d)))
	}
	return errors.Join(errs...)
}

// issued checks an issuing call: it works while the definition lives and
// answers ErrRetired once it is retired.
func issued(err error, d *surfaceDef) error {
	switch {
	case d.retired && !errors.Is(err, idforge.ErrRetired):
		return fmt.Errorf("issued (%v) after retiring", err)
	case !d.retired && err != nil:
		return fmt.Errorf("did not issue: %v", err)
	}
	return nil
}

// page returns the API answers the admin page embeds.
func (w *surfaceWorld) page() (map[string]any, error) {
	return once(w, "page", func() (map[string]any, error) {
		body, err := w.text("/ui")
		if err != nil {
			return nil, err
		}
		m := regexp.MustCompile(`(?s)<script type="application/json" id="initial">(.*?)</script>`).FindStringSubmatch(body)
		if m == nil {
			return nil, fmt.Errorf("the page embeds no answers")
		}
		var in struct {
			Answers map[string]struct {
				Body any `json:"body"`
			} `json:"answers"`
		}
		if err := json.Unmarshal([]byte(m[1]), &in); err != nil {
			return nil, err
		}
		out := map[string]any{}
		for path, a := range in.Answers {
			out[path] = a.Body
		}
		return out, nil
	})
}

// pageAnswer is the embedded answer to path.
func (w *surfaceWorld) pageAnswer(path string) (map[string]any, error) {
	p, err := w.page()
	if err != nil {
		return nil, err
	}
	a, _ := p[path].(map[string]any)
	if a == nil {
		return nil, fmt.Errorf("the page embeds no answer of %s", path)
	}
	return a, nil
}

// grpcList reads a gRPC list of definitions.
func (w *surfaceWorld) grpcList(kind string) (map[string]*idforgev1.Definition, error) {
	return once(w, "grpc "+kind, func() (map[string]*idforgev1.Definition, error) {
		list := map[string]func(context.Context, *idforgev1.ListDefinitionsRequest, ...grpc.CallOption) (*idforgev1.ListDefinitionsResponse, error){
			"source": w.grpc.ListSources, "counter": w.grpc.ListCounters, "quota": w.grpc.ListQuotas}[kind]
		resp, err := list(w.ctx, &idforgev1.ListDefinitionsRequest{})
		if err != nil {
			return nil, err
		}
		out := map[string]*idforgev1.Definition{}
		for _, d := range resp.GetDefinitions() {
			out[d.GetName()] = d
		}
		return out, nil
	})
}

// grpcDefinition checks a source, counter or quota as gRPC lists it.
func grpcDefinition(kind string) func(w *surfaceWorld, d *surfaceDef) error {
	return func(w *surfaceWorld, d *surfaceDef) error {
		defs, err := w.grpcList(kind)
		if err != nil {
			return err
		}
		g, ok := defs[d.name]
		if !ok {
			return fmt.Errorf("not listed")
		}
		return errors.Join(want("kind", g.GetKind(), kind), want("origin", g.GetOrigin(), d.origin), want("retired", g.GetRetired(), d.retired))
	}
}

// cliDefinition checks a source or counter as `idforge sources|counters
// list` shows it, reading the store and the configuration as a node.
func cliDefinition(plural string) func(w *surfaceWorld, d *surfaceDef) error {
	return func(w *surfaceWorld, d *surfaceDef) error {
		out, err := w.cli(plural, "list", "--config", w.config, "--store", w.store, "--data", w.data)
		if err != nil {
			return err
		}
		r, err := row(out, d.name)
		if err != nil {
			return err
		}
		return errors.Join(want("ORIGIN", r["ORIGIN"], d.origin), want("STATE", r["STATE"], state(d)))
	}
}

func state(d *surfaceDef) string {
	if d.retired {
		return "retired"
	}
	return "live"
}

// Cells for every kind of key.
func keyCells(strategy string) map[string]surfaceCell {
	cells := map[string]surfaceCell{
		"http": {check: func(w *surfaceWorld, d *surfaceDef) error {
			keys, err := w.json("/v1/keys")
			if err != nil {
				return err
			}
			return viaKeys(keys, d)
		}},
		"grpc": {check: func(w *surfaceWorld, d *surfaceDef) error {
			resp, err := once(w, "grpc keys", func() (*idforgev1.ListKeysResponse, error) {
				return w.grpc.ListKeys(w.ctx, &idforgev1.ListKeysRequest{})
			})
			if err != nil {
				return err
			}
			for _, k := range resp.GetKeys() {
				if k.GetKey() == d.name {
					s, _ := grpcwire.FromStrategy(k.GetStrategy())
					return errors.Join(want("strategy", string(s), d.strategy), want("retired", k.GetRetired(), d.retired))
				}
			}
			return fmt.Errorf("not listed")
		}},
		"client": {check: func(w *surfaceWorld, d *surfaceDef) error {
			_, err := w.ids.NextStrings(w.ctx, d.name, 1)
			return issued(err, d)
		}},
		"cli": {check: func(w *surfaceWorld, d *surfaceDef) error {
			out, err := w.cli("keys", "list", "--config", w.config, "--store", w.store, "--data", w.data)
			if err != nil {
				return err
			}
			r, err := row(out, d.name)
			if err != nil {
				return err
			}
			return errors.Join(want("STRATEGY", r["STRATEGY"], d.strategy), want("STATUS", r["STATUS"], state(d)))
		}},
		"page": {check: func(w *surfaceWorld, d *surfaceDef) error {
			keys, err := w.pageAnswer("v1/keys")
			if err != nil {
				return err
			}
			return viaKeys(keys, d)
		}},
		"readyz":  {none: "readiness weighs the buffers of segment keys and the health of sources"},
		"metrics": {none: "keys of this strategy have no series of their own (the rate plugin counts any key)"},
		"doctor":  {none: "doctor checks the steps of segment keys"},
	}
	if strategy != "segment" {
		return cells
	}
	cells["readyz"] = surfaceCell{check: func(w *surfaceWorld, d *surfaceDef) error {
		r, err := w.json("/readyz?verbose=1")
		if err != nil {
			return err
		}
		keys, _ := r["keys"].(map[string]any)
		_, listed := keys[d.name]
		return want("listed among the keys issuing from buffers", listed, !d.retired)
	}}
	cells["metrics"] = surfaceCell{check: func(w *surfaceWorld, d *surfaceDef) error {
		m, err := w.text("/metrics")
		if err != nil {
			return err
		}
		return want("exported", strings.Contains(m, `idforge_segment_buffered_ids{key="`+d.name+`"}`), !d.retired)
	}}
	cells["doctor"] = surfaceCell{check: func(w *surfaceWorld, d *surfaceDef) error {
		// doctor exits 1 when a check fails (this test's data directory
		// is new): its findings are what counts.
		out, _ := once(w, "doctor", func() (string, error) {
			out, _ := w.cli("doctor", "--json", "--node", w.node.Addr, "--config", w.config, "--store", w.store, "--data", w.data)
			return out, nil
		})
		var doc struct {
			Findings []struct{ Check, Message string } `json:"findings"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			return fmt.Errorf("doctor --json: %v: %q", err, out)
		}
		for _, f := range doc.Findings {
			if f.Check == "step "+d.name {
				return want("said retired", strings.Contains(f.Message, "retired"), d.retired)
			}
		}
		return fmt.Errorf("no finding of its step")
	}}
	return cells
}

// surfaceCells: what each surface says of each kind.
var surfaceCells = map[string]map[string]surfaceCell{
	"segment key":     keyCells("segment"),
	"snowflake key":   keyCells("snowflake"),
	"uuidv7 key":      keyCells("uuidv7"),
	"ulid key":        keyCells("ulid"),
	"uuidv4 key":      keyCells("uuidv4"),
	"source":          sourceCells(false),
	"balanced source": sourceCells(true),
	"counter": {
		"http": {check: func(w *surfaceWorld, d *surfaceDef) error {
			counters, err := w.json("/v1/counters")
			if err != nil {
				return err
			}
			n, err := w.json("/v1/node")
			if err != nil {
				return err
			}
			return errors.Join(viaDefinition(counters, "counters", d), want("live in /v1/node", contains(n["counters"], d.name), !d.retired))
		}},
		"grpc": {check: grpcDefinition("counter")},
		"client": {check: func(w *surfaceWorld, d *surfaceDef) error {
			return viaClient(w, client.KindCounter, d)
		}},
		"cli": {check: cliDefinition("counters")},
		"page": {check: func(w *surfaceWorld, d *surfaceDef) error {
			n, err := w.pageAnswer("v1/node")
			if err != nil {
				return err
			}
			return want("live", contains(n["counters"], d.name), !d.retired)
		}},
		"readyz":  {none: "a counter reports no health"},
		"metrics": {none: "a counter has no series of its own"},
		"doctor":  {none: "doctor does not check counters"},
	},
	"serial": {
		"http": {check: func(w *surfaceWorld, d *surfaceDef) error {
			serials, err := w.json("/v1/serials")
			if err != nil {
				return err
			}
			return viaSerials(serials, d)
		}},
		"grpc": {check: func(w *surfaceWorld, d *surfaceDef) error {
			// gRPC lists no serials: what it says is whether one issues.
			_, err := w.grpc.NextSerial(w.ctx, &idforgev1.NextSerialRequest{Name: d.name})
			if d.retired != (err != nil) || (err != nil && !strings.Contains(err.Error(), "retired")) {
				return fmt.Errorf("NextSerial: %v", err)
			}
			return nil
		}},
		"client": {check: func(w *surfaceWorld, d *surfaceDef) error {
			_, err := w.ids.NextSerial(w.ctx, d.name, 1, nil)
			return issued(err, d)
		}},
		"cli": {check: func(w *surfaceWorld, d *surfaceDef) error {
			// The CLI lists no serials; `idforge serial` issues one from
			// a node of its own on the same store.
			_, err := w.cli("serial", d.name, "--config", w.config, "--store", w.store, "--data", w.data, "--worker", "9")
			if d.retired != (err != nil) || (err != nil && !strings.Contains(err.Error(), "retired")) {
				return fmt.Errorf("idforge serial: %v", err)
			}
			return nil
		}},
		"page": {check: func(w *surfaceWorld, d *surfaceDef) error {
			serials, err := w.pageAnswer("v1/serials")
			if err != nil {
				return err
			}
			return viaSerials(serials, d)
		}},
		"readyz":  {none: "a serial reports no health"},
		"metrics": {none: "a serial has no series of its own"},
		"doctor":  {none: "doctor does not check serials"},
	},
	"quota": {
		"http": {check: func(w *surfaceWorld, d *surfaceDef) error {
			q, err := w.json("/v1/quotas")
			if err != nil {
				return err
			}
			return viaDefinition(q, "quotas", d)
		}},
		"grpc": {check: grpcDefinition("quota")},
		"client": {check: func(w *surfaceWorld, d *surfaceDef) error {
			list, err := once(w, "client quotas", func() ([]client.Quota, error) { return w.quotas.List(w.ctx) })
			if err != nil {
				return err
			}
			for _, q := range list {
				if q.Name == d.name {
					return errors.Join(want("origin", q.Origin, d.origin), want("retired", q.Retired, d.retired))
				}
			}
			return fmt.Errorf("not listed")
		}},
		"cli": {check: func(w *surfaceWorld, d *surfaceDef) error {
			out, err := w.cli("quotas", "list", "--node", w.node.Addr)
			if err != nil {
				return err
			}
			// NAME KEYS TOKENS RULE… ORIGIN STATE: the rule may be
			// several words, the last two columns are one each.
			for _, l := range strings.Split(out, "\n") {
				if f := strings.Fields(l); len(f) > 2 && f[0] == d.name {
					return errors.Join(want("ORIGIN", f[len(f)-2], d.origin), want("STATE", f[len(f)-1], state(d)))
				}
			}
			return fmt.Errorf("no row in\n%s", out)
		}},
		"page":    {none: "the admin page shows no quotas"},
		"readyz":  {none: "a quota reports no health"},
		"metrics": {none: "a quota has no series of its own"},
		"doctor":  {none: "doctor does not check quotas"},
	},
}

// sourceCells: what each surface says of a source; balanced ones report
// their health.
func sourceCells(balanced bool) map[string]surfaceCell {
	cells := map[string]surfaceCell{
		"http": {check: func(w *surfaceWorld, d *surfaceDef) error {
			keys, err := w.json("/v1/keys")
			if err != nil {
				return err
			}
			sources, err := w.json("/v1/sources")
			if err != nil {
				return err
			}
			h, err := w.json("/v1/health/sources")
			if err != nil {
				return err
			}
			_, inHealth := entry(h, "sources", "name", d.name)
			return errors.Join(viaKeys(keys, d), viaDefinition(sources, "sources", d), want("in /v1/health/sources", inHealth == nil, health(d) != ""))
		}},
		"grpc": {check: grpcDefinition("source")},
		"client": {check: func(w *surfaceWorld, d *surfaceDef) error {
			return viaClient(w, client.KindSource, d)
		}},
		"cli": {check: cliDefinition("sources")},
		"page": {check: func(w *surfaceWorld, d *surfaceDef) error {
			keys, err := w.pageAnswer("v1/keys")
			if err != nil {
				return err
			}
			n, err := w.pageAnswer("v1/node")
			if err != nil {
				return err
			}
			_, inNode := entry(n, "sources", "name", d.name)
			return errors.Join(viaKeys(keys, d), want("in the node's sources", inNode == nil, health(d) != ""))
		}},
		"readyz":  {none: "a plain source reports no health"},
		"metrics": {none: "a plain source reports no health"},
		"doctor":  {none: "doctor does not check sources"},
	}
	if !balanced {
		return cells
	}
	cells["readyz"] = surfaceCell{check: func(w *surfaceWorld, d *surfaceDef) error {
		r, err := w.json("/readyz?verbose=1")
		if err != nil {
			return err
		}
		sources, _ := r["sources"].(map[string]any)
		_, listed := sources[d.name]
		// Readiness names the sources that are not up: this one is up
		// while it lives, and gone once retired.
		return errors.Join(want("listed as unhealthy", listed, false), want("status", r["status"], any("ready")))
	}}
	cells["metrics"] = surfaceCell{check: func(w *surfaceWorld, d *surfaceDef) error {
		m, err := w.text("/metrics")
		if err != nil {
			return err
		}
		up := strings.Contains(m, `idforge_source_health{source="`+d.name+`"} 0`)
		exported := strings.Contains(m, `idforge_source_health{source="`+d.name+`"}`)
		return errors.Join(want("exported up", up, !d.retired), want("exported", exported, !d.retired))
	}}
	return cells
}

// viaClient checks a source or counter as the Go client's Admin lists it.
func viaClient(w *surfaceWorld, kind string, d *surfaceDef) error {
	list, err := once(w, "client "+kind, func() ([]client.Definition, error) { return w.admin.List(w.ctx, kind) })
	if err != nil {
		return err
	}
	for _, def := range list {
		if def.Name == d.name {
			return errors.Join(want("origin", def.Origin, d.origin), want("retired", def.Retired, d.retired))
		}
	}
	return fmt.Errorf("not listed")
}

// viaSerials checks a serial as GET /v1/serials lists it: it names the
// retired key it draws from.
func viaSerials(answer map[string]any, d *surfaceDef) error {
	s, err := entry(answer, "serials", "name", d.name)
	if err != nil {
		return err
	}
	return want("retired_sources names "+d.draws, contains(s["retired_sources"], d.draws), d.retired)
}
