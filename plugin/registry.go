package plugin

import (
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/errctx"
	"github.com/idforge/idforge/internal/registry"
)

// Config declares one plugin by kind, as a [[plugins]] table of idforge's
// config file does.
type Config struct {
	// Kind names a registered kind: history (a log line per issue), rate
	// (per-key counters in /metrics) or obfuscate (a keyed permutation of
	// integer IDs).
	Kind string
	// Keys limits the plugin to these keys; empty means every key.
	Keys []string
	// Order places the plugin: smaller runs first.
	Order int
	// Settings are the kind's own, of its settings type: HistoryConfig,
	// ObfuscateConfig. Nil means the type's zero value (rate has none).
	Settings any
}

// HistoryConfig is the settings of a history plugin.
type HistoryConfig struct {
	// File sends history to its own file, one JSON object per line,
	// appended (a relative path is under Env.Dir); by default history goes
	// to Env.Logger.
	File string
}

// ObfuscateConfig is the settings of an obfuscate plugin.
type ObfuscateConfig struct {
	// Bits is the permutation's width: IDs must stay below 2^Bits.
	Bits int
	// Key is the permutation's key, as Env.Secret reads it.
	Key string
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

// A Kind checks and builds the plugins of one kind, whose settings are of
// type C.
type Kind[C any] struct {
	// Check validates settings without building anything, for a config
	// file read before anything opens. Nil accepts every one.
	Check func(c C) error
	// New builds the plugin of settings that passed Check, at order. The
	// closer, when not nil, releases what the plugin holds (a file);
	// close it after the plugin's last call.
	New func(c C, order int, env Env) (Plugin, io.Closer, error)
}

// builder is a Kind of any settings type.
type builder interface {
	// build checks c's settings and builds its plugin; with a nil env it
	// only checks.
	build(c Config, env *Env) (Plugin, io.Closer, error)
	takes(settings any) bool
}

func (k Kind[C]) takes(s any) bool { _, ok := s.(C); return ok }

func (k Kind[C]) build(c Config, env *Env) (Plugin, io.Closer, error) {
	var s C
	if c.Settings != nil {
		var ok bool
		if s, ok = c.Settings.(C); !ok {
			return nil, nil, fmt.Errorf("%w: %s, not %s", idforge.ErrInvalidArgument, misplaced(c.Settings), c.Kind)
		}
	}
	if k.Check != nil {
		if err := k.Check(s); err != nil {
			return nil, nil, err
		}
	}
	if env == nil {
		return nil, nil, nil
	}
	return k.New(s, c.Order, *env)
}

// misplaced says whose settings s are: "file is for history", naming its
// first field set.
func misplaced(s any) string {
	what, v := fmt.Sprintf("%T", s), reflect.ValueOf(s)
	for i := 0; v.Kind() == reflect.Struct && i < v.NumField(); i++ {
		if !v.Field(i).IsZero() {
			what = strings.ToLower(v.Type().Field(i).Name)
			break
		}
	}
	for _, name := range Names() {
		if k, _ := kinds.Get(name); k.takes(s) {
			return what + " is for " + name
		}
	}
	return what + " is for no kind"
}

var kinds = registry.Named[builder]("plugin", "kind", func(name string) bool { return name != "" })

// Register makes a kind of plugin available to Check and Build under
// name. It is meant to be called from an init function, and panics, as
// each case is a programming error, on an empty name, a nil New or a name
// registered twice.
func Register[C any](name string, k Kind[C]) {
	if k.New == nil {
		panic(fmt.Sprintf("plugin: Register(%q): nil New", name))
	}
	kinds.Register(registry.Scheme{Name: name}, k)
}

// Names returns the registered kinds in sorted order.
func Names() []string { return kinds.Names() }

// Check validates a declaration without building anything. Its errors
// wrap idforge.ErrInvalidArgument: an unknown kind (the message lists the
// registered ones), settings of another kind, or what the kind's Check
// refuses.
func Check(c Config) error {
	_, _, err := build(c, nil)
	return err
}

func build(c Config, env *Env) (Plugin, io.Closer, error) {
	k, ok := kinds.Get(c.Kind)
	if !ok {
		return nil, nil, fmt.Errorf("%w: unknown plugin kind %q (kinds: %s)", idforge.ErrInvalidArgument, c.Kind, strings.Join(Names(), ", "))
	}
	return k.build(c, env)
}

// Build checks a declaration and builds its plugin, limited to c.Keys.
// Its errors say which kind failed; those in the declaration (a secret
// that is missing, a second rate plugin on one registry) wrap
// idforge.ErrInvalidArgument. The closer is as for Kind.New.
func Build(c Config, env Env) (Plugin, io.Closer, error) {
	if err := Check(c); err != nil {
		return nil, nil, err
	}
	env = env.withDefaults()
	p, closer, err := build(c, &env)
	if err != nil {
		return nil, nil, errctx.In(err, "plugin %s", c.Kind)
	}
	return Scoped(p, c.Keys...), closer, nil
}
