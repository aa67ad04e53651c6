package worker

import (
	"context"
	"net/url"
	"path/filepath"
	"strconv"

	"github.com/idforge/idforge/datadir"
	"github.com/idforge/idforge/internal/registry"
)

// An Opener builds a Provider from a --worker URL whose scheme it
// registered. It must not contact the coordinator: Acquire does. opts has
// its defaults (Options.WithDefaults).
type Opener func(ctx context.Context, u *url.URL, opts Options) (Provider, error)

// Scheme describes a registered URL scheme for help texts: its Name, the
// URL Form to write and a short Doc.
type Scheme = registry.Scheme

// providers is the process-wide registry behind Register, Open and Names.
var providers = registry.New[Opener]("worker", "github.com/idforge/idforge/worker/all")

// Register makes a provider available under s.Name. It is called from a
// provider package's init and panics when s.Name is not a lower-case URL
// scheme, open is nil or the scheme is registered twice: those are
// programming errors.
func Register(s Scheme, open Opener) { providers.Register(s, open) }

// Names returns the registered schemes, the built-in ones included,
// sorted.
func Names() []string { return providers.Names() }

// Schemes returns the registered schemes with the URL form each takes,
// sorted by name: every --worker form but the two shorthands Open
// documents ("", a bare number and "ip"), for help texts.
func Schemes() []Scheme { return providers.Schemes() }

// Open returns the Provider a --worker value names:
//
//	""                     the file worker-id in the data directory
//	"7", "static://7"      the fixed ID 7
//	"file:///abs/path"     a file, as File ("file:rel/path" is relative)
//	"k8s://"               the StatefulSet ordinal of this pod
//	"ip", "ip://?bits=16"  the low bits of this host's private IPv4
//	                       address (IP); "ip+mysql://…" and the other
//	                       SQL schemes hold that ID in idforge_workers
//	"etcd://…", "zk://…",  a coordinator, when its package is linked in
//	"redis://…", "mysql://…", "postgres://…", "sqlite://…"
//
// (Schemes lists every registered form.) A malformed value or an unknown
// scheme is an error wrapping idforge.ErrInvalidArgument.
func Open(ctx context.Context, spec string, opts Options) (Provider, error) {
	opts = opts.WithDefaults()
	if spec == "" {
		return File(filepath.Join(opts.DataDir, datadir.WorkerIDFile)), nil
	}
	if n, err := strconv.ParseInt(spec, 10, 64); err == nil {
		return Static(n), nil
	}
	if spec == "ip" {
		spec = "ip://"
	}
	return registry.Open(providers, spec, func(u *url.URL, open Opener) (Provider, error) { return open(ctx, u, opts) })
}
