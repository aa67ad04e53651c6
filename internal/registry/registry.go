// Package registry is the one registry behind store.Register,
// worker.Register, sequence.Register, plugin.Register and
// serial.RegisterKind: backends register an opener under a URL scheme
// (plugins and serial kinds a builder under a name) from their init
// functions, the binary opens a backend by URL, and help texts list the
// schemes with the URL form each takes. Registering twice, a nil value or
// a name the registry does not take is a programming error and panics,
// as caddy's RegisterModule does.
package registry

import (
	"fmt"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/dsn"
)

// Scheme describes one registered URL scheme, for help texts.
type Scheme struct {
	// Name is the URL scheme, lower case: "mysql".
	Name string
	// Form is the URL to write, on one line, with placeholders:
	// "mysql://user:password@host:port/database".
	Form string
	// Doc says in a few words what the scheme opens: "MySQL or MariaDB".
	Doc string
}

// Registry maps URL schemes to openers of type T. It is safe for
// concurrent use.
type Registry[T any] struct {
	what  string // names the registry in messages: "store", "worker"
	all   string // the package that registers every backend
	noun  string // what a name is, in messages: "scheme"
	valid func(string) bool
	mu    sync.RWMutex
	m     map[string]entry[T]
}

type entry[T any] struct {
	scheme Scheme
	open   T
}

// New returns an empty registry. what names it in messages ("store":
// "store URL …", "store mysql: …"); all is the package whose import
// registers every backend, named when a scheme is unknown.
func New[T any](what, all string) *Registry[T] {
	return &Registry[T]{what: what, all: all, noun: "scheme", valid: schemeRE.MatchString, m: make(map[string]entry[T])}
}

// Named returns an empty registry of names that valid accepts, called
// noun in messages ("kind name"), looked up with Get.
func Named[T any](what, noun string, valid func(string) bool) *Registry[T] {
	return &Registry[T]{what: what, noun: noun, valid: valid, m: make(map[string]entry[T])}
}

// schemeRE is a URL scheme as url.Parse returns it: lower case.
var schemeRE = regexp.MustCompile(`^[a-z][a-z0-9+.-]*$`)

// Register makes open available under s.Name. It panics, each case being
// a programming error, when s.Name is not a name r takes (for New, a
// lower-case URL scheme: [a-z][a-z0-9+.-]*), open is nil or s.Name is
// registered already.
func (r *Registry[T]) Register(s Scheme, open T) {
	if !r.valid(s.Name) {
		panic(fmt.Sprintf("%s: Register: invalid %s %q", r.what, r.noun, s.Name))
	}
	if v := reflect.ValueOf(&open).Elem(); (v.Kind() == reflect.Func || v.Kind() == reflect.Interface) && v.IsNil() {
		panic(fmt.Sprintf("%s: Register: nil %s for %s %q", r.what, v.Type().Name(), r.noun, s.Name))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.m[s.Name]; dup {
		panic(fmt.Sprintf("%s: Register: %s %q registered twice", r.what, r.noun, s.Name))
	}
	r.m[s.Name] = entry[T]{scheme: s, open: open}
}

// Names returns the registered schemes, sorted.
func (r *Registry[T]) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]string, 0, len(r.m))
	for name := range r.m {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// Schemes returns the registered schemes with their forms, sorted by
// name.
func (r *Registry[T]) Schemes() []Scheme {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]Scheme, 0, len(r.m))
	for _, e := range r.m {
		out = append(out, e.scheme)
	}
	slices.SortFunc(out, func(a, b Scheme) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Get returns what is registered under name.
func (r *Registry[T]) Get(name string) (T, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	e, ok := r.m[name]
	return e.open, ok
}

// Lookup parses rawURL and returns it with the opener of its scheme. The
// error wraps idforge.ErrInvalidArgument when rawURL does not parse, has
// no scheme or one nobody registered (the message lists those
// registered); it never contains a password.
func (r *Registry[T]) Lookup(rawURL string) (*url.URL, T, error) {
	var zero T
	u, err := dsn.Parse(rawURL, r.what+" URL")
	if err != nil {
		return nil, zero, err
	}
	if open, ok := r.Get(u.Scheme); ok {
		return u, open, nil
	}
	known := "none; import " + r.all
	if names := r.Names(); len(names) > 0 {
		known = strings.Join(names, ", ")
	}
	if u.Scheme == "" {
		return nil, zero, fmt.Errorf("%w: %s URL %q has no scheme (registered schemes: %s)",
			idforge.ErrInvalidArgument, r.what, dsn.Redacted(u), known)
	}
	return nil, zero, fmt.Errorf("%w: %s URL %q: unknown scheme %q (registered schemes: %s)",
		idforge.ErrInvalidArgument, r.what, dsn.Redacted(u), u.Scheme, known)
}

// Open looks rawURL's scheme up in r and calls with its URL and opener,
// wrapping call's error as Wrap does: the one way every registry opens
// what a URL names.
func Open[T, R any](r *Registry[T], rawURL string, call func(u *url.URL, open T) (R, error)) (R, error) {
	u, open, err := r.Lookup(rawURL)
	if err != nil {
		var zero R
		return zero, err
	}
	v, err := call(u, open)
	if err != nil {
		return v, r.Wrap(u, err)
	}
	return v, nil
}

// Wrap returns the error of the opener of u's scheme, which the opener
// wrote without naming the registry or the scheme: "store mysql: …".
func (r *Registry[T]) Wrap(u *url.URL, err error) error {
	return fmt.Errorf("%s %s: %w", r.what, u.Scheme, err)
}
