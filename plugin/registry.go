package plugin

import (
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/errctx"
)

// Config declares one plugin by kind, as a [[plugins]] table of idforge's
// config file does. Which fields a kind reads is the kind's: Check says
// when one is missing or misplaced.
type Config struct {
	// Kind names a registered kind: history (a log line per issue), rate
	// (per-key counters in /metrics) or obfuscate (a keyed permutation of
	// integer IDs).
	Kind string
	// Keys limits the plugin to these keys; empty means every key.
	Keys []string
	// Order places the plugin: smaller runs first.
	Order int
	// Bits and Key configure obfuscate: the permutation's width (IDs must
	// stay below 2^Bits) and its key, as Env.Secret reads it.
	Bits int
	Key  string
	// File sends history to its own file, one JSON object per line,
	// appended (a relative path is under Env.Dir); by default history goes
	// to Env.Logger.
	File string
}

// Env is what building a plugin may use besides its Config.
type Env struct {
	// Logger is the process log. Nil means slog.Default().
	Logger *slog.Logger
	// Metrics receives the plugins' metrics. Nil means
	// prometheus.DefaultRegisterer.
	Metrics prometheus.Registerer
	// Dir is where relative file names point: the node's data directory.
	Dir string
	// Secret reads a configured secret (Config.Key). Nil takes the value
	// as written.
	Secret func(string) ([]byte, error)
}

// withDefaults returns env with its defaults filled in.
func (env Env) withDefaults() Env {
	if env.Logger == nil {
		env.Logger = slog.Default()
	}
	if env.Metrics == nil {
		env.Metrics = prometheus.DefaultRegisterer
	}
	if env.Secret == nil {
		env.Secret = func(v string) ([]byte, error) { return []byte(v), nil }
	}
	return env
}

// A Kind checks and builds the plugins of one kind.
type Kind struct {
	// Check validates a declaration without building anything, for a
	// config file read before anything opens. Nil accepts every one.
	Check func(c Config) error
	// New builds the plugin of a declaration that passed Check. The
	// closer, when not nil, releases what the plugin holds (a file);
	// close it after the plugin's last call.
	New func(c Config, env Env) (Plugin, io.Closer, error)
}

var kinds = struct {
	sync.RWMutex
	m map[string]Kind
}{m: map[string]Kind{}}

// Register makes a kind of plugin available to Check and Build under
// name. It is meant to be called from an init function, and panics, as
// each case is a programming error, on an empty name, a nil New or a name
// registered twice.
func Register(name string, k Kind) {
	if name == "" || k.New == nil {
		panic(fmt.Sprintf("plugin: Register(%q): empty name or nil New", name))
	}
	kinds.Lock()
	defer kinds.Unlock()
	if _, dup := kinds.m[name]; dup {
		panic(fmt.Sprintf("plugin: Register: kind %q registered twice", name))
	}
	kinds.m[name] = k
}

// Names returns the registered kinds in sorted order.
func Names() []string {
	kinds.RLock()
	defer kinds.RUnlock()
	names := make([]string, 0, len(kinds.m))
	for name := range kinds.m {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// Check validates a declaration without building anything. Its errors
// wrap idforge.ErrInvalidArgument: an unknown kind (the message lists the
// registered ones), or what the kind's Check refuses.
func Check(c Config) error {
	kinds.RLock()
	k, ok := kinds.m[c.Kind]
	kinds.RUnlock()
	if !ok {
		return fmt.Errorf("%w: unknown plugin kind %q (kinds: %s)", idforge.ErrInvalidArgument, c.Kind, strings.Join(Names(), ", "))
	}
	if k.Check == nil {
		return nil
	}
	return k.Check(c)
}

// Build checks a declaration and builds its plugin, limited to c.Keys.
// Its errors say which kind failed; those in the declaration (a secret
// that is missing, a second rate plugin on one registry) wrap
// idforge.ErrInvalidArgument. The closer is as for Kind.New.
func Build(c Config, env Env) (Plugin, io.Closer, error) {
	if err := Check(c); err != nil {
		return nil, nil, err
	}
	kinds.RLock()
	k := kinds.m[c.Kind]
	kinds.RUnlock()
	p, closer, err := k.New(c, env.withDefaults())
	if err != nil {
		return nil, nil, errctx.In(err, "plugin %s", c.Kind)
	}
	return Scoped(p, c.Keys...), closer, nil
}
