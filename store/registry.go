package store

import (
	"context"
	"log/slog"
	"net/url"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/registry"
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

// Scheme describes a registered URL scheme for help texts: its Name, the
// URL Form to write and a short Doc.
type Scheme = registry.Scheme

// backends is the process-wide registry behind Register, Open and Names.
var backends = registry.New[Opener]("store", "github.com/idforge/idforge/store/all")

// Register makes a backend available to Open under s.Name. It is meant to
// be called from the backend package's init function. It panics, because
// each case is a programming error, when s.Name is not a valid lower-case
// URL scheme ([a-z][a-z0-9+.-]*), when open is nil, or when the scheme is
// already registered.
func Register(s Scheme, open Opener) { backends.Register(s, open) }

// Open opens the backend named by rawURL's scheme, for example
// "sqlite:///var/lib/idforge/idforge.db". It returns an error wrapping
// idforge.ErrInvalidArgument when rawURL cannot be parsed or its scheme is
// not registered (the message lists the registered schemes); an error from
// the backend's opener is returned wrapped with the scheme. Passwords in
// the URL never appear in error messages.
func Open(ctx context.Context, rawURL string, opts Options) (idforge.Store, error) {
	return open(ctx, backends, rawURL, opts)
}

// open is Open on registry r.
func open(ctx context.Context, r *registry.Registry[Opener], rawURL string, opts Options) (idforge.Store, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return registry.Open(r, rawURL, func(u *url.URL, open Opener) (idforge.Store, error) { return open(ctx, u, opts) })
}

// Names returns the registered schemes in sorted order.
func Names() []string { return backends.Names() }

// Schemes returns the registered schemes with their URL forms, sorted by
// name, for help texts.
func Schemes() []Scheme { return backends.Schemes() }
