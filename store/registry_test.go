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
	"github.com/idforge/idforge/internal/registry"
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

func newRegistry() *registry.Registry[Opener] { return registry.New[Opener]("store", "") }

func TestOpenPassesURLAndOptions(t *testing.T) {
	r := newRegistry()
	var u *url.URL
	var opts Options
	r.Register(Scheme{Name: "fake"}, fakeOpener(&u, &opts))

	st, err := open(context.Background(), r, "FAKE:///data/x.db", Options{DataDir: "/data"})
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
	st2, err := open(context.Background(), r, "fake:", Options{Logger: logger})
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
	r.Register(Scheme{Name: "broken"}, func(context.Context, *url.URL, Options) (idforge.Store, error) {
		return nil, boom
	})
	_, err := open(context.Background(), r, "broken:", Options{})
	if !errors.Is(err, boom) {
		t.Fatalf("error %v does not wrap the opener's error", err)
	}
	if !strings.HasPrefix(err.Error(), "store broken: ") {
		t.Errorf("error %q does not name the scheme", err)
	}
}

var registerOnce sync.Once

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

// TestPackageRegistry exercises the process-wide functions with a scheme no
// backend uses.
func TestPackageRegistry(t *testing.T) {
	s := Scheme{Name: "test-registry", Form: "test-registry:", Doc: "a test"}
	registerOnce.Do(func() { Register(s, noopOpener) }) // -count=N runs this again
	mustPanic(t, "registered twice", func() { Register(s, noopOpener) })
	if !slices.Contains(Names(), "test-registry") {
		t.Fatalf("Names() = %q; missing test-registry", Names())
	}
	if !slices.IsSorted(Names()) {
		t.Fatalf("Names() = %q; not sorted", Names())
	}
	if !slices.Contains(Schemes(), s) {
		t.Fatalf("Schemes() = %q; missing %v", Schemes(), s)
	}
	st, err := Open(context.Background(), "test-registry:", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
}
