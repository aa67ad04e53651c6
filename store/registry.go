package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"sort"
	"strings"
	"sync"

	"github.com/idforge/idforge"
)

// Options are the settings the binary hands to every backend it opens.
// The zero value is usable: no data directory and the default logger.
type Options struct {
	// DataDir is the node's data directory. Embedded backends put their
	// file there when the URL gives no path; network backends ignore it.
	DataDir string
	// Logger receives the backend's log records. Nil means slog.Default().
	Logger *slog.Logger
	// ForMigrate opens the store for `idforge migrate`: a backend that
	// refuses to open when its tables are missing must open anyway, so
	// that Migrate can create them.
	ForMigrate bool
}

// Opener opens one backend from a URL whose scheme it registered. u is the
// parsed URL (its Scheme is lower case); opts has a non-nil Logger. The
// opener must release everything it set up when it returns an error.
type Opener func(ctx context.Context, u *url.URL, opts Options) (idforge.Store, error)

// registry maps URL schemes to openers. It is safe for concurrent use.
type registry struct {
	mu      sync.RWMutex
	openers map[string]Opener
}

// backends is the process-wide registry behind Register, Open and Names.
var backends = newRegistry()

func newRegistry() *registry {
	return &registry{openers: make(map[string]Opener)}
}

// Register makes a backend available to Open under scheme. It is meant to
// be called from the backend package's init function. It panics, because
// each case is a programming error, when scheme is empty or not a valid
// lower-case URL scheme ([a-z][a-z0-9+.-]*), when open is nil, or when
// scheme is already registered.
func Register(scheme string, open Opener) { backends.register(scheme, open) }

// Open opens the backend named by rawURL's scheme, for example
// "sqlite:///var/lib/idforge/idforge.db". It returns an error wrapping
// idforge.ErrInvalidArgument when rawURL cannot be parsed or its scheme is
// not registered (the message lists the registered schemes); an error from
// the backend's opener is returned wrapped with the scheme. Passwords in
// the URL never appear in error messages.
func Open(ctx context.Context, rawURL string, opts Options) (idforge.Store, error) {
	return backends.open(ctx, rawURL, opts)
}

// Names returns the registered schemes in sorted order.
func Names() []string { return backends.names() }

func (r *registry) register(scheme string, open Opener) {
	if !validScheme(scheme) {
		panic(fmt.Sprintf("store: Register: invalid scheme %q (want [a-z][a-z0-9+.-]*)", scheme))
	}
	if open == nil {
		panic(fmt.Sprintf("store: Register: nil opener for scheme %q", scheme))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.openers[scheme]; dup {
		panic(fmt.Sprintf("store: Register: scheme %q registered twice", scheme))
	}
	r.openers[scheme] = open
}

func (r *registry) open(ctx context.Context, rawURL string, opts Options) (idforge.Store, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		// url.Error repeats the whole URL, password included; keep only
		// the reason.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("%w: store URL: %v", idforge.ErrInvalidArgument, err)
	}
	r.mu.RLock()
	open, ok := r.openers[u.Scheme]
	r.mu.RUnlock()
	if !ok {
		known := "none"
		if names := r.names(); len(names) > 0 {
			known = strings.Join(names, ", ")
		}
		if u.Scheme == "" {
			return nil, fmt.Errorf("%w: store URL %q has no scheme (registered schemes: %s)",
				idforge.ErrInvalidArgument, u.Redacted(), known)
		}
		return nil, fmt.Errorf("%w: store URL %q: unknown scheme %q (registered schemes: %s)",
			idforge.ErrInvalidArgument, u.Redacted(), u.Scheme, known)
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	st, err := open(ctx, u, opts)
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", u.Scheme, err)
	}
	return st, nil
}

func (r *registry) names() []string {
	r.mu.RLock()
	out := make([]string, 0, len(r.openers))
	for name := range r.openers {
		out = append(out, name)
	}
	r.mu.RUnlock()
	sort.Strings(out)
	return out
}

// validScheme reports whether s is a URL scheme as url.Parse returns it:
// a lower-case letter followed by lower-case letters, digits, '+', '-' or '.'.
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
