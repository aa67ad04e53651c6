// Package plugin runs interceptors around every issue of IDs, the plugin
// layer of segment+snowflake issuers that keep their hot path in Redis
// Lua scripts and persist to MongoDB: plugins are ordered
// (a smaller Order runs first), Before may reject a call (and a rejection
// handler decides what the caller sees), After may transform or record the
// IDs, OnError sees failures.
//
// Before runs before any ID is drawn, so a rejected call consumes nothing.
// After runs after the IDs were drawn: an After that fails turns the call
// into an error and the drawn IDs become a gap, never a duplicate.
//
// Integer IDs pass Run and each Afterer; string IDs (uuidv7, ulid and
// uuidv4 keys, serial numbers) pass RunStrings and each StringAfterer. Before and
// OnError are the same for both.
package plugin

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/idforge/idforge"
)

// ErrRejected is wrapped by the error a caller gets when a plugin's Before
// refuses the call. It is idforge.ErrRejected, so that every transport
// answers it with its own code ("rejected": HTTP 403, gRPC
// FAILED_PRECONDITION) rather than as an internal error.
var ErrRejected = idforge.ErrRejected

// Call describes one issue: which key, by which strategy, how many IDs.
type Call struct {
	Key      string
	Strategy idforge.Strategy
	Count    int
	// Format is the format spec the caller asked for (the HTTP API's
	// ?format=); empty for the key's own format.
	Format string
}

// A Plugin has a name and an order; it implements any of Beforer, Afterer
// and ErrorHandler.
type Plugin interface {
	// Name identifies the plugin in errors and logs.
	Name() string
	// Order places the plugin: smaller runs first.
	Order() int
}

// Beforer may refuse a call before any ID is drawn.
type Beforer interface {
	Before(ctx context.Context, c Call) error
}

// Afterer sees, and may replace, the IDs of a successful call.
type Afterer interface {
	After(ctx context.Context, c Call, ids []int64) ([]int64, error)
}

// StringAfterer sees, and may replace, the IDs of a successful call that
// issues strings: uuidv7, ulid and uuidv4 keys, and serial numbers (whose Call has
// the serial's name as Key and StrategySerial). A plugin that implements
// only Afterer, such as Obfuscate, which permutes integers, is not run for
// those calls; Before and OnError run for every call.
type StringAfterer interface {
	AfterStrings(ctx context.Context, c Call, ids []string) ([]string, error)
}

// RangeAfterer sees a range of consecutive IDs handed out whole, for the
// caller to issue from itself (Tinyid's segment API). A plugin that
// transforms each ID (an Afterer that is no RangeAfterer, such as
// Obfuscate) cannot apply to such a call, which is then refused.
type RangeAfterer interface {
	AfterRange(ctx context.Context, c Call, seg idforge.Segment) error
}

// StrategySerial is the Strategy of a Call that issues serial numbers.
const StrategySerial idforge.Strategy = "serial"

// ErrorHandler sees the failures of calls (including rejections).
type ErrorHandler interface {
	OnError(ctx context.Context, c Call, err error)
}

// RejectionHandler turns a Before's refusal into the error the caller
// gets. The default wraps ErrRejected and names the plugin.
type RejectionHandler func(ctx context.Context, c Call, p Plugin, err error) error

// DefaultRejection is the default RejectionHandler.
func DefaultRejection(ctx context.Context, c Call, p Plugin, err error) error {
	return fmt.Errorf("%w: plugin %s refused %d ID(s) of key %q: %w", ErrRejected, p.Name(), c.Count, c.Key, err)
}

// Scoped limits a plugin to some keys.
func Scoped(p Plugin, keys ...string) Plugin {
	if len(keys) == 0 {
		return p
	}
	set := make(map[string]bool, len(keys))
	for _, k := range keys {
		set[k] = true
	}
	return scoped{Plugin: p, keys: set, list: slices.Clone(keys)}
}

type scoped struct {
	Plugin
	keys map[string]bool
	list []string // keys as given, for Describe
}

func (s scoped) applies(key string) bool { return s.keys[key] }

// Chain runs plugins in order. The zero Chain runs nothing. A Chain is
// safe for concurrent use once built.
type Chain struct {
	plugins    []Plugin
	reject     RejectionHandler
	rejections *Rejections // what reject does, when BuildChain built it
	// idlers are the plugins that can be idle (Idler); busy counts the
	// others, which always run.
	idlers []Idler
	busy   int
}

// An Idler is a plugin that at times has nothing to do for any call,
// such as the quota plugin while no quota is defined. While every plugin
// of a chain is idle, callers skip the chain (Idle), so that issuing
// costs what it costs without plugins.
type Idler interface {
	Idle() bool
}

// NewChain orders plugins (a stable sort by Order) and uses reject for
// refusals (DefaultRejection when nil).
func NewChain(reject RejectionHandler, plugins ...Plugin) *Chain {
	ps := append([]Plugin(nil), plugins...)
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].Order() < ps[j].Order() })
	if reject == nil {
		reject = DefaultRejection
	}
	ch := &Chain{plugins: ps, reject: reject}
	for _, p := range ps {
		if i, ok := unwrap(p).(Idler); ok {
			ch.idlers = append(ch.idlers, i)
		} else {
			ch.busy++
		}
	}
	return ch
}

// BuildChain is NewChain with the rejection handler r configures
// (Rejections.Handler), which Describe reports. Its errors are
// Rejections.Handler's.
func BuildChain(r Rejections, env Env, plugins ...Plugin) (*Chain, error) {
	reject, err := r.Handler(env)
	if err != nil {
		return nil, err
	}
	ch := NewChain(reject, plugins...)
	r.Keys = slices.Clone(r.Keys)
	ch.rejections = &r
	return ch, nil
}

// Empty reports whether the chain has no plugins, so callers can skip it.
func (ch *Chain) Empty() bool { return ch == nil || len(ch.plugins) == 0 }

// Idle reports whether running the chain now would do nothing: it is
// empty, or every plugin is an Idler that is idle. The issuer's hot path
// asks it on every call, so it costs one load per Idler.
func (ch *Chain) Idle() bool {
	if ch.Empty() {
		return true
	}
	if ch.busy > 0 {
		return false
	}
	for _, i := range ch.idlers {
		if !i.Idle() {
			return false
		}
	}
	return true
}

func applies(p Plugin, key string) bool {
	if s, ok := p.(scoped); ok {
		return s.applies(key)
	}
	return true
}

// Describe describes the chain for operators (/v1/node), in the order
// its plugins run: each plugin's name, with the keys it is limited to,
// e.g. ["quota", "history (keys order, bill)"]; and how refusals are
// handled, as BuildChain was configured (nil for a chain NewChain built
// with a handler of the caller's).
func (ch *Chain) Describe() (plugins []string, rejections *Rejections) {
	plugins = []string{}
	if ch == nil {
		return plugins, nil
	}
	for _, p := range ch.plugins {
		d := p.Name()
		if s, ok := p.(scoped); ok {
			d = fmt.Sprintf("%s (keys %s)", d, strings.Join(s.list, ", "))
		}
		plugins = append(plugins, d)
	}
	return plugins, ch.rejections
}

// For returns the names of the plugins that run for key, which issues
// by strategy, in order. For keys that issue strings (uuidv7, ulid,
// uuidv4, serials) a plugin whose only step is an integer After is left out.
func (ch *Chain) For(key string, strategy idforge.Strategy) []string {
	if ch.Empty() {
		return nil
	}
	var names []string
	for _, p := range ch.plugins {
		if applies(p, key) && (!issuesStrings(strategy) || seesStrings(unwrap(p))) {
			names = append(names, p.Name())
		}
	}
	return names
}

func issuesStrings(s idforge.Strategy) bool {
	return s.IssuesStrings() || s == StrategySerial
}

// seesStrings reports whether p has a step that runs in RunStrings.
func seesStrings(p Plugin) bool {
	s := stepsOf(p)
	return s.before || s.afterStrings || s.onError
}

// steps tells which steps a plugin has.
type steps struct{ before, after, afterStrings, afterRange, onError bool }

func stepsOf(p Plugin) steps {
	if f, ok := p.(*Func); ok {
		// Func has every method; what it does is in the functions set.
		return steps{f.BeforeFunc != nil, f.AfterFunc != nil, f.AfterStringsFunc != nil, f.AfterRangeFunc != nil, f.ErrorFunc != nil}
	}
	var s steps
	_, s.before = p.(Beforer)
	_, s.after = p.(Afterer)
	_, s.afterStrings = p.(StringAfterer)
	_, s.afterRange = p.(RangeAfterer)
	_, s.onError = p.(ErrorHandler)
	return s
}

// Run issues through the chain: every Before, then draw, then every After
// in order; OnError on any failure.
func (ch *Chain) Run(ctx context.Context, c Call, draw func() ([]int64, error)) ([]int64, error) {
	if ch.Empty() {
		return draw()
	}
	return run(ch, ctx, c, draw, afterStep(Afterer.After))
}

// RunStrings is Run for calls that issue strings: the After step is each
// StringAfterer's AfterStrings.
func (ch *Chain) RunStrings(ctx context.Context, c Call, draw func() ([]string, error)) ([]string, error) {
	if ch.Empty() {
		return draw()
	}
	return run(ch, ctx, c, draw, afterStep(StringAfterer.AfterStrings))
}

// RunRange is Run for a call that hands out the range draw claims: the
// After step is each RangeAfterer's AfterRange. When a plugin that
// applies to the key must see every ID (an Afterer without AfterRange),
// the call is refused before anything is drawn, with an error wrapping
// idforge.ErrWrongStrategy: handing out the range would bypass it.
func (ch *Chain) RunRange(ctx context.Context, c Call, draw func() (idforge.Segment, error)) (idforge.Segment, error) {
	if ch.Empty() {
		return draw()
	}
	for _, p := range ch.plugins {
		if s := stepsOf(unwrap(p)); applies(p, c.Key) && s.after && !s.afterRange {
			err := fmt.Errorf("%w: plugin %s transforms every ID of key %q, so its IDs cannot be handed out as a range; ask for IDs instead",
				idforge.ErrWrongStrategy, p.Name(), c.Key)
			ch.onError(ctx, c, err)
			return idforge.Segment{}, err
		}
	}
	segs, err := run(ch, ctx, c, func() ([]idforge.Segment, error) {
		seg, err := draw()
		if err != nil {
			return nil, err
		}
		return []idforge.Segment{seg}, nil
	}, afterStep(func(a RangeAfterer, ctx context.Context, c Call, segs []idforge.Segment) ([]idforge.Segment, error) {
		return segs, a.AfterRange(ctx, c, segs[0])
	}))
	if err != nil {
		return idforge.Segment{}, err
	}
	return segs[0], nil
}

// An afterFunc is a plugin's After step for IDs of type T.
type afterFunc[T any] func(ctx context.Context, c Call, ids []T) ([]T, error)

// afterStep picks the After step of plugins that implement A: after, a
// method expression such as Afterer.After, bound to the plugin.
func afterStep[A any, T any](after func(A, context.Context, Call, []T) ([]T, error)) func(Plugin) (afterFunc[T], bool) {
	return func(p Plugin) (afterFunc[T], bool) {
		a, ok := p.(A)
		if !ok {
			return nil, false
		}
		return func(ctx context.Context, c Call, ids []T) ([]T, error) { return after(a, ctx, c, ids) }, true
	}
}

// run is the one interception sequence behind Run, RunStrings and
// RunRange; after picks a plugin's After step for IDs of type T, if it
// has one.
func run[T any](ch *Chain, ctx context.Context, c Call, draw func() ([]T, error), after func(Plugin) (afterFunc[T], bool)) ([]T, error) {
	if ch.Empty() {
		return draw()
	}
	for _, p := range ch.plugins {
		b, ok := unwrap(p).(Beforer)
		if !ok || !applies(p, c.Key) {
			continue
		}
		if err := b.Before(ctx, c); err != nil {
			err = ch.reject(ctx, c, p, err)
			ch.onError(ctx, c, err)
			return nil, err
		}
	}
	ids, err := draw()
	if err != nil {
		ch.onError(ctx, c, err)
		return nil, err
	}
	for _, p := range ch.plugins {
		fn, ok := after(unwrap(p))
		if !ok || !applies(p, c.Key) {
			continue
		}
		if ids, err = fn(ctx, c, ids); err != nil {
			err = fmt.Errorf("plugin %s: %w", p.Name(), err)
			ch.onError(ctx, c, err)
			return nil, err
		}
	}
	return ids, nil
}

func (ch *Chain) onError(ctx context.Context, c Call, err error) {
	for _, p := range ch.plugins {
		if h, ok := unwrap(p).(ErrorHandler); ok && applies(p, c.Key) {
			h.OnError(ctx, c, err)
		}
	}
}

func unwrap(p Plugin) Plugin {
	if s, ok := p.(scoped); ok {
		return s.Plugin
	}
	return p
}

// Widther is implemented by a plugin that permutes integer IDs within a
// fixed width, as Obfuscate does: it takes only IDs below 2^Bits() (0:
// a width it cannot tell).
type Widther interface {
	Bits() int
}

// Width is a plugin that permutes a key's integer IDs within Bits bits.
type Width struct {
	Plugin string
	Bits   int
}

// Widths returns the plugins that apply to key and permute its integer
// IDs within a fixed width (Widther), in the order they run, so that the
// key can be held to what they take (issuer.CheckKey).
func (ch *Chain) Widths(key string) []Width {
	if ch.Empty() {
		return nil
	}
	var out []Width
	for _, p := range ch.plugins {
		if w, ok := unwrap(p).(Widther); ok && applies(p, key) && w.Bits() > 0 {
			out = append(out, Width{Plugin: p.Name(), Bits: w.Bits()})
		}
	}
	return out
}
