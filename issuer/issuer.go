// Package issuer routes requests for IDs to the strategy each key uses. It
// is what the idforge server and CLI talk to: a catalogue of keys in an
// idforge.Store, one segment allocator per segment key, and the node's
// snowflake generator shared by every snowflake key.
//
// All snowflake keys of a node draw from one generator, so a snowflake ID
// is unique across keys as well as within one; they share the layout's
// per-node rate (4,096,000 IDs/s for the twitter layout).
package issuer

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/periodic"
	"github.com/idforge/idforge/obfuscate"
	"github.com/idforge/idforge/plugin"
	"github.com/idforge/idforge/segment"
	"github.com/idforge/idforge/sequence"
	"github.com/idforge/idforge/snowflake"
	"github.com/idforge/idforge/timeid"
)

// Settings configure an Issuer.
type Settings struct {
	// Segment is applied to every segment key's allocator.
	Segment segment.Settings
	// Sources are named sequence sources (Redis INCR, SQL rows, ticket
	// servers, …). They answer as keys of strategy "source" and can be
	// referred to from serial templates. The Issuer does not close them.
	Sources map[string]idforge.Generator
	// Counters are named per-period counters for serial templates.
	Counters map[string]idforge.PeriodCounter
	// Definitions serves sources and counters defined through the API;
	// nil means none (see Definitions).
	Definitions Definitions
	// Serials are serial definitions from the configuration. They come
	// before definitions in the store, which may add more.
	Serials []idforge.Serial
	// Formats are the forms of keys' IDs (obfuscate.Format: a permutation
	// and base62 or Sqids, say). A format's permutation applies on every
	// endpoint, integer ones included, so a key has one set of IDs; its
	// text stage is what NextStrings shows and Decode reads. A key
	// without one is shown in decimal.
	Formats map[string]obfuscate.Format
	// Plugins run around every issue of IDs, strings and serials
	// included. Nil means none.
	Plugins *plugin.Chain
	// Clock is read by serial templates. Default idforge.SystemClock.
	Clock idforge.Clock
	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

// Issuer issues IDs for named keys. It is safe for concurrent use.
type Issuer struct {
	store idforge.Store
	snow  *snowflake.Generator
	set   Settings

	// keys maps names to entries for keys seen in the store: the read
	// path is one atomic load and a plain map lookup (see keyMap).
	keys *keyMap

	// serials caches compiled serial templates by name, copied on write
	// like keys.
	serials atomic.Pointer[map[string]*serialEntry]

	// permutes is set when some key's format has a permutation, so that
	// issuers without one skip looking for it.
	permutes bool

	mu     sync.Mutex // serialises adding entries and Close
	closed bool
}

// entry is a key resolved to its generator.
type entry struct {
	strategy idforge.Strategy
	gen      idforge.BatchGenerator // keys of int64 IDs
	str      timeid.Generator       // keys of strings: uuidv7, ulid, uuidv4
	alloc    *segment.Allocator     // segment keys only
	// retired, once set, is what the key answers: it was retired
	// (RetireKey, or Refresh saw it retired). It is set on the entry in
	// place, so that every holder of the entry (a request that resolved
	// it, a serial template drawing from it) stops at once.
	retired atomic.Pointer[error]
	// limit is the largest raw ID the key can issue through its stages
	// (its format's permutation, plugins that permute), limitBy what sets
	// it; math.MaxInt64 and "" when only int64 bounds it. See limitOf.
	limit   int64
	limitBy string
}

// retiredErr returns what a retired key answers; nil while it is live.
func (e *entry) retiredErr() error {
	if p := e.retired.Load(); p != nil {
		return *p
	}
	return nil
}

// retire makes the entry answer err from now on (the first retirement's
// error stays).
func (e *entry) retire(err error) { e.retired.CompareAndSwap(nil, &err) }

// checkCount refuses a count of IDs below 1 with an error wrapping
// idforge.ErrInvalidCount.
func checkCount[N int | int64](n N) error {
	if n < 1 {
		return fmt.Errorf("%w: %d (want at least 1)", idforge.ErrInvalidCount, n)
	}
	return nil
}

// resolveInts resolves a key that issues int64 IDs; a key of strings
// (uuidv7, ulid, uuidv4) is an error wrapping idforge.ErrWrongStrategy.
func (i *Issuer) resolveInts(ctx context.Context, key string) (*entry, error) {
	e, err := i.resolve(ctx, key)
	if err != nil {
		return nil, err
	}
	if e.gen == nil {
		return nil, fmt.Errorf("%w: key %q issues %s strings, not integers (use /v1/ids)", idforge.ErrWrongStrategy, key, e.strategy)
	}
	return e, nil
}

// New returns an Issuer over store. snow may be nil, in which case
// snowflake keys answer with an error. The Issuer owns neither: the caller
// closes store and snow after the Issuer.
func New(store idforge.Store, snow *snowflake.Generator, set Settings) *Issuer {
	if set.Logger == nil {
		set.Logger = slog.Default()
	}
	if set.Segment.Logger == nil {
		set.Segment.Logger = set.Logger
	}
	i := &Issuer{store: store, snow: snow, set: set, keys: newKeyMap()}
	if i.definitions() != nil {
		also := set.Segment.Check
		i.set.Segment.Check = func(ctx context.Context, key string) error {
			if err := i.checkClaim(ctx, key); err != nil || also == nil {
				return err
			}
			return also(ctx, key)
		}
	}
	for _, f := range set.Formats {
		i.permutes = i.permutes || f.Permute != nil
	}
	for name, src := range set.Sources {
		i.keys.store(name, i.withLimit(name, &entry{strategy: idforge.StrategySource, gen: BatchOf(src)}))
	}
	i.serials.Store(&map[string]*serialEntry{})
	return i
}

// lookup returns the entry of a key seen before.
func (i *Issuer) lookup(key string) (*entry, bool) {
	return i.keys.load(key)
}

// errNoSnowflake is returned for snowflake keys when the node has no
// generator.
var errNoSnowflake = fmt.Errorf("%w: this node runs no snowflake generator", idforge.ErrUnavailable)

// resolve finds key's generator, looking the key up in the store the first
// time it is seen, so keys created by another node or by hand work without
// a restart.
func (i *Issuer) resolve(ctx context.Context, key string) (*entry, error) {
	if e, ok := i.lookup(key); ok {
		if err := e.retiredErr(); err != nil {
			return nil, err
		}
		return e, nil
	}
	if err := idforge.ValidateKeyName(key); err != nil {
		return nil, err
	}
	k, err := i.store.Key(ctx, key)
	var defined *entry
	if errors.Is(err, idforge.ErrUnknownKey) {
		// Not a key: maybe a source defined through the API.
		defined, err = i.definedSource(ctx, key, err)
	}
	if err != nil {
		return nil, storeErr(err)
	}
	var def keyDef
	if defined == nil {
		if def, err = i.keyDefToServe(ctx, key); err != nil {
			return nil, err
		}
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.closed {
		return nil, idforge.ErrClosed
	}
	e, ok := i.lookup(key)
	if !ok {
		e = defined
		if e == nil {
			if e, err = i.newEntry(ctx, k, def); err != nil {
				return nil, err
			}
			applyKeyDef(key, e, def)
		}
		i.keys.store(key, e)
	}
	if err := e.retiredErr(); err != nil {
		return nil, err
	}
	return e, nil
}

// newEntry builds the generator of a key read from the store, with def,
// its definition. A segment key in an order this node does not know, or
// in global order on a store that cannot keep it, is an error wrapping
// idforge.ErrUnavailable: a node that can may serve it.
func (i *Issuer) newEntry(ctx context.Context, k idforge.Key, def keyDef) (*entry, error) {
	e := &entry{strategy: k.Strategy}
	switch k.Strategy {
	case idforge.StrategySegment:
		set := i.set.Segment
		order, err := idforge.ParseOrder(string(def.order))
		if err != nil {
			return nil, fmt.Errorf("%w: key %q has order %q, which this node does not know", idforge.ErrUnavailable, k.Name, def.order)
		}
		if order == idforge.OrderGlobal {
			if err := i.globalOrder(ctx); err != nil {
				return nil, fmt.Errorf("%w: key %q is in global order, which this node's store cannot keep: %w", idforge.ErrUnavailable, k.Name, err)
			}
			set.Global = true
		}
		e.alloc = segment.New(i.store, k.Name, set)
		e.gen = e.alloc
	case idforge.StrategySnowflake:
		if i.snow == nil {
			return nil, errNoSnowflake
		}
		e.gen = i.snow
	case idforge.StrategyUUIDv7, idforge.StrategyULID, idforge.StrategyUUIDv4:
		kind, err := timeid.ParseKind(string(k.Strategy))
		if err != nil {
			return nil, err
		}
		if e.str, err = timeid.New(kind, timeid.Settings{Clock: i.set.Clock}); err != nil {
			return nil, err
		}
	default:
		// Written by a newer node, or by hand: a node that knows the
		// strategy may serve the key.
		return nil, fmt.Errorf("%w: key %q has strategy %q, which this node does not know", idforge.ErrUnavailable, k.Name, k.Strategy)
	}
	return i.withLimit(k.Name, e), nil
}

// withLimit sets e's limit for key (formats and plugins are fixed for the
// Issuer's life, so it is worked out once per entry).
func (i *Issuer) withLimit(key string, e *entry) *entry {
	e.limit, e.limitBy = i.limitOf(key)
	return e
}

// Refresh re-reads the key catalogue, so that changes made by other nodes
// or by hand reach this node without a restart: new keys are set up, a
// changed stored step becomes the segment allocator's minimum, a key's own
// bounds (UpdateKey) apply, retired keys (RetireKey) stop issuing (their
// buffered segments dropped), and keys removed from the store are dropped
// (their allocators closed).
func (i *Issuer) Refresh(ctx context.Context) error {
	keys, err := i.store.Keys(ctx)
	if err != nil {
		return err
	}
	// Read after the keys: a key's order is written before its row, so
	// every key listed has its order in defs (when known).
	defs, known := i.keyDefs(ctx)
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.closed {
		return idforge.ErrClosed
	}
	inStore := make(map[string]idforge.Key, len(keys))
	for _, k := range keys {
		inStore[k.Name] = k
	}
	current := i.keys.all()
	var (
		removed []*entry
		drop    []string
	)
	for name, e := range current {
		if e.strategy == idforge.StrategySource {
			continue // from the configuration, not the store
		}
		k, ok := inStore[name]
		if !ok || k.Strategy != e.strategy {
			drop = append(drop, name)
			removed = append(removed, e)
			continue
		}
		if e.alloc != nil {
			e.alloc.SetStoredStep(k.Step)
		}
		applyKeyDef(name, e, defs[name])
	}
	i.keys.remove(drop)
	for name, k := range inStore {
		if _, ok := current[name]; ok || !known && k.Strategy == idforge.StrategySegment {
			continue // without definitions, a segment key's order is not known: set up on first use
		}
		if e, err := i.newEntry(ctx, k, defs[name]); err == nil {
			applyKeyDef(name, e, defs[name])
			i.keys.store(name, e)
		}
	}
	for _, e := range removed {
		if e.alloc != nil {
			i.set.Logger.Info("key removed from the store; dropping it", "key", e.alloc.Key())
			e.alloc.Close()
		}
	}
	return nil
}

// RefreshEvery calls Refresh every interval until ctx ends, logging
// failures (the node keeps serving what it knows).
func (i *Issuer) RefreshEvery(ctx context.Context, interval time.Duration) {
	periodic.Run(ctx, interval, i.Refresh, func(err error) {
		if !errors.Is(err, idforge.ErrClosed) {
			i.set.Logger.Warn("refreshing keys from the store failed", "err", err)
		}
	})
}

// Next returns one ID for key.
func (i *Issuer) Next(ctx context.Context, key string) (int64, error) {
	e, err := i.resolveInts(ctx, key)
	if err != nil {
		return 0, err
	}
	return i.one(ctx, key, e)
}

// one draws one ID of e, permuted by the key's format and through the
// plugins when there are any.
func (i *Issuer) one(ctx context.Context, key string, e *entry) (int64, error) {
	if i.set.Plugins.Idle() && i.permutation(key) == nil {
		return e.gen.Next(ctx)
	}
	ids, err := i.many(ctx, key, e.strategy, 1, func() ([]int64, error) { return i.drawN(ctx, key, e, 1) })
	if err != nil {
		return 0, err
	}
	return ids[0], nil
}

// many draws n IDs, permuted by the key's format and through the plugins
// when there are any. Plugins see the permuted IDs: what the caller gets.
func (i *Issuer) many(ctx context.Context, key string, strategy idforge.Strategy, n int, draw func() ([]int64, error)) ([]int64, error) {
	if perm := i.permutation(key); perm != nil {
		raw := draw
		draw = func() ([]int64, error) {
			ids, err := raw()
			if err != nil {
				return nil, err
			}
			return permute(key, perm, ids)
		}
	}
	if i.set.Plugins.Idle() {
		return draw()
	}
	format, _ := ctx.Value(formatKey{}).(string)
	return i.set.Plugins.Run(ctx, plugin.Call{Key: key, Strategy: strategy, Count: n, Format: format}, draw)
}

// formatKey carries the format NextStrings was asked for to the
// plugins' Call.
type formatKey struct{}

// drawN draws up to n raw IDs of e. A segment key's allocator hands out
// only IDs up to e.limit, the most its format and plugins take, and none
// above it (segment.Allocator.NextNBelow): fewer than n when the key runs
// out within the batch, and when nothing is left an error wrapping
// idforge.ErrSpaceExhausted that used up no ID, so an answer that is an
// error consumes nothing. A snowflake key through a permutation narrower
// than its IDs (a plugin set up over it) is refused before drawing. A
// source draws whole; an ID of it past its format's width is drawn and
// lost (a gap, never a duplicate: see permute).
func (i *Issuer) drawN(ctx context.Context, key string, e *entry, n int) ([]int64, error) {
	if e.alloc != nil {
		ids, err := e.alloc.NextNBelow(ctx, n, above(e.limit))
		if err != nil && e.limitBy != "" && errors.Is(err, idforge.ErrSpaceExhausted) {
			return nil, fmt.Errorf("%w: key %q has issued every ID %s takes (up to %d)", idforge.ErrSpaceExhausted, key, e.limitBy, e.limit)
		}
		return ids, err
	}
	if e.strategy == idforge.StrategySnowflake && e.limitBy != "" {
		return nil, fmt.Errorf("%w: key %q: snowflake IDs grow through all %d bits, but %s takes only IDs up to %d",
			idforge.ErrSpaceExhausted, key, obfuscate.MaxBits, e.limitBy, e.limit)
	}
	return e.gen.NextN(ctx, n)
}

// above returns the smallest ID past max, for NextNBelow. No segment key
// issues math.MaxInt64 (idforge.MaxSegmentID is one below it), so it
// stands for "no limit".
func above(max int64) int64 {
	if max >= idforge.MaxSegmentID {
		return math.MaxInt64
	}
	return max + 1
}

// permutation returns the permutation of key's format, nil when it has
// none.
func (i *Issuer) permutation(key string) *obfuscate.Permutation {
	if !i.permutes {
		return nil
	}
	return i.set.Formats[key].Permute
}

// permute maps ids through perm in place. An ID past the permutation's
// width is an error, never a collision: the key has used up the IDs its
// format can show. The error wraps idforge.ErrSpaceExhausted alone: the
// permutation's own error wraps ErrInvalidArgument, which would make the
// key's exhaustion look like a bad request. A segment key never gets
// here with such an ID (drawN stops below the width); a source can.
func permute(key string, perm *obfuscate.Permutation, ids []int64) ([]int64, error) {
	for k, id := range ids {
		v, err := perm.Encode(id)
		if err != nil {
			return nil, fmt.Errorf("%w: key %q: ID %d does not fit its format's %d-bit permutation, which shows IDs up to %d (%v)",
				idforge.ErrSpaceExhausted, key, id, perm.Bits(), perm.Max(), err)
		}
		ids[k] = v
	}
	return ids, nil
}

// NextN returns up to n IDs for key (n ≥ 1), increasing for segment keys
// and k-sorted for snowflake keys. It returns fewer than n only when a
// segment key runs out within the batch, of what its format and plugins
// take or of int64; when none is left it answers an error wrapping
// idforge.ErrSpaceExhausted and uses up no ID. A store that fails
// mid-batch (after part of the batch came from the buffered segment)
// leaves those IDs as a gap: they are never issued again, never twice.
func (i *Issuer) NextN(ctx context.Context, key string, n int) ([]int64, error) {
	return i.manyInts(ctx, key, n, func(e *entry) ([]int64, error) { return i.drawN(ctx, key, e, n) })
}

// manyInts checks a request for n int64 IDs of key and issues them
// through many, drawing them from the key's entry with draw.
func (i *Issuer) manyInts(ctx context.Context, key string, n int, draw func(*entry) ([]int64, error)) ([]int64, error) {
	if err := checkCount(n); err != nil {
		return nil, err
	}
	e, err := i.resolveInts(ctx, key)
	if err != nil {
		return nil, err
	}
	return i.many(ctx, key, e.strategy, n, func() ([]int64, error) { return draw(e) })
}

// NextSegment returns one ID for a segment key; a key of another strategy
// is an error wrapping idforge.ErrWrongStrategy.
func (i *Issuer) NextSegment(ctx context.Context, key string) (int64, error) {
	e, err := i.resolve(ctx, key)
	if err != nil {
		return 0, err
	}
	if e.strategy != idforge.StrategySegment {
		return 0, fmt.Errorf("%w: key %q is a %s key, not a segment key", idforge.ErrWrongStrategy, key, e.strategy)
	}
	return i.one(ctx, key, e)
}

// NextSnowflake returns one ID from the node's snowflake generator. key
// names the call for plugins: Leaf's snowflake endpoint takes any name,
// but not the name of a retired key, which issues nothing more here
// either.
func (i *Issuer) NextSnowflake(ctx context.Context, key string) (int64, error) {
	if i.snow == nil {
		return 0, errNoSnowflake
	}
	if e, ok := i.lookup(key); ok {
		if err := e.retiredErr(); err != nil {
			return 0, err
		}
	}
	return i.one(ctx, key, i.withLimit(key, &entry{strategy: idforge.StrategySnowflake, gen: i.snow}))
}

// Take issues up to n IDs for key without buffering anything: a segment
// key claims exactly n values from the store, fewer when it has fewer
// left that its format and plugins take (then, as NextN, an error
// wrapping idforge.ErrSpaceExhausted when none is left, claiming
// nothing). It suits one-shot processes such as the CLI, which would
// otherwise throw the rest of a segment away.
func (i *Issuer) Take(ctx context.Context, key string, n int) ([]int64, error) {
	return i.manyInts(ctx, key, n, func(e *entry) ([]int64, error) {
		if e.strategy != idforge.StrategySegment {
			return i.drawN(ctx, key, e, n)
		}
		// The raw range: many permutes it and runs the plugins.
		seg, err := i.claimUpTo(ctx, key, e, int64(n))
		if err != nil {
			return nil, err
		}
		// A store of blocks (store/shards) claims more: the rest is a gap.
		seg.End = min(seg.End, seg.Start+int64(n))
		ids := make([]int64, 0, seg.Len())
		for v := seg.Start; v < seg.End; v++ {
			ids = append(ids, v)
		}
		return ids, nil
	})
}

// claimUpTo claims up to n values of segment key e straight from the
// store, all at most e.limit: it reads where the key stands and claims
// no more than fit, so that a key out of room answers an error wrapping
// idforge.ErrSpaceExhausted without claiming. (A claim another node made
// in between can still carry this one past the limit; the part past it
// is left unissued, as no ID there could be shown anyway.)
func (i *Issuer) claimUpTo(ctx context.Context, key string, e *entry, n int64) (idforge.Segment, error) {
	if e.limitBy == "" {
		return i.claim(ctx, key, n)
	}
	k, err := i.store.Key(ctx, key)
	if err != nil {
		return idforge.Segment{}, storeErr(err)
	}
	exhausted := fmt.Errorf("%w: key %q has issued every ID %s takes (up to %d)", idforge.ErrSpaceExhausted, key, e.limitBy, e.limit)
	if k.MaxID > e.limit {
		return idforge.Segment{}, exhausted
	}
	seg, err := i.claim(ctx, key, min(n, e.limit-k.MaxID+1))
	if err != nil {
		return idforge.Segment{}, err
	}
	if seg.Start > e.limit {
		return idforge.Segment{}, exhausted
	}
	seg.End = min(seg.End, e.limit+1)
	return seg, nil
}

// ClaimRange claims n consecutive values of a segment key for the caller
// alone, straight from the store, as Tinyid's clients fetch a segment to
// hand out themselves. Plugins' Before and OnError steps run, and
// RangeAfterer steps see the range. A key of another strategy, a key
// whose format permutes its IDs, or one with a plugin that transforms
// every ID is an error wrapping idforge.ErrWrongStrategy: a range handed
// out whole would bypass the permutation, and its raw values could
// collide with the key's permuted IDs. So is a key in global order,
// whose values the range's holder would issue after other nodes issued
// higher ones.
func (i *Issuer) ClaimRange(ctx context.Context, key string, n int64) (idforge.Segment, error) {
	if err := checkCount(n); err != nil {
		return idforge.Segment{}, err
	}
	if perm := i.permutation(key); perm != nil {
		return idforge.Segment{}, fmt.Errorf("%w: key %q permutes its IDs (format %s), so they cannot be handed out as a range; ask for IDs instead",
			idforge.ErrWrongStrategy, key, i.set.Formats[key])
	}
	if e, err := i.resolve(ctx, key); err != nil {
		return idforge.Segment{}, err
	} else if e.alloc != nil && e.alloc.Global() {
		return idforge.Segment{}, fmt.Errorf("%w: key %q is in global order: a range handed out whole would be issued by its holder after IDs other nodes issue later; ask for IDs instead",
			idforge.ErrWrongStrategy, key)
	}
	if i.set.Plugins.Idle() {
		return i.claim(ctx, key, n)
	}
	return i.set.Plugins.RunRange(ctx, plugin.Call{Key: key, Strategy: idforge.StrategySegment, Count: int(min(n, math.MaxInt32))},
		func() (idforge.Segment, error) { return i.claim(ctx, key, n) })
}

// claim takes n values of a segment key straight from the store.
func (i *Issuer) claim(ctx context.Context, key string, n int64) (idforge.Segment, error) {
	e, err := i.resolve(ctx, key)
	if err != nil {
		return idforge.Segment{}, err
	}
	if e.strategy != idforge.StrategySegment {
		return idforge.Segment{}, fmt.Errorf("%w: key %q is a %s key, not a segment key", idforge.ErrWrongStrategy, key, e.strategy)
	}
	seg, err := i.store.ClaimSegment(ctx, key, n)
	if err != nil {
		return idforge.Segment{}, storeErr(err)
	}
	return seg, nil
}

// Defaults for segment keys created without a step or a start.
const (
	DefaultStep  = 1000
	DefaultStart = 1
)

// WithDefaults returns the key a definition means: strategy segment when
// none is given and, for a segment key, step DefaultStep, start (MaxID,
// the first ID) DefaultStart where they are 0, and order
// idforge.OrderNode where it is empty. Every path that defines a
// key applies it (the HTTP and gRPC APIs, the CLI, the configuration
// file), so one definition makes the same key whichever way it arrives. A
// 0 means the default rather than an error because not every path can
// tell a field left out from one set to 0: a TOML file and a CLI flag
// cannot, nor can a JSON body decoded without pointers.
func WithDefaults(k idforge.Key) idforge.Key {
	if k.Strategy == "" {
		k.Strategy = idforge.StrategySegment
	}
	if k.Strategy == idforge.StrategySegment {
		k.Order = cmp.Or(k.Order, idforge.OrderNode)
		if k.Step == 0 {
			k.Step = DefaultStep
		}
		if k.MaxID == 0 {
			k.MaxID = DefaultStart
		}
	}
	return k
}

// A stage is a permutation every integer ID of a key goes through, within
// bits bits: the key's format (its feistel stage), then each plugin that
// permutes (plugin.Widths), in the order they run. A stage takes only IDs
// up to 2^bits − 1, and gives out IDs anywhere in that range.
type stage struct {
	by   string // for messages: "its format feistel:bits=20+base62", "plugin obfuscate (20 bits)"
	bits int
	set  string // how a width is written, for the fix: "feistel:bits=%d", "bits = %d"
}

func (s stage) max() int64 { return int64(uint64(1)<<s.bits - 1) }

// widen says how to give s the width bits.
func (s stage) widen(bits int) string { return fmt.Sprintf(s.set, bits) }

// stagesOf lists the stages of a key with format (nil: none) and plugins.
func stagesOf(format *obfuscate.Format, plugins []plugin.Width) []stage {
	var out []stage
	if format != nil && format.Bits() > 0 {
		out = append(out, stage{by: "its format " + format.String(), bits: format.Bits(), set: "use feistel:bits=%d"})
	}
	for _, p := range plugins {
		out = append(out, stage{by: fmt.Sprintf("plugin %s (%d bits)", p.Plugin, p.Bits), bits: p.Bits, set: "give it bits = %d"})
	}
	return out
}

// formatOf returns the configured format of key, nil when it has none.
func (i *Issuer) formatOf(key string) *obfuscate.Format {
	if f, ok := i.set.Formats[key]; ok {
		return &f
	}
	return nil
}

// limitOf returns the largest raw ID key can issue through its stages and
// the stage that sets it; math.MaxInt64 and "" when no stage limits it.
// The first stage sees the raw IDs, and CheckKey holds the later ones at
// least as wide, so the narrowest stage is the limit either way.
func (i *Issuer) limitOf(key string) (int64, string) {
	limit, by := int64(math.MaxInt64), ""
	for _, s := range stagesOf(i.formatOf(key), i.set.Plugins.Widths(key)) {
		if s.max() < limit {
			limit, by = s.max(), s.by
		}
	}
	return limit, by
}

// CheckKey reports whether k can be defined with format, the form its IDs
// are shown in (nil when it has none), and plugins, the plugins that
// apply to it and permute its IDs within a fixed width (in the order they
// run; plugin.Chain.Widths): idforge.Key.Validate's rules, and, so that
// no key is created whose IDs its stages cannot take, a segment key's
// first segment within what the first stage takes (2^bits − 1 for a
// feistel format or an obfuscate plugin of bits bits), every later stage
// at least as wide as the one before it (whose IDs spread over its whole
// width), a snowflake key only through stages of all 63 bits (its IDs
// grow with time through the whole int64 range), and no format at all
// for uuidv7, ulid and uuidv4 keys, which issue strings (and which
// plugins that permute integers do not see). Errors wrap idforge.ErrInvalidKey or
// idforge.ErrInvalidArgument and say what fits. Every path that defines a
// key (the HTTP and gRPC APIs, the CLI, the configuration file) comes
// through it, and so does every key the configuration declares each time
// a node starts, so that a plugin set up over an existing key is checked
// against it.
func CheckKey(k idforge.Key, format *obfuscate.Format, plugins ...plugin.Width) error {
	if err := k.Validate(); err != nil {
		return err
	}
	if k.Strategy.IssuesStrings() {
		if format != nil {
			return fmt.Errorf("%w: key %q: %s keys issue strings and take no format", idforge.ErrInvalidArgument, k.Name, k.Strategy)
		}
		return nil
	}
	stages := stagesOf(format, plugins)
	if len(stages) == 0 {
		return nil
	}
	for j := 1; j < len(stages); j++ {
		if prev, s := stages[j-1], stages[j]; s.bits < prev.bits {
			return fmt.Errorf("%w: key %q: %s permutes the IDs %s gives out over %d bits, and takes only %d: some would not fit; %s or more",
				idforge.ErrInvalidArgument, k.Name, s.by, prev.by, prev.bits, s.bits, s.widen(prev.bits))
		}
	}
	first := stages[0]
	if k.Strategy == idforge.StrategySnowflake {
		if first.bits != obfuscate.MaxBits {
			return fmt.Errorf("%w: key %q: snowflake IDs grow through all %d bits, but %s permutes only %d; %s",
				idforge.ErrInvalidArgument, k.Name, obfuscate.MaxBits, first.by, first.bits, first.widen(obfuscate.MaxBits))
		}
		return nil
	}
	if err := k.ValidateUpTo(first.max()); err != nil {
		return fmt.Errorf("%w: %s takes no ID above that", err, first.by)
	}
	return nil
}

// CreateKey adds a key to the store; see CheckKey for the rules, applied
// with the key's configured format and the plugins that apply to it. A
// segment key's order is recorded in its definition before its row is
// created (see KindKey).
//
// The name of a retired key (RetireKey) is refused with an error wrapping
// idforge.ErrKeyExists that says so, and so is a name being created in
// another order; global order on a store that cannot keep it
// (idforge.GlobalOrderStore) is an error wrapping
// idforge.ErrInvalidArgument that says why.
func (i *Issuer) CreateKey(ctx context.Context, k idforge.Key) error {
	if err := CheckKey(k, i.formatOf(k.Name), i.set.Plugins.Widths(k.Name)...); err != nil {
		return err
	}
	def, err := i.readKeyDef(ctx, k.Name)
	if err != nil && !noDefinitions(err) {
		return storeErr(err)
	}
	if def.retired {
		return retiredNameErr(k.Name)
	}
	if k.Strategy == idforge.StrategySegment {
		if err := i.recordOrder(ctx, k, def, err == nil && i.definitions() != nil); err != nil {
			return err
		}
	}
	if err := i.store.CreateKey(ctx, k); err != nil {
		return storeErr(err)
	}
	return nil
}

// EnsureKey creates k unless a key of that name exists. An existing key of
// another strategy or order is an error wrapping idforge.ErrKeyExists; an
// existing key of the same strategy and order is left as it is (its
// stored step and max_id win over k's).
func (i *Issuer) EnsureKey(ctx context.Context, k idforge.Key) error {
	err := i.CreateKey(ctx, k)
	if !errors.Is(err, idforge.ErrKeyExists) {
		return err
	}
	have, err := i.store.Key(ctx, k.Name)
	if err != nil {
		return err
	}
	if have.Strategy != k.Strategy {
		return fmt.Errorf("%w: key %q is declared as %s but the store holds it as %s", idforge.ErrKeyExists, k.Name, k.Strategy, have.Strategy)
	}
	if k.Strategy != idforge.StrategySegment {
		return nil
	}
	def, err := i.keyDefToServe(ctx, k.Name)
	if err != nil {
		return err
	}
	if want, stored := cmp.Or(k.Order, idforge.OrderNode), cmp.Or(def.order, idforge.OrderNode); want != stored {
		return fmt.Errorf("%w: key %q is declared in %s order but the store holds it in %s order", idforge.ErrKeyExists, k.Name, want, stored)
	}
	return nil
}

// KeyState is a key with the live state of its generator on this node.
type KeyState struct {
	idforge.Key
	// Segment is the allocator's state for a segment key this node has
	// issued from; nil otherwise.
	Segment *segment.Stats
	// Format is the key's configured string form ("" = decimal).
	Format string
	// Plugins names the plugins run around the key's issues, in order.
	Plugins []string
	// Retired says that the key was retired (RetireKey).
	Retired bool
	// Bounds are the key's own adaptive-step bounds (UpdateKey); zero
	// values fall back to the node's.
	Bounds KeyBounds
	// Source is a source key's status when the source reports one.
	Source *sequence.Status
}

// storeErr passes on a store's failure as idforge.BackendError does: one
// that says nothing about the request becomes idforge.ErrUnavailable, so
// transports answer "try later", not "bug".
func storeErr(err error) error { return idforge.BackendError(err) }

// Keys lists every key in the store with this node's state for it.
func (i *Issuer) Keys(ctx context.Context) ([]KeyState, error) {
	keys, err := i.store.Keys(ctx)
	if err != nil {
		return nil, storeErr(err)
	}
	defs, _ := i.keyDefs(ctx)
	sources, err := i.sourceKeys(ctx)
	if err != nil {
		return nil, storeErr(err)
	}
	out := make([]KeyState, len(keys), len(keys)+len(sources))
	for n, k := range keys {
		out[n] = i.state(k, defs[k.Name])
	}
	out = append(out, sources...)
	sort.Slice(out, func(a, b int) bool { return out[a].Name < out[b].Name })
	return out, nil
}

// Key returns one key with this node's state for it, or an error wrapping
// idforge.ErrUnknownKey.
func (i *Issuer) Key(ctx context.Context, name string) (KeyState, error) {
	if err := idforge.ValidateKeyName(name); err != nil {
		return KeyState{}, err
	}
	k, err := i.store.Key(ctx, name)
	if err != nil {
		return KeyState{}, storeErr(err)
	}
	return i.state(k, i.keyDefOrNone(ctx, name)), nil
}

// Active returns the live keys this node has set up, with their live
// state, without asking the store: cheap enough for every metrics scrape.
// A retired key is not active: it counts in no readiness and exports no
// metrics.
func (i *Issuer) Active() []KeyState {
	m := i.keys.all()
	out := make([]KeyState, 0, len(m))
	for name, e := range m {
		if e.retiredErr() != nil {
			continue
		}
		st := KeyState{Key: idforge.Key{Name: name, Strategy: e.strategy}}
		if e.alloc != nil {
			if stats := e.alloc.Stats(); used(stats) {
				st.Segment = &stats
			}
		}
		out = append(out, st)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Name < out[b].Name })
	return out
}

func (i *Issuer) state(k idforge.Key, def keyDef) KeyState {
	if k.Strategy == idforge.StrategySegment {
		k.Order = cmp.Or(def.order, idforge.OrderNode)
	}
	st := KeyState{Key: k, Format: i.Format(k.Name), Plugins: i.set.Plugins.For(k.Name, k.Strategy), Retired: def.retired, Bounds: def.bounds}
	if e, ok := i.lookup(k.Name); ok && e.alloc != nil {
		if stats := e.alloc.Stats(); used(stats) {
			st.Segment = &stats
		}
	}
	return st
}

// used reports whether a segment key's allocator has been asked for IDs:
// a key Refresh set up but nobody used has no state to report, counts in
// no readiness and exports no metrics, however many such keys there are.
func used(st segment.Stats) bool {
	return st.Loads > 0 || st.Waits > 0 || st.Failures > 0 || st.Issued > 0
}

// Plugins describes the plugin chain every issue runs through, in order
// (plugin.Chain.Describe): each plugin with the keys it is limited to,
// and how refusals are handled (nil when the chain's handler is not
// described). KeyState.Plugins names those of one key.
func (i *Issuer) Plugins() ([]string, *plugin.Rejections) { return i.set.Plugins.Describe() }

// Snowflake returns the node's snowflake generator, nil when it has none.
func (i *Issuer) Snowflake() *snowflake.Generator { return i.snow }

// Ready reports whether the store answers.
func (i *Issuer) Ready(ctx context.Context) error {
	if err := i.store.Ping(ctx); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	return nil
}

// Readiness levels.
const (
	// Ready: the store answers.
	Ready = "ready"
	// Degraded: the store fails, but every segment key this node has
	// issued from still has IDs buffered.
	Degraded = "degraded"
	// Unavailable: the store fails and some key has nothing buffered (or
	// the node has issued from no segment key yet), a source is down, or
	// the snowflake generator refuses to issue.
	Unavailable = "unavailable"
)

// Readiness is what /readyz and the gRPC health service report.
type Readiness struct {
	// Status is Ready, Degraded or Unavailable.
	Status string
	// StoreErr is the store's answer to a ping, nil when it answered.
	StoreErr error
	// Keys holds the segment keys this node has issued from.
	Keys []KeyState
	// Sources holds the sequence sources that are not up: one degraded
	// makes the node Degraded, one down Unavailable.
	Sources []SourceStatus
	// Snowflake is why the snowflake generator refuses to issue now
	// (snowflake.Generator.Refusing: the clock is behind what it issued
	// beyond the allowed wait, or its worker ID's lease is lost), which
	// makes the node Unavailable, as Leaf takes such a node out of
	// service; nil while it issues.
	Snowflake error
}

// CanServe reports whether the status is Ready or Degraded.
func (r Readiness) CanServe() bool { return r.Status != Unavailable }

// Readiness pings the store and weighs the answer against the buffers.
func (i *Issuer) Readiness(ctx context.Context) Readiness {
	r := Readiness{Status: Ready, StoreErr: i.Ready(ctx)}
	dry := false
	for _, k := range i.Active() {
		if k.Segment != nil {
			r.Keys = append(r.Keys, k)
			dry = dry || k.Segment.Buffered == 0
		}
	}
	if r.StoreErr != nil {
		r.Status = Degraded
		if dry || len(r.Keys) == 0 {
			r.Status = Unavailable
		}
	}
	i.weighSources(&r)
	if i.snow != nil {
		if r.Snowflake = i.snow.Refusing(); r.Snowflake != nil {
			r.Status = Unavailable
		}
	}
	return r
}

// Close stops every allocator, each handing its unused range back to the
// store when the store supports it and nobody claimed after it (see
// segment.Allocator.Close). It does not close the store or the generator.
func (i *Issuer) Close() error {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.closed {
		return nil
	}
	i.closed = true
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for _, e := range i.keys.all() {
		if e.alloc == nil {
			continue
		}
		wg.Go(func() {
			if err := e.alloc.Close(); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
