package plugin

import (
	"context"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/idforge/idforge"
)

// History records every issue: the key, the count, the first and last ID,
// to a logger (a dedicated file or the process log). It lets an operator
// answer "who got ID 4711, when?" afterwards.
type History struct {
	Log   *slog.Logger
	order int
}

// NewHistory returns the history plugin at order.
func NewHistory(log *slog.Logger, order int) *History { return &History{Log: log, order: order} }

// Name implements Plugin.
func (h *History) Name() string { return "history" }

// Order implements Plugin.
func (h *History) Order() int { return h.order }

// After logs the call.
func (h *History) After(ctx context.Context, c Call, ids []int64) ([]int64, error) {
	if len(ids) > 0 {
		h.Log.Info("issued", "key", c.Key, "strategy", string(c.Strategy), "count", len(ids), "first", ids[0], "last", ids[len(ids)-1])
	}
	return ids, nil
}

// AfterStrings logs a call that issued strings (uuidv7, ulid, uuidv4, serials).
func (h *History) AfterStrings(ctx context.Context, c Call, ids []string) ([]string, error) {
	if len(ids) > 0 {
		h.Log.Info("issued", "key", c.Key, "strategy", string(c.Strategy), "count", len(ids), "first", ids[0], "last", ids[len(ids)-1])
	}
	return ids, nil
}

// AfterRange logs a range handed out whole.
func (h *History) AfterRange(ctx context.Context, c Call, seg idforge.Segment) error {
	h.Log.Info("issued", "key", c.Key, "strategy", string(c.Strategy), "count", seg.Len(), "first", seg.Start, "last", seg.End-1, "range", true)
	return nil
}

// OnError logs failures.
func (h *History) OnError(ctx context.Context, c Call, err error) {
	h.Log.Warn("issue failed", "key", c.Key, "count", c.Count, "err", err)
}

// Rate counts issued IDs and failures per key for Prometheus
// (idforge_plugin_ids_total, idforge_plugin_failures_total), so the rate
// of any key, also snowflake and source keys, shows in metrics.
type Rate struct {
	ids      *prometheus.CounterVec
	failures *prometheus.CounterVec
	order    int
}

// NewRate returns the rate plugin, registering its metrics with reg.
func NewRate(reg prometheus.Registerer, order int) (*Rate, error) {
	r := &Rate{
		ids: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "idforge_plugin_ids_total", Help: "IDs issued per key, counted by the rate plugin.",
		}, []string{"key"}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "idforge_plugin_failures_total", Help: "Failed or refused issues per key, counted by the rate plugin.",
		}, []string{"key"}),
		order: order,
	}
	for _, c := range []prometheus.Collector{r.ids, r.failures} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Name implements Plugin.
func (r *Rate) Name() string { return "rate" }

// Order implements Plugin.
func (r *Rate) Order() int { return r.order }

// After counts the IDs.
func (r *Rate) After(ctx context.Context, c Call, ids []int64) ([]int64, error) {
	r.ids.WithLabelValues(c.Key).Add(float64(len(ids)))
	return ids, nil
}

// AfterStrings counts the string IDs.
func (r *Rate) AfterStrings(ctx context.Context, c Call, ids []string) ([]string, error) {
	r.ids.WithLabelValues(c.Key).Add(float64(len(ids)))
	return ids, nil
}

// AfterRange counts the IDs of a range handed out whole.
func (r *Rate) AfterRange(ctx context.Context, c Call, seg idforge.Segment) error {
	r.ids.WithLabelValues(c.Key).Add(float64(seg.Len()))
	return nil
}

// OnError counts the failure.
func (r *Rate) OnError(ctx context.Context, c Call, err error) {
	r.failures.WithLabelValues(c.Key).Inc()
}

// Func adapts functions to a plugin, for programs that embed idforge.
type Func struct {
	PluginName  string
	PluginOrder int
	BeforeFunc  func(ctx context.Context, c Call) error
	AfterFunc   func(ctx context.Context, c Call, ids []int64) ([]int64, error)
	// AfterStringsFunc sees calls that issue strings (uuidv7, ulid,
	// uuidv4, serials).
	AfterStringsFunc func(ctx context.Context, c Call, ids []string) ([]string, error)
	// AfterRangeFunc sees ranges handed out whole (Tinyid's segment
	// API). A Func with AfterFunc but no AfterRangeFunc refuses them.
	AfterRangeFunc func(ctx context.Context, c Call, seg idforge.Segment) error
	ErrorFunc      func(ctx context.Context, c Call, err error)
}

// Name implements Plugin.
func (f *Func) Name() string { return f.PluginName }

// Order implements Plugin.
func (f *Func) Order() int { return f.PluginOrder }

// Before calls BeforeFunc, if set.
func (f *Func) Before(ctx context.Context, c Call) error {
	if f.BeforeFunc == nil {
		return nil
	}
	return f.BeforeFunc(ctx, c)
}

// After calls AfterFunc, if set.
func (f *Func) After(ctx context.Context, c Call, ids []int64) ([]int64, error) {
	if f.AfterFunc == nil {
		return ids, nil
	}
	return f.AfterFunc(ctx, c, ids)
}

// AfterStrings calls AfterStringsFunc, if set.
func (f *Func) AfterStrings(ctx context.Context, c Call, ids []string) ([]string, error) {
	if f.AfterStringsFunc == nil {
		return ids, nil
	}
	return f.AfterStringsFunc(ctx, c, ids)
}

// AfterRange calls AfterRangeFunc, if set.
func (f *Func) AfterRange(ctx context.Context, c Call, seg idforge.Segment) error {
	if f.AfterRangeFunc == nil {
		return nil
	}
	return f.AfterRangeFunc(ctx, c, seg)
}

// OnError calls ErrorFunc, if set.
func (f *Func) OnError(ctx context.Context, c Call, err error) {
	if f.ErrorFunc != nil {
		f.ErrorFunc(ctx, c, err)
	}
}

// Permuter maps an ID to another reversibly, e.g. *obfuscate.Permutation.
type Permuter interface {
	Encode(v int64) (int64, error)
}

// Obfuscate replaces every issued ID by its image under a keyed
// permutation, so that integer IDs (also over Leaf's plain endpoints)
// hide order and volume. The permutation is a bijection of its range,
// so distinct IDs stay distinct; an ID outside its range is an error,
// never a collision.
type Obfuscate struct {
	perm  Permuter
	order int
}

// NewObfuscate returns the obfuscation plugin.
func NewObfuscate(p Permuter, order int) *Obfuscate { return &Obfuscate{perm: p, order: order} }

// Name implements Plugin.
func (o *Obfuscate) Name() string { return "obfuscate" }

// Order implements Plugin.
func (o *Obfuscate) Order() int { return o.order }

// Bits returns the width of the permutation, when its Permuter tells it
// (as *obfuscate.Permutation does), and 0 otherwise: the plugin takes
// only IDs below 2^Bits, so keys are checked against it (Widther).
func (o *Obfuscate) Bits() int {
	if w, ok := o.perm.(interface{ Bits() int }); ok {
		return w.Bits()
	}
	return 0
}

// After permutes the IDs.
func (o *Obfuscate) After(ctx context.Context, c Call, ids []int64) ([]int64, error) {
	out := make([]int64, len(ids))
	for i, id := range ids {
		v, err := o.perm.Encode(id)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}
