package plugin

import (
	"context"
	"fmt"
	"log/slog"
	"slices"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/idforge/idforge"
)

// Rejections configure a node's rejection handler: what it does, besides
// refusing the call, when a plugin's Before refuses one (a quota, say),
// as the [rejections] table of idforge's config file writes it. The zero
// value only refuses (DefaultRejection). The caller gets
// DefaultRejection's error whatever is set.
type Rejections struct {
	// Log writes a warning line per refusal: the key, the plugin, how
	// many IDs were asked for and why.
	Log bool `json:"log"`
	// Count counts refusals in idforge_plugin_rejections_total{plugin,
	// key}.
	Count bool `json:"count"`
	// Keys limits logging and counting to these keys (and serials, by
	// their names); empty means every key.
	Keys []string `json:"keys"`
}

// Check validates r without building anything. Its errors wrap
// idforge.ErrInvalidArgument.
func (r Rejections) Check() error {
	if len(r.Keys) > 0 && !r.Log && !r.Count {
		return invalid("keys limits what is logged or counted; set log or count (or both)")
	}
	return checkKeys(r.Keys)
}

// Handler builds r's RejectionHandler: DefaultRejection's error, logged
// to env.Logger and counted in env.Metrics as r says. Its errors are
// Check's, and a registry that already counts rejections.
func (r Rejections) Handler(env Env) (RejectionHandler, error) {
	if err := r.Check(); err != nil {
		return nil, err
	}
	if !r.Log && !r.Count {
		return DefaultRejection, nil
	}
	env = env.withDefaults()
	var counts *prometheus.CounterVec
	if r.Count {
		counts = prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "idforge_plugin_rejections_total",
			Help: "Calls a plugin refused before anything was drawn (a quota, say), by plugin and key.",
		}, []string{"plugin", "key"})
		if err := env.Metrics.Register(counts); err != nil {
			return nil, invalid("count: %v", err)
		}
	}
	log := env.Logger
	return func(ctx context.Context, c Call, p Plugin, err error) error {
		refused := DefaultRejection(ctx, c, p, err)
		if len(r.Keys) > 0 && !slices.Contains(r.Keys, c.Key) {
			return refused
		}
		if log != nil && r.Log {
			log.LogAttrs(ctx, slog.LevelWarn, "call refused by a plugin", slog.String("key", c.Key),
				slog.String("plugin", p.Name()), slog.Int("count", c.Count), slog.String("reason", err.Error()))
		}
		if counts != nil {
			counts.WithLabelValues(p.Name(), c.Key).Inc()
		}
		return refused
	}, nil
}

// invalid is an error in a declaration, wrapping
// idforge.ErrInvalidArgument.
func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{idforge.ErrInvalidArgument}, args...)...)
}

// checkKeys refuses a list of keys with a name no key can have.
func checkKeys(keys []string) error {
	for _, k := range keys {
		if err := idforge.ValidateKeyName(k); err != nil {
			return fmt.Errorf("keys: %w", err)
		}
	}
	return nil
}
