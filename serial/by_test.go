package serial

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/idforge/idforge"
)

// recorder creates a generator per name on first use and records the
// names it was asked to create.
type recorder struct {
	mu      sync.Mutex
	created []string
	gens    map[string]*gen
}

func (r *recorder) Resolve(context.Context, string) (Source, error) {
	return Source{}, idforge.ErrUnknownKey
}

func (r *recorder) Create(_ context.Context, name string) (Source, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.gens == nil {
		r.gens = map[string]*gen{}
	}
	g, ok := r.gens[name]
	if !ok {
		g = newGen(1)
		r.gens[name] = g
		r.created = append(r.created, name)
	}
	return Source{Generator: g}, nil
}

// JD's 010-6541-00001: each counting unit counts on its own, in a
// counter chosen by the unit parameter and created on first use; a value
// outside the parameter's limits creates nothing.
func TestSeqByParam(t *testing.T) {
	ctx := context.Background()
	r := &recorder{}
	tp := mustParse(t, "@{param:area,chars=digits,max=4}-@{param:unit,width=4,chars=digits}-@{seq:jobs,by=unit,width=5}", Options{Resolver: r})
	for _, tc := range []struct{ unit, want string }{
		{"6541", "010-6541-00001"}, {"6541", "010-6541-00002"}, {"6542", "010-6542-00001"}, {"6541", "010-6541-00003"},
	} {
		if got := mustNext(t, tp, map[string]string{"area": "010", "unit": tc.unit}); got != tc.want {
			t.Errorf("unit %s: %s, want %s", tc.unit, got, tc.want)
		}
	}
	got, err := tp.NextN(ctx, 3, map[string]string{"area": "010", "unit": "6543"})
	if err != nil || len(got) != 3 || got[2] != "010-6543-00003" {
		t.Fatalf("NextN: %v, %v", got, err)
	}
	for _, bad := range []string{"65x1", "654", "65410", "../x"} {
		_, err := tp.Next(ctx, map[string]string{"area": "010", "unit": bad})
		wantErr(t, err, idforge.ErrInvalidArgument, `parameter "unit"`)
	}
	if want := []string{"jobs-6541", "jobs-6542", "jobs-6543"}; len(r.created) != len(want) || r.created[0] != want[0] || r.created[2] != want[2] {
		t.Fatalf("created %v, want %v", r.created, want)
	}
	if x := tp.Explain().String(); x == "" {
		t.Fatal("no explanation")
	}
}

// A template whose counter is chosen by a parameter is refused when the
// serial would not show the parameter unambiguously, when the parameter
// is not in it, when counter names could grow too long, and when the
// Resolver cannot create sources.
func TestSeqByParamRefused(t *testing.T) {
	ctx := context.Background()
	r := &recorder{}
	for _, tc := range []struct{ text, want string }{
		{"@{seq:jobs,by=unit,width=5}", "has no @{param:unit}"},
		{"@{param:area}@{param:unit}-@{seq:jobs,by=unit,width=5}", "counts apart for each value of unit"},
		{"@{param:unit,max=125}-@{seq:jobs,by=unit,width=5}", "at most 128"},
		{"@{param:unit,width=4}-@{seq:jobs,by=u nit}", "by="},
		{"@{param:unit,width=3,pad=1,chars=digits}@{seq:jobs,by=unit,width=3}", "drop pad="},
	} {
		_, err := Parse(ctx, tc.text, Options{Resolver: r})
		var se *SyntaxError
		if !errors.As(err, &se) || !errors.Is(err, idforge.ErrInvalidArgument) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q): %v; want a syntax error mentioning %q", tc.text, err, tc.want)
		}
	}
	_, err := Parse(ctx, "@{param:unit,width=4}-@{seq:jobs,by=unit}", Options{Resolver: Sources{}})
	if err == nil || !strings.Contains(err.Error(), "serial.Creator") {
		t.Errorf("a Resolver that cannot create: %v", err)
	}
	if len(r.created) != 0 {
		t.Fatalf("parsing created %v", r.created)
	}
}

// in= allows only some values: a unit outside the set creates no counter.
func TestSeqByParamIn(t *testing.T) {
	ctx := context.Background()
	r := &recorder{}
	tp := mustParse(t, "@{param:unit,width=4,chars=digits,in=6541|6542}-@{seq:jobs,by=unit,width=5}", Options{Resolver: r})
	if got := mustNext(t, tp, map[string]string{"unit": "6542"}); got != "6542-00001" {
		t.Fatalf("got %s", got)
	}
	_, err := tp.Next(ctx, map[string]string{"unit": "6543"})
	wantErr(t, err, idforge.ErrInvalidArgument, `"6543" is not one of in=6541|6542`)
	if len(r.created) != 1 {
		t.Fatalf("created %v", r.created)
	}
	_, err = Parse(ctx, "@{param:unit,width=4,chars=digits,in=6541|65x2}-@{seq:jobs,by=unit,width=5}", Options{Resolver: r})
	wantErr(t, err, idforge.ErrInvalidArgument, `in=6541|65x2: value "65x2"`)
}
