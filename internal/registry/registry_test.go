package registry

import (
	"errors"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/idforge/idforge"
)

// opener stands for a registry's opener type.
type opener func() string

func noopOpener() string { return "noop" }

func newRegistry() *Registry[opener] {
	return New[opener]("store", "github.com/idforge/idforge/store/all")
}

// mustPanic runs f and fails unless it panics with a message containing want.
func mustPanic(t *testing.T, want string, f func()) {
	t.Helper()
	defer func() {
		t.Helper()
		r := recover()
		if r == nil {
			t.Fatalf("no panic; want one mentioning %q", want)
		}
		if msg, _ := r.(string); !strings.Contains(msg, want) {
			t.Fatalf("panic %v; want one mentioning %q", r, want)
		}
	}()
	f()
}

func TestRegisterPanics(t *testing.T) {
	tests := []struct {
		name   string
		scheme string
		open   opener
		want   string
	}{
		{"empty scheme", "", noopOpener, "invalid scheme"},
		{"upper case", "SQLite", noopOpener, "invalid scheme"},
		{"leading digit", "3db", noopOpener, "invalid scheme"},
		{"colon", "sqlite:", noopOpener, "invalid scheme"},
		{"nil opener", "fine", nil, "nil opener"},
		{"duplicate", "dup", noopOpener, "registered twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRegistry()
			r.Register(Scheme{Name: "dup"}, noopOpener)
			mustPanic(t, tt.want, func() { r.Register(Scheme{Name: tt.scheme}, tt.open) })
		})
	}
}

func TestRegisterAcceptsSchemeCharacters(t *testing.T) {
	r := newRegistry()
	for _, s := range []string{"a", "postgres", "redis+sentinel", "x-y.z9"} {
		r.Register(Scheme{Name: s}, noopOpener)
	}
	if got, want := r.Names(), []string{"a", "postgres", "redis+sentinel", "x-y.z9"}; !slices.Equal(got, want) {
		t.Fatalf("names = %q, want %q", got, want)
	}
}

func TestNamesSorted(t *testing.T) {
	r := newRegistry()
	if got := r.Names(); len(got) != 0 {
		t.Fatalf("empty registry names = %q", got)
	}
	for _, s := range []string{"zookeeper", "etcd", "sqlite", "mysql", "redis"} {
		r.Register(Scheme{Name: s, Form: s + "://…"}, noopOpener)
	}
	want := []string{"etcd", "mysql", "redis", "sqlite", "zookeeper"}
	if got := r.Names(); !slices.Equal(got, want) {
		t.Fatalf("names = %q, want %q", got, want)
	}
	var forms []string
	for _, s := range r.Schemes() {
		if s.Form != s.Name+"://…" {
			t.Errorf("scheme %q has form %q", s.Name, s.Form)
		}
		forms = append(forms, s.Name)
	}
	if !slices.Equal(forms, want) {
		t.Fatalf("schemes = %q, want %q", forms, want)
	}
}

func TestLookupUnknownScheme(t *testing.T) {
	r := newRegistry()
	r.Register(Scheme{Name: "sqlite"}, noopOpener)
	r.Register(Scheme{Name: "mysql"}, noopOpener)
	tests := []struct {
		name, url string
		wantIn    []string
		wantNot   string
	}{
		{"unknown", "bolt:///tmp/x.db", []string{`unknown scheme "bolt"`, "registered schemes: mysql, sqlite"}, ""},
		{"no scheme", "/var/lib/idforge.db", []string{"has no scheme", "mysql, sqlite"}, ""},
		{"empty", "", []string{"has no scheme"}, ""},
		{"password redacted", "postgres://admin:hunter2@db:5432/ids", []string{`unknown scheme "postgres"`}, "hunter2"},
		{"unparsable, password hidden", "mysql://admin:hunter2@db:port/ids", []string{"invalid port"}, "hunter2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := r.Lookup(tt.url)
			if err == nil {
				t.Fatal("Lookup succeeded; want an error")
			}
			if !errors.Is(err, idforge.ErrInvalidArgument) {
				t.Errorf("error %v does not wrap ErrInvalidArgument", err)
			}
			for _, w := range tt.wantIn {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			if tt.wantNot != "" && strings.Contains(err.Error(), tt.wantNot) {
				t.Errorf("error %q leaks %q", err, tt.wantNot)
			}
		})
	}
}

func TestLookupNoBackends(t *testing.T) {
	_, _, err := newRegistry().Lookup("sqlite:")
	if err == nil || !strings.Contains(err.Error(), "registered schemes: none") {
		t.Fatalf("error = %v; want one saying no schemes are registered", err)
	}
}

func TestLookupAndWrap(t *testing.T) {
	r := newRegistry()
	r.Register(Scheme{Name: "broken"}, noopOpener)
	u, open, err := r.Lookup("BROKEN:///data/x.db")
	if err != nil {
		t.Fatal(err)
	}
	if u.Scheme != "broken" || u.Path != "/data/x.db" || open() != "noop" {
		t.Errorf("Lookup gave scheme %q path %q", u.Scheme, u.Path)
	}
	boom := errors.New("disk on fire")
	err = r.Wrap(&url.URL{Scheme: "broken"}, boom)
	if !errors.Is(err, boom) {
		t.Fatalf("error %v does not wrap the opener's error", err)
	}
	if !strings.HasPrefix(err.Error(), "store broken: ") {
		t.Errorf("error %q does not name the scheme", err)
	}
}
