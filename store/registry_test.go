package store

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/store/memstore"
)

// fakeOpener returns an opener that records what it was given.
func fakeOpener(gotURL **url.URL, gotOpts *Options) Opener {
	return func(ctx context.Context, u *url.URL, opts Options) (idforge.Store, error) {
		*gotURL, *gotOpts = u, opts
		return memstore.New(), nil
	}
}

func noopOpener(context.Context, *url.URL, Options) (idforge.Store, error) {
	return memstore.New(), nil
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
		open   Opener
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
			r.register("dup", noopOpener)
			mustPanic(t, tt.want, func() { r.register(tt.scheme, tt.open) })
		})
	}
}

func TestRegisterAcceptsSchemeCharacters(t *testing.T) {
	r := newRegistry()
	for _, s := range []string{"a", "postgres", "redis+sentinel", "x-y.z9"} {
		r.register(s, noopOpener)
	}
	if got, want := r.names(), []string{"a", "postgres", "redis+sentinel", "x-y.z9"}; !slices.Equal(got, want) {
		t.Fatalf("names = %q, want %q", got, want)
	}
}

func TestNamesSorted(t *testing.T) {
	r := newRegistry()
	if got := r.names(); len(got) != 0 {
		t.Fatalf("empty registry names = %q", got)
	}
	for _, s := range []string{"zookeeper", "etcd", "sqlite", "mysql", "redis"} {
		r.register(s, noopOpener)
	}
	want := []string{"etcd", "mysql", "redis", "sqlite", "zookeeper"}
	if got := r.names(); !slices.Equal(got, want) {
		t.Fatalf("names = %q, want %q", got, want)
	}
}

func TestOpenUnknownScheme(t *testing.T) {
	r := newRegistry()
	r.register("sqlite", noopOpener)
	r.register("mysql", noopOpener)
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
			st, err := r.open(context.Background(), tt.url, Options{})
			if err == nil {
				st.Close()
				t.Fatal("Open succeeded; want an error")
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

func TestOpenNoBackends(t *testing.T) {
	_, err := newRegistry().open(context.Background(), "sqlite:", Options{})
	if err == nil || !strings.Contains(err.Error(), "registered schemes: none") {
		t.Fatalf("error = %v; want one saying no schemes are registered", err)
	}
}

func TestOpenPassesURLAndOptions(t *testing.T) {
	r := newRegistry()
	var u *url.URL
	var opts Options
	r.register("fake", fakeOpener(&u, &opts))

	st, err := r.open(context.Background(), "FAKE:///data/x.db", Options{DataDir: "/data"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if u.Scheme != "fake" || u.Path != "/data/x.db" {
		t.Errorf("opener got scheme %q path %q", u.Scheme, u.Path)
	}
	if opts.DataDir != "/data" {
		t.Errorf("opener got DataDir %q", opts.DataDir)
	}
	if opts.Logger != slog.Default() {
		t.Errorf("opener got Logger %v; want slog.Default()", opts.Logger)
	}

	logger := slog.New(slog.DiscardHandler)
	st2, err := r.open(context.Background(), "fake:", Options{Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	if opts.Logger != logger {
		t.Error("opener did not get the caller's Logger")
	}
}

func TestOpenWrapsOpenerError(t *testing.T) {
	r := newRegistry()
	boom := errors.New("disk on fire")
	r.register("broken", func(context.Context, *url.URL, Options) (idforge.Store, error) {
		return nil, boom
	})
	_, err := r.open(context.Background(), "broken:", Options{})
	if !errors.Is(err, boom) {
		t.Fatalf("error %v does not wrap the opener's error", err)
	}
	if !strings.HasPrefix(err.Error(), "store broken: ") {
		t.Errorf("error %q does not name the scheme", err)
	}
}

var registerOnce sync.Once

// TestPackageRegistry exercises the process-wide functions with a scheme no
// backend uses.
func TestPackageRegistry(t *testing.T) {
	registerOnce.Do(func() { Register("test-registry", noopOpener) }) // -count=N runs this again
	mustPanic(t, "registered twice", func() { Register("test-registry", noopOpener) })
	if !slices.Contains(Names(), "test-registry") {
		t.Fatalf("Names() = %q; missing test-registry", Names())
	}
	if !slices.IsSorted(Names()) {
		t.Fatalf("Names() = %q; not sorted", Names())
	}
	st, err := Open(context.Background(), "test-registry:", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
}
