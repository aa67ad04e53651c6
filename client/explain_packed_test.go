package client

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/issuer"
	idnode "github.com/idforge/idforge/node"
	"github.com/idforge/idforge/server/grpcapi"
	"github.com/idforge/idforge/server/httpapi"

	_ "github.com/idforge/idforge/sequence/sqlrow" // the sqlite: counters
	_ "github.com/idforge/idforge/store/sqlite"    // the node's default store
)

// Date-packed numbers decode the same on every surface (issue 27 item 1,
// a loose end of issues 24 and 29): the Go client embedded, over HTTP
// (GET /v1/explain/{id}?source=) and over gRPC (Explain with source) give
// what issuer.ExplainPacked gives, for a source of the configuration and
// one defined through the API, and refuse the same way what is not one.
func TestExplainPackedOnEverySurface(t *testing.T) {
	ctx := testCtx(t)
	dir := t.TempDir()
	packed := func(file string) string {
		return "sqlite:" + filepath.Join(dir, file) + "?period=second&tz=Asia/Shanghai"
	}
	n, err := idnode.Open(ctx, idnode.Settings{DataDir: dir, Logger: quiet,
		Sources: []idnode.Source{{Name: "orders", DatePacked: packed("file.db"), Bits: 14}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	iss := n.Issuer()
	if err := iss.Define(ctx, idforge.Definition{Kind: issuer.KindSource, Name: "waybills",
		Spec: fmt.Sprintf(`{"date_packed":%q,"bits":10}`, packed("api.db"))}); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(httpapi.New(iss, httpapi.Options{Logger: quiet}))
	t.Cleanup(hs.Close)
	gs := grpc.NewServer()
	grpcapi.New(iss, grpcapi.Options{Logger: quiet}).Register(gs)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go gs.Serve(ln)
	t.Cleanup(gs.Stop)
	clients := map[string]Client{"embedded": NewEmbedded(iss)}
	if clients["http"], err = NewHTTP([]string{hs.URL}); err != nil {
		t.Fatal(err)
	}
	if clients["grpc"], err = NewGRPC([]string{ln.Addr().String()}); err != nil {
		t.Fatal(err)
	}
	for _, c := range clients {
		t.Cleanup(func() { c.Close() })
	}

	for source, bits := range map[string]int{"orders": 14, "waybills": 10} {
		ids, err := iss.NextN(ctx, source, 3)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			want, err := iss.ExplainPacked(ctx, source, id)
			if err != nil || want.Source != source || want.Period != "second" || want.Zone != "Asia/Shanghai" || want.Count < 1 {
				t.Fatalf("issuer: ExplainPacked(%s, %d) = %+v, %v", source, id, want, err)
			}
			for name, c := range clients {
				got, err := c.ExplainPacked(ctx, source, id)
				if err != nil || !got.Time.Equal(want.Time) || got.Time.Location().String() != want.Zone {
					t.Errorf("%s: ExplainPacked(%s, %d) = %+v, %v; want %+v", name, source, id, got, err, want)
				}
				got.Time = want.Time
				if got != want {
					t.Errorf("%s: ExplainPacked(%s, %d) = %+v; want %+v", name, source, id, got, want)
				}
			}
		}
		// Its count bits zero: no number of the source.
		for name, c := range clients {
			if _, err := c.ExplainPacked(ctx, source, ids[0]&^(1<<bits-1)); !errors.Is(err, idforge.ErrInvalidArgument) || !strings.Contains(err.Error(), "count is 0") {
				t.Errorf("%s: a count of 0: %v; want invalid_argument saying so", name, err)
			}
		}
	}
	for name, c := range clients {
		if _, err := c.ExplainPacked(ctx, "nosuch", 1); !errors.Is(err, idforge.ErrUnknownKey) {
			t.Errorf("%s: an unknown source: %v; want unknown_key", name, err)
		}
		if _, err := c.ExplainPacked(ctx, "orders", -1); !errors.Is(err, idforge.ErrInvalidArgument) {
			t.Errorf("%s: a negative number: %v; want invalid_argument", name, err)
		}
	}
	// HTTP reads source= once; without it, explain is the snowflake's.
	for q, want := range map[string]string{
		"?source=orders&source=waybills": "source given 2 times",
		"?source=":                       "name",
		"?sauce=orders":                  "sauce",
	} {
		resp, err := http.Get(hs.URL + "/v1/explain/1" + q)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode/100 != 4 || !strings.Contains(string(body), want) {
			t.Errorf("GET /v1/explain/1%s: %d %s; want a 4xx saying %q", q, resp.StatusCode, body, want)
		}
	}
}
