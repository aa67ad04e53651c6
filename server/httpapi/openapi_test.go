package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/api"
	"github.com/idforge/idforge/internal/httpmux"
	"github.com/idforge/idforge/issuer"
	"github.com/idforge/idforge/server/compat"
	"github.com/idforge/idforge/store/memstore"
)

// oaDoc is the part of the OpenAPI document the structural test reads.
type oaDoc struct {
	Paths      map[string]map[string]oaOperation `json:"paths"`
	Components struct {
		Parameters map[string]oaParam         `json:"parameters"`
		Responses  map[string]json.RawMessage `json:"responses"`
		Schemas    map[string]json.RawMessage `json:"schemas"`
	} `json:"components"`
}

type oaOperation struct {
	Parameters []oaParam             `json:"parameters"`
	Responses  map[string]oaResponse `json:"responses"`
}

type oaParam struct {
	Ref      string `json:"$ref"`
	Name     string `json:"name"`
	In       string `json:"in"`
	Required bool   `json:"required"`
	Prefix   string `json:"x-idforge-prefix"`
	Schema   struct {
		Type      any    `json:"type"`
		Minimum   *int64 `json:"minimum"`
		Maximum   *int64 `json:"maximum"`
		MaxLength *int   `json:"maxLength"`
	} `json:"schema"`
}

type oaResponse struct {
	Ref         string `json:"$ref"`
	Description string `json:"description"`
}

func readDoc(t *testing.T) oaDoc {
	t.Helper()
	var d oaDoc
	if err := json.Unmarshal(api.OpenAPI(), &d); err != nil {
		t.Fatalf("api/openapi.json: %v", err)
	}
	return d
}

// param resolves a parameter's $ref.
func (d oaDoc) param(t *testing.T, p oaParam) oaParam {
	t.Helper()
	if p.Ref == "" {
		return p
	}
	name, ok := strings.CutPrefix(p.Ref, "#/components/parameters/")
	q, found := d.Components.Parameters[name]
	if !ok || !found {
		t.Fatalf("parameter reference %q resolves to nothing", p.Ref)
	}
	return q
}

// servedPatterns are the patterns of every HTTP handler cmd/idforge
// mounts (server/httpapi with metrics, server/compat) plus the admin
// page, which server/ui serves at /ui for GET and HEAD.
func servedPatterns(t *testing.T) []string {
	iss := issuer.New(memstore.New(), nil, issuer.Settings{Logger: quiet})
	t.Cleanup(func() { iss.Close() })
	var out []string
	for _, h := range []http.Handler{
		New(iss, Options{Logger: quiet, Metrics: http.NotFoundHandler()}),
		compat.New(iss, compat.Options{Logger: quiet}),
	} {
		out = append(out, h.(*httpmux.Mux).Patterns()...)
	}
	return append(out, "GET /ui")
}

// TestOpenAPIDescribesEveryRoute walks the routes the servers register
// and the query parameters of v1Routes, and fails when the document
// misses one, lists one that is not served, or describes an error answer
// other than by the vocabulary's responses.
func TestOpenAPIDescribesEveryRoute(t *testing.T) {
	d := readDoc(t)
	patterns := servedPatterns(t)
	withMethods := map[string][]string{} // path -> methods of "M path" patterns
	anyMethod := map[string]bool{}       // paths of method-less patterns
	for _, p := range patterns {
		if m, path, ok := strings.Cut(p, " "); ok {
			withMethods[path] = append(withMethods[path], strings.ToLower(m))
		} else if !strings.HasSuffix(p, "/") { // a prefix catches bad paths: no endpoint
			anyMethod[p] = true
		}
	}
	for path, methods := range withMethods {
		ops, ok := d.Paths[path]
		if !ok {
			t.Errorf("%s is served but missing from api/openapi.json", path)
			continue
		}
		for _, m := range methods {
			if _, ok := ops[m]; !ok {
				t.Errorf("%s %s is served but missing from api/openapi.json", strings.ToUpper(m), path)
			}
		}
		for m, op := range ops {
			if !slices.Contains(methods, m) {
				t.Errorf("api/openapi.json describes %s %s, which is not served", strings.ToUpper(m), path)
			}
			// Any other method is answered 405 by the method-less
			// pattern of the same path.
			if anyMethod[path] {
				if _, ok := op.Responses["405"]; !ok {
					t.Errorf("%s %s: the document misses the 405 answered to other methods", strings.ToUpper(m), path)
				}
			}
		}
	}
	for path := range anyMethod {
		if _, ok := withMethods[path]; ok {
			continue
		}
		if _, ok := d.Paths[path]["get"]; !ok {
			t.Errorf("%s (any method) is served but GET %s is missing from api/openapi.json", path, path)
		}
	}
	for path := range d.Paths {
		if _, ok := withMethods[path]; !ok && !anyMethod[path] {
			t.Errorf("api/openapi.json describes %s, which is not served", path)
		}
	}

	// The /v1 query parameters, exactly: the handler refuses any other.
	for _, rt := range v1Routes {
		for _, m := range strings.Split(rt.methods, ",") {
			op := d.Paths[rt.pattern][strings.ToLower(m)]
			var got []string
			for _, p := range op.Parameters {
				p = d.param(t, p)
				switch {
				case p.In != "query":
				case p.Prefix != "":
					got = append(got, p.Prefix)
				default:
					got = append(got, p.Name)
				}
			}
			want := slices.Clone(rt.params)
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("%s %s: the document lists the query parameters %q, the handler takes %q", m, rt.pattern, got, want)
			}
		}
	}

	// The limits written in the document are the code's.
	count := d.Components.Parameters["count"].Schema
	if count.Minimum == nil || *count.Minimum != 1 || count.Maximum == nil || *count.Maximum != idforge.MaxCount {
		t.Errorf("parameter count: want integer 1..%d, document says %s..%s", idforge.MaxCount, show(count.Minimum), show(count.Maximum))
	}
	if key := d.Components.Parameters["key"].Schema; key.MaxLength == nil || *key.MaxLength != idforge.MaxKeyLen {
		t.Errorf("parameter key: want maxLength %d, document says %s", idforge.MaxKeyLen, show(key.MaxLength))
	}

	// Every error answer is one of the vocabulary's responses (or says
	// which one it extends), and every status of the vocabulary is
	// described somewhere.
	statuses := map[int]bool{}
	for _, c := range idforge.Codes() {
		statuses[c.HTTPStatus()] = true
	}
	used := map[int]bool{}
	for path, ops := range d.Paths {
		for m, op := range ops {
			for s, resp := range op.Responses {
				status, err := strconv.Atoi(s)
				if err != nil {
					t.Errorf("%s %s: response %q is not a status", m, path, s)
					continue
				}
				if status < 400 || (path == "/readyz" && status == 503) {
					continue
				}
				name := fmt.Sprintf("Error%d", status)
				if !statuses[status] {
					t.Errorf("%s %s: %d is no status of the error vocabulary", m, path, status)
				} else if resp.Ref != "#/components/responses/"+name && !strings.Contains(resp.Description, name) {
					t.Errorf("%s %s: the %d answer refers to neither %s nor its description", m, path, status, name)
				}
				used[status] = true
			}
			if strings.HasPrefix(path, "/v1/") {
				for _, s := range []string{"400", "401", "403", "405", "429", "500", "503"} {
					if _, ok := op.Responses[s]; !ok {
						t.Errorf("%s %s: the document misses the %s every /v1 call can answer", m, path, s)
					}
				}
			}
		}
	}
	for s := range statuses {
		if _, ok := d.Components.Responses[fmt.Sprintf("Error%d", s)]; !ok {
			t.Errorf("the document has no response Error%d: run go generate ./api", s)
		}
		if !used[s] && s != http.StatusInternalServerError {
			t.Errorf("no endpoint of the document answers %d", s)
		}
	}
	var code struct {
		Enum []idforge.Code `json:"enum"`
	}
	if err := json.Unmarshal(d.Components.Schemas["ErrorCode"], &code); err != nil || !slices.Equal(code.Enum, idforge.Codes()) {
		t.Errorf("schema ErrorCode lists %v, the vocabulary %v (%v): run go generate ./api", code.Enum, idforge.Codes(), err)
	}
}

// TestOpenAPIServed checks GET /openapi.json answers the document.
func TestOpenAPIServed(t *testing.T) {
	f := newFixture(t)
	status, body, hdr := f.do(t, "GET", "/openapi.json", "")
	if status != 200 || hdr.Get("Content-Type") != "application/json" || body != string(api.OpenAPI()) {
		t.Fatalf("GET /openapi.json: %d %s, %d bytes", status, hdr.Get("Content-Type"), len(body))
	}
	var v struct {
		OpenAPI string `json:"openapi"`
	}
	if err := json.Unmarshal([]byte(body), &v); err != nil || v.OpenAPI != "3.1.0" {
		t.Fatalf("document: openapi %q, %v", v.OpenAPI, err)
	}
	if status, _, hdr := f.do(t, "POST", "/openapi.json", ""); status != 405 || hdr.Get("Allow") != "GET" {
		t.Fatalf("POST /openapi.json: %d, Allow %q", status, hdr.Get("Allow"))
	}
}

// show prints a limit of the document, "none" when it is absent.
func show[T int | int64](v *T) string {
	if v == nil {
		return "none"
	}
	return fmt.Sprint(*v)
}
