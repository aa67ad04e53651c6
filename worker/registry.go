package worker

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"sort"
	"strconv"
	"sync"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/datadir"
)

// An Opener builds a Provider from a --worker URL whose scheme it
// registered. It must not contact the coordinator: Acquire does.
type Opener func(ctx context.Context, u *url.URL, opts Options) (Provider, error)

var registry struct {
	sync.Mutex
	openers map[string]Opener
}

// Register makes a provider available under scheme. It is called from a
// provider package's init and panics on an empty scheme, a nil opener or a
// scheme registered twice: those are programming errors.
func Register(scheme string, open Opener) {
	registry.Lock()
	defer registry.Unlock()
	if scheme == "" || open == nil {
		panic("worker: Register with an empty scheme or a nil opener")
	}
	if registry.openers == nil {
		registry.openers = map[string]Opener{}
	}
	if _, dup := registry.openers[scheme]; dup {
		panic("worker: scheme " + scheme + " registered twice")
	}
	registry.openers[scheme] = open
}

// Names returns the registered schemes and the built-in ones, sorted.
func Names() []string {
	registry.Lock()
	defer registry.Unlock()
	names := []string{"file", "k8s", "static"}
	for n := range registry.openers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Open returns the Provider a --worker value names:
//
//	""                     the file worker-id in the data directory
//	"7", "static://7"      the fixed ID 7
//	"file:///abs/path"     a file, as File ("file:rel/path" is relative)
//	"k8s://"               the StatefulSet ordinal of this pod
//	"etcd://…", "zk://…",  a coordinator, when its package is linked in
//	"redis://…", "mysql://…", "postgres://…", "sqlite://…"
//
// A malformed value or an unknown scheme is an error wrapping
// idforge.ErrInvalidArgument.
func Open(ctx context.Context, spec string, opts Options) (Provider, error) {
	opts = opts.WithDefaults()
	if spec == "" {
		return File(filepath.Join(opts.DataDir, datadir.WorkerIDFile)), nil
	}
	if n, err := strconv.ParseInt(spec, 10, 64); err == nil {
		return Static(n), nil
	}
	u, err := url.Parse(spec)
	if err != nil {
		return nil, fmt.Errorf("%w: worker %q: %v", idforge.ErrInvalidArgument, redact(spec), err)
	}
	switch u.Scheme {
	case "static":
		n, err := strconv.ParseInt(u.Host+u.Opaque, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%w: worker %q: want static://<number>", idforge.ErrInvalidArgument, spec)
		}
		return Static(n), nil
	case "file":
		p := u.Path
		if u.Opaque != "" {
			p = u.Opaque
		}
		if p == "" {
			return nil, fmt.Errorf("%w: worker %q: file URL without a path", idforge.ErrInvalidArgument, spec)
		}
		return File(p), nil
	case "k8s", "kubernetes":
		return Kubernetes(u), nil
	}
	registry.Lock()
	open := registry.openers[u.Scheme]
	registry.Unlock()
	if open == nil {
		return nil, fmt.Errorf("%w: worker %q: unknown kind %q (known: %v)", idforge.ErrInvalidArgument, redact(spec), u.Scheme, Names())
	}
	p, err := open(ctx, u, opts)
	if err != nil {
		return nil, fmt.Errorf("worker %s: %w", u.Redacted(), err)
	}
	return p, nil
}

// redact hides a password in a worker URL for messages.
func redact(spec string) string {
	if u, err := url.Parse(spec); err == nil {
		return u.Redacted()
	}
	return "(unparsable URL)"
}
