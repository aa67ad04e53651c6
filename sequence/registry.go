package sequence

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"sort"
	"strings"
	"sync"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/sequence/internal/param"
)

// Source is a sequence source opened from a URL: a Generator whose
// resources (connections, pools) Close releases. Close is idempotent;
// Next after Close returns an error wrapping idforge.ErrClosed.
type Source interface {
	idforge.Generator
	io.Closer
}

// Opener opens one kind of source from a URL whose scheme it registered.
// u.Scheme is lower case. The opener must release whatever it set up when
// it returns an error, and its errors must not contain passwords.
type Opener func(ctx context.Context, u *url.URL) (Source, error)

// CounterOpener opens the store of a per-period counter from a URL whose
// scheme it registered. OpenCounter has already taken the counter's own
// parameters (name, period, cap, over_cap, tz, dir, ahead) out of u's
// query; name is the counter's name. If the store holds resources it
// should implement io.Closer: the Counter closes it.
type CounterOpener func(ctx context.Context, u *url.URL, name string) (CounterStore, error)

type registry[T any] struct {
	what string
	mu   sync.RWMutex
	m    map[string]T
}

var (
	sources  = &registry[Opener]{what: "source"}
	counters = &registry[CounterOpener]{what: "counter"}
)

// Register makes a source available to Open under scheme, e.g. "redis"
// or "sqlrow+mysql". It is meant for a backend package's init function
// and panics, each case being a programming error, when scheme is not a
// lower-case URL scheme, open is nil or scheme is taken.
func Register(scheme string, open Opener) { sources.register(scheme, open, open == nil) }

// RegisterCounter makes a counter store available to OpenCounter under
// scheme. It panics like Register.
func RegisterCounter(scheme string, open CounterOpener) {
	counters.register(scheme, open, open == nil)
}

// Schemes returns the schemes Open knows, sorted.
func Schemes() []string { return sources.names() }

// CounterSchemes returns the schemes OpenCounter knows, sorted.
func CounterSchemes() []string { return counters.names() }

// Open opens the source rawURL names by its scheme. Import
// github.com/idforge/idforge/sequence/all (or the backend packages you
// want) to register the schemes; see the package documentation for the
// list. It returns an error wrapping idforge.ErrInvalidArgument when the
// URL does not parse, its scheme is unknown (the message lists the known
// ones) or a parameter is wrong. Errors never contain the URL's password.
func Open(ctx context.Context, rawURL string) (Source, error) {
	u, open, err := sources.lookup(rawURL)
	if err != nil {
		return nil, err
	}
	src, err := open(ctx, u)
	if err != nil {
		return nil, fmt.Errorf("sequence source %s: %w", u.Scheme, err)
	}
	return src, nil
}

func (r *registry[T]) register(scheme string, open T, isNil bool) {
	if !validScheme(scheme) {
		panic(fmt.Sprintf("sequence: register %s: invalid scheme %q (want [a-z][a-z0-9+.-]*)", r.what, scheme))
	}
	if isNil {
		panic(fmt.Sprintf("sequence: register %s: nil opener for scheme %q", r.what, scheme))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = make(map[string]T)
	}
	if _, dup := r.m[scheme]; dup {
		panic(fmt.Sprintf("sequence: register %s: scheme %q registered twice", r.what, scheme))
	}
	r.m[scheme] = open
}

func (r *registry[T]) names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]string, 0, len(r.m))
	for s := range r.m {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

func (r *registry[T]) lookup(rawURL string) (*url.URL, T, error) {
	var zero T
	u, err := param.Parse(rawURL, r.what+" URL")
	if err != nil {
		return nil, zero, err
	}
	r.mu.RLock()
	open, ok := r.m[u.Scheme]
	r.mu.RUnlock()
	if !ok {
		known := "none; import github.com/idforge/idforge/sequence/all"
		if names := r.names(); len(names) > 0 {
			known = strings.Join(names, ", ")
		}
		return nil, zero, fmt.Errorf("%w: %s URL %q: unknown scheme %q (known: %s)",
			idforge.ErrInvalidArgument, r.what, param.Redact(u), u.Scheme, known)
	}
	return u, open, nil
}

// validScheme reports whether s is a lower-case URL scheme.
func validScheme(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return true
}
