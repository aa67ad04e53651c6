package node_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	"github.com/idforge/idforge"
	idforgev1 "github.com/idforge/idforge/api/idforge/v1"
	"github.com/idforge/idforge/client"
	"github.com/idforge/idforge/server/grpcapi"
)

// TestDefinitionsOverGRPC defines, lists, shows and retires a counter
// and a source through gRPC, and issues a serial over the counter.
func TestDefinitionsOverGRPC(t *testing.T) {
	a := openAPINode(t, "sqlite://"+filepath.Join(t.TempDir(), "shared.db"), 1, nil)
	g := grpc.NewServer()
	grpcapi.New(a.n.Issuer(), grpcapi.Options{}).Register(g)
	ln := bufconn.Listen(1 << 20)
	go g.Serve(ln)
	defer g.Stop()
	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return ln.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	c := idforgev1.NewIDForgeClient(conn)
	ctx := context.Background()

	counterURL := "sqlite:" + filepath.Join(t.TempDir(), "counters.db") + "?period=day"
	d, err := c.CreateCounter(ctx, &idforgev1.DefineRequest{Name: "daily", Spec: `{"url":"` + counterURL + `"}`, Description: "per day"})
	if err != nil || d.GetOrigin() != "api" || d.GetKind() != "counter" || d.GetUpdated() == nil {
		t.Fatalf("CreateCounter = %v, %v", d, err)
	}
	a.must(t, 201, "POST", "/v1/serials", `{"name":"waybill","template":"@{date:yyyyMMdd}@{seq:daily,width=5}"}`)
	if v, err := c.NextSerial(ctx, &idforgev1.NextSerialRequest{Name: "waybill"}); err != nil || len(v.GetValues()) != 1 {
		t.Fatalf("NextSerial = %v, %v", v, err)
	}
	if _, err := c.CreateSource(ctx, &idforgev1.DefineRequest{Name: "s", Spec: `{"balance":["redis://127.0.0.1:1/0?key=x"]}`}); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("CreateSource of 1 member: %v; want InvalidArgument", err)
	}
	if _, err := c.CreateCounter(ctx, &idforgev1.DefineRequest{Name: "daily", Spec: `{"url":"` + counterURL + `"}`}); status.Code(err) != codes.AlreadyExists {
		t.Fatalf("CreateCounter of a taken name: %v; want AlreadyExists", err)
	}
	list, err := c.ListCounters(ctx, &idforgev1.ListDefinitionsRequest{})
	if err != nil || len(list.GetDefinitions()) != 1 || list.GetDefinitions()[0].GetName() != "daily" {
		t.Fatalf("ListCounters = %v, %v", list, err)
	}
	if d, err := c.RetireCounter(ctx, &idforgev1.DefinitionName{Name: "daily"}); err != nil || !d.GetRetired() {
		t.Fatalf("RetireCounter = %v, %v", d, err)
	}
	if _, err := c.NextSerial(ctx, &idforgev1.NextSerialRequest{Name: "waybill"}); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("NextSerial over a retired counter: %v; want FailedPrecondition (retired)", err)
	}
	if _, err := c.GetSource(ctx, &idforgev1.DefinitionName{Name: "nosuch"}); status.Code(err) != codes.NotFound {
		t.Fatalf("GetSource of nothing: %v; want NotFound", err)
	}
}

// TestDefinitionsWithGoClient drives /v1/counters with client.Admin.
func TestDefinitionsWithGoClient(t *testing.T) {
	a := openAPINode(t, "sqlite://"+filepath.Join(t.TempDir(), "shared.db"), 1, nil)
	adm, err := client.NewAdmin(a.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer adm.Close()
	ctx := context.Background()
	spec := json.RawMessage(`{"url":"sqlite:` + filepath.Join(t.TempDir(), "c.db") + `?period=day"}`)
	d, err := adm.Define(ctx, client.KindCounter, "daily", spec, "per day")
	if err != nil || d.Name != "daily" || d.Origin != "api" || d.Description != "per day" || d.Updated.IsZero() || !strings.Contains(string(d.Spec), "period=day") {
		t.Fatalf("Define = %+v, %v", d, err)
	}
	if _, err := adm.Define(ctx, client.KindCounter, "daily", spec, ""); !errors.Is(err, idforge.ErrKeyExists) {
		t.Fatalf("Define of a taken name: %v; want ErrKeyExists", err)
	}
	if _, err := adm.Define(ctx, client.KindSource, "s", json.RawMessage(`{"url":"nosuch://x"}`), ""); !errors.Is(err, idforge.ErrInvalidArgument) {
		t.Fatalf("Define of an unknown scheme: %v; want ErrInvalidArgument", err)
	}
	if defs, err := adm.List(ctx, client.KindCounter); err != nil || len(defs) != 1 || defs[0].Name != "daily" {
		t.Fatalf("List = %+v, %v", defs, err)
	}
	if d, err := adm.Retire(ctx, client.KindCounter, "daily"); err != nil || !d.Retired {
		t.Fatalf("Retire = %+v, %v", d, err)
	}
	if d, err := adm.Get(ctx, client.KindCounter, "daily"); err != nil || !d.Retired {
		t.Fatalf("Get = %+v, %v", d, err)
	}
}
