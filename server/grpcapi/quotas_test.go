package grpcapi

import (
	"log/slog"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"

	idforgev1 "github.com/idforge/idforge/api/idforge/v1"
	"github.com/idforge/idforge/quota"
	"github.com/idforge/idforge/store/memstore"
)

// TestQuotas checks the quota methods: a server built without quotas
// answers UNIMPLEMENTED (over the fixture's connection), one with them
// defines, reads and retires, and a bad spec is INVALID_ARGUMENT naming
// what is wrong. node's TestQuotasOverGRPC drives them end to end.
func TestQuotas(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	ctx := testCtx(t)
	if _, err := f.client.ListQuotas(ctx, &idforgev1.ListDefinitionsRequest{}); !hasReason(err, codes.Unimplemented, "not_found") {
		t.Fatalf("ListQuotas without quotas: %v; want UNIMPLEMENTED", err)
	}

	m, err := quota.NewManager(ctx, quota.NewLimiter(nil), memstore.New(),
		[]quota.Spec{{Name: "file", Closed: true, Keys: []string{"old"}}}, nil, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	s := New(f.iss, Options{Logger: quiet, Quotas: m})
	d, err := s.CreateQuota(ctx, &idforgev1.DefineRequest{Name: "orders", Spec: `{"keys":["order"],"limit":3,"per":"minute"}`, Description: "d"})
	if err != nil || d.GetKind() != "quota" || d.GetOrigin() != "api" || d.GetSpec() != `{"keys":["order"],"limit":3,"per":"minute"}` || d.GetDescription() != "d" {
		t.Fatalf("CreateQuota = %v, %v", d, err)
	}
	for spec, want := range map[string]string{
		`{"limit":0,"per":"day"}`:            "limit 0 per day",
		`{"limit":-5,"per":"day"}`:           "limit -5",
		`{"limit":5,"per":"week"}`:           `unknown period "week"`,
		`{"limit":5,"per":"day","name":"x"}`: `"name" is not a field of the spec`,
		`{"limit":5,"per":"day","x":1}`:      `"x"`,
	} {
		_, err := s.CreateQuota(ctx, &idforgev1.DefineRequest{Name: "bad", Spec: spec})
		if !hasReason(err, codes.InvalidArgument, "invalid_argument") || !strings.Contains(err.Error(), want) {
			t.Errorf("CreateQuota(%s) = %v; want INVALID_ARGUMENT mentioning %s", spec, err, want)
		}
	}
	if _, err := s.RetireQuota(ctx, &idforgev1.DefinitionName{Name: "file"}); !hasReason(err, codes.InvalidArgument, "invalid_argument") {
		t.Errorf("RetireQuota of the file's: %v; want INVALID_ARGUMENT", err)
	}
	if _, err := s.GetQuota(ctx, &idforgev1.DefinitionName{Name: "nosuch"}); !hasReason(err, codes.NotFound, "unknown_key") {
		t.Errorf("GetQuota of nothing: %v; want NOT_FOUND", err)
	}
	list, err := s.ListQuotas(ctx, &idforgev1.ListDefinitionsRequest{})
	if err != nil || len(list.GetDefinitions()) != 2 || list.GetDefinitions()[0].GetOrigin() != "file" || list.GetDefinitions()[1].GetName() != "orders" {
		t.Fatalf("ListQuotas = %v, %v", list, err)
	}
	if d, err := s.RetireQuota(ctx, &idforgev1.DefinitionName{Name: "orders"}); err != nil || !d.GetRetired() {
		t.Fatalf("RetireQuota = %v, %v", d, err)
	}
}

// A quota's counter URL shows without its password.
func TestQuotaDefinitionRedactsCounter(t *testing.T) {
	d := toQuotaDefinition(quota.Spec{Name: "q", Limit: 1, Per: "day", Counter: "redis://:hunter2@10.0.0.1:6379/0"})
	if strings.Contains(d.GetSpec(), "hunter2") || !strings.Contains(d.GetSpec(), "10.0.0.1") {
		t.Fatalf("spec = %s; want the counter URL without its password", d.GetSpec())
	}
}

// hasReason reports whether err is a status of code with the idforge
// reason.
func hasReason(err error, code codes.Code, reason string) bool {
	c, r := reasonOf(err)
	return c == code && r == reason
}
