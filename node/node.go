// Package node assembles an idforge node: everything an idforge process
// issues from, opened in order from plain Settings and closed in reverse.
// The idforge command opens one for its server and its one-shot commands;
// a program that embeds idforge opens one the same way and issues from
// Issuer:
//
//	n, err := node.Open(ctx, node.Settings{
//		DataDir: "/var/lib/idforge",
//		Keys:    []node.Key{{Key: idforge.Key{Name: "order"}}}, // created unless there
//	})
//	…
//	defer n.Close()
//	ids, err := n.Issuer().TakeStrings(ctx, "order", 10)
//
// A node holds its data directory (locked: one process at a time), the
// store, a worker ID leased from its provider and kept across lost
// leases (worker.Supervise), the snowflake generator on that ID, the
// configured sequence sources and counters (and those defined through the
// API, kept in the store: opened on first use, re-checked every
// Settings.RecheckDefinitions), key formats and plugins, and the issuer
// over them with its metrics. Only the backends, sources and
// coordinators a program links are known: import store/all, sequence/all
// and worker/all for every one, as the command does.
package node

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/datadir"
	"github.com/idforge/idforge/internal/dsn"
	"github.com/idforge/idforge/internal/errctx"
	"github.com/idforge/idforge/internal/fingerprint"
	"github.com/idforge/idforge/issuer"
	"github.com/idforge/idforge/metrics"
	"github.com/idforge/idforge/plugin"
	"github.com/idforge/idforge/quota"
	"github.com/idforge/idforge/segment"
	"github.com/idforge/idforge/snowflake"
	"github.com/idforge/idforge/store"
	"github.com/idforge/idforge/worker"
)

// Settings configure a node. Only DataDir is required; every other zero
// value means the default given.
type Settings struct {
	// DataDir is the node's data directory: its lock, snowflake time
	// fence, worker-ID file and (by default) its SQLite database. It is
	// created when missing.
	DataDir string
	// Store is the store URL (store.Open). Empty means SQLite in DataDir
	// (DefaultStoreURL).
	Store string
	// OpenStore opens Store. Nil means store.Open; the idforge command
	// passes one that also says how to create a database that does not
	// exist.
	OpenStore func(ctx context.Context, url string, opts store.Options) (idforge.Store, error)
	// Worker names the worker-ID provider (worker.Open): a number, a
	// file, or a coordinator that leases one. Empty means the file
	// worker-id in DataDir.
	Worker string
	// Owner identifies the node to a worker-ID coordinator, as "host:port"
	// of its listener (worker.Options.Owner).
	Owner string
	// Layout is the snowflake layout, a preset name or a spec
	// (snowflake.ParseLayout). Empty means "twitter".
	Layout string
	// Datacenter, MaxBackwardWait, MaxBorrow and Drift configure the
	// snowflake generator as the fields of snowflake.Settings of those
	// names do.
	Datacenter      int64
	MaxBackwardWait time.Duration
	MaxBorrow       time.Duration
	Drift           bool
	// Segment tunes every segment key's allocator; zero values are the
	// segment package's defaults. A nil Logger means Logger; the node's
	// metrics see every claim (before OnClaim, when set).
	Segment segment.Settings
	// Keys are created at Open when the store lacks them, and refused
	// when it holds them otherwise (issuer.EnsureKey). A key's zero
	// strategy, step and start mean the defaults (issuer.WithDefaults).
	Keys []Key
	// Sources are named sequence sources (package sequence), usable as
	// keys and from serial templates.
	Sources []Source
	// Counters are named per-period counters for serial templates.
	Counters []Counter
	// RecheckDefinitions is how often the node re-reads the sources and
	// counters defined through the API that it serves, so that one
	// retired on another node stops here too. Zero means DefaultRecheck.
	RecheckDefinitions time.Duration
	// Serials are serial-number definitions, each compiled at Open: a bad
	// template or a missing source is an error of Open.
	Serials []idforge.Serial
	// Plugins run around every issue of IDs (plugin.Build).
	Plugins []plugin.Config
	// Rejections say what the node does besides refusing when a plugin
	// (a quota, say) refuses a call: log it, count it, for which keys.
	// The zero value only refuses.
	Rejections plugin.Rejections
	// Quotas are the config file's quotas (package quota); those defined
	// through the API live in the store. The quota plugin runs first.
	Quotas []quota.Spec
	// Tokens names the API tokens the node's servers accept
	// (auth.Config.Names); a quota limited to another token is refused,
	// as it would never apply. None means the node checks no tokens.
	Tokens []string
	// Logger receives the node's log lines. Nil means slog.Default().
	Logger *slog.Logger
	// MetricsPerKey is metrics.Options.PerKey: how many segment keys get
	// their own series (0 the default, negative none).
	MetricsPerKey int
	// Getenv reads the environment variables that secrets name
	// ("env:VARNAME" in Key.FormatKey and plugin keys). Nil means
	// os.Getenv.
	Getenv func(string) string
}

// Key declares a key, with how its IDs are shown.
type Key struct {
	idforge.Key
	// Format is how the key's IDs are shown as strings
	// (obfuscate.ParseFormat): e.g. "base62:min=8", or
	// "feistel:bits=40+base62:min=7" to hide order and volume.
	Format string
	// FormatKey is the permutation's key when Format has a feistel stage:
	// "env:VARNAME" (recommended) or the key itself, 16 bytes or more.
	FormatKey string
}

// Source declares a sequence source: one URL (sequence.Open), or 2^n
// URLs balanced as v << n | index (compose.OpenBalanced), optionally
// expanded in memory by Expand bits (compose.NewExpanded); or date-packed
// numbers (the Redis order-number scheme, sequence.OpenDatePacked) of
// the counter DatePacked names, with Bits count bits.
type Source struct {
	Name    string
	URL     string
	Balance []string
	// DatePacked is a counter URL (as a [[counters]] url; its tz= is
	// required, name= defaults to the source's name and dir= to the
	// node's counters directory, cap= to 2^Bits − 1) whose counts the
	// source packs with their period: (yyMMddHHmmss << Bits) | count for
	// a counter per second.
	DatePacked string
	Bits       int
	// RescueAfter, SlowThreshold, SlowCount and SlowWindow tune Balance
	// (compose.BalancedOptions); zero values are compose's defaults, those
	// of JD's logistics serial-number platform (5m, 200ms, 3, 60s).
	RescueAfter   time.Duration
	SlowThreshold time.Duration
	SlowCount     int
	SlowWindow    time.Duration
	// Expand hands out v << Expand | 0…2^Expand−1 for every value v.
	Expand int
}

// Counter declares a per-period counter by URL (sequence.OpenCounter).
// Its mark file goes to <DataDir>/counters unless the URL says dir=.
type Counter struct {
	Name string
	URL  string
}

// Node is an open idforge node. Its methods are safe for concurrent use.
type Node struct {
	log      *slog.Logger
	dir      *datadir.Dir
	storeURL string
	store    idforge.Store
	provider worker.Provider
	snow     *snowflake.Generator
	lease    *worker.Supervisor
	issuer   *issuer.Issuer
	quotas   *quota.Manager
	metrics  *metrics.Metrics
	closers  []io.Closer // sources, counters, plugin files: closed first to last
	// fingerprints are the definitions verified at Open, recorded once
	// it has opened everything (see checkFingerprints).
	fingerprints []fingerprint.Def
	// chain is the plugin chain every issue runs through.
	chain *plugin.Chain

	closeOnce sync.Once
	closeErr  error
}

// Open opens a node: the data directory, the store, a worker ID and the
// snowflake generator on it, the sources and counters, the key formats
// and plugins, then the issuer, which creates the configured keys and
// compiles the serials. On failure everything opened so far is closed.
// Errors in the settings wrap idforge.ErrInvalidArgument (or the
// sentinel of what is invalid: a key name, a layout, a worker ID the
// layout cannot hold); the others are those of what failed to open.
func Open(ctx context.Context, s Settings) (_ *Node, err error) {
	if s.DataDir == "" {
		return nil, fmt.Errorf("%w: node: no data directory", idforge.ErrInvalidArgument)
	}
	s.Logger = cmp.Or(s.Logger, slog.Default())
	if s.Getenv == nil {
		s.Getenv = os.Getenv
	}
	if s.OpenStore == nil {
		s.OpenStore = store.Open
	}
	// A key declared here means what the same declaration means in the
	// configuration file or the API: strategy segment, step and start
	// by default.
	s.Keys = slices.Clone(s.Keys)
	for i := range s.Keys {
		s.Keys[i].Key = issuer.WithDefaults(s.Keys[i].Key)
	}
	n := &Node{log: s.Logger, metrics: metrics.NewWithOptions(metrics.Options{PerKey: s.MetricsPerKey})}
	defer func() {
		if err != nil {
			n.Close()
		}
	}()
	if n.dir, err = datadir.Open(s.DataDir); err != nil {
		return nil, err
	}
	n.storeURL = cmp.Or(s.Store, DefaultStoreURL(n.dir.Path()))
	if n.store, err = s.OpenStore(ctx, n.storeURL, store.Options{DataDir: n.dir.Path(), Logger: s.Logger}); err != nil {
		return nil, err
	}
	layout, err := snowflake.ParseLayout(cmp.Or(s.Layout, "twitter"))
	if err != nil {
		return nil, err
	}
	if err := n.checkFingerprints(ctx, s); err != nil {
		return nil, err
	}
	if err := n.openSnowflake(ctx, s, layout); err != nil {
		return nil, err
	}
	set := issuer.Settings{Logger: s.Logger, Serials: s.Serials, Segment: s.Segment}
	if set.Sources, set.Counters, err = n.openSequences(ctx, s); err != nil {
		return nil, err
	}
	defs := newCatalog(n.store, s, n.metrics, n.dir.Path())
	n.closers = append([]io.Closer{defs}, n.closers...)
	set.Definitions = defs
	if set.Formats, err = keyFormats(s); err != nil {
		return nil, err
	}
	lim := quota.NewLimiter(nil)
	n.closers = append(n.closers, lim)
	if n.quotas, err = quota.NewManager(ctx, lim, n.store, s.Quotas, s.Tokens, s.Logger); err != nil {
		return nil, err
	}
	if n.chain, err = n.plugins(s, lim); err != nil {
		return nil, err
	}
	set.Plugins = n.chain
	set.Segment.Logger = cmp.Or(set.Segment.Logger, s.Logger)
	set.Segment.OnClaim = n.metrics.OnClaim
	if also := s.Segment.OnClaim; also != nil {
		set.Segment.OnClaim = func(key string, took time.Duration, err error) {
			n.metrics.OnClaim(key, took, err)
			also(key, took, err)
		}
	}
	n.issuer = issuer.New(n.store, n.snow, set)
	n.metrics.Observe(n.issuer)
	for _, k := range s.Keys {
		if err := n.issuer.EnsureKey(ctx, k.Key); err != nil {
			return nil, errctx.In(err, "config key %q", k.Name)
		}
	}
	// Compile every configured serial now: a bad template or a missing
	// source is a start-up error, not a surprise at the first request.
	for _, d := range s.Serials {
		if _, err := n.issuer.Compile(ctx, d); err != nil {
			return nil, errctx.In(err, "config serial %q", d.Name)
		}
	}
	if err := n.recordFingerprints(ctx); err != nil {
		return nil, err
	}
	return n, nil
}

// openSnowflake acquires a worker ID for the layout, builds the generator
// on it and starts supervising the lease.
func (n *Node) openSnowflake(ctx context.Context, s Settings, layout snowflake.Layout) (err error) {
	n.provider, err = worker.Open(ctx, s.Worker, worker.Options{DataDir: n.dir.Path(), Logger: s.Logger, Owner: s.Owner})
	if err != nil {
		return err
	}
	lease, err := n.provider.Acquire(ctx, layout.MaxWorker())
	if err != nil {
		return errctx.In(err, "%s", n.provider.Describe())
	}
	n.log.Info("worker ID assigned", "worker", lease.ID(), "from", n.provider.Describe(), "owner", s.Owner,
		"valid_until", fmtTime(lease.ValidUntil()), "earlier_holder_last", fmtTime(lease.LastTime()))
	if s.Worker == "" && sharedStore(n.storeURL) {
		// Not silent: the default is a guess that only one node makes.
		n.log.Warn("the snowflake worker ID comes from this node's data directory (chosen at random when first needed), "+
			"but the store is shared: nodes that share it may hold the same worker ID and issue duplicate snowflake IDs; "+
			"give each node its own (worker = a number) or a coordinator (worker = etcd://, zk://, redis:// or mysql:// / postgres://)",
			"worker", lease.ID(), "store", dsn.RedactedString(n.storeURL))
	}
	n.snow, err = snowflake.New(snowflake.Settings{
		Layout:          layout,
		Datacenter:      s.Datacenter,
		Worker:          lease.ID(),
		MaxBackwardWait: s.MaxBackwardWait,
		MaxBorrow:       s.MaxBorrow,
		Drift:           s.Drift,
		NotBefore:       lease.LastTime(),
		Guard:           lease,
		Fence:           n.dir.TimeFence(),
		Logger:          s.Logger,
	})
	if err != nil {
		lease.Release(context.Background())
		return err
	}
	n.lease = worker.Supervise(n.provider, layout.MaxWorker(), lease, generator{n.snow}, worker.WithLogger(s.Logger))
	return nil
}

// generator is the snowflake generator as the worker.Target it issues for.
type generator struct{ *snowflake.Generator }

var _ worker.Target = generator{}

func (g generator) Bind(l worker.Lease) error { return g.Rebind(l.ID(), l.LastTime(), l) }

// plugins builds the configured plugin chain, behind the quota limiter.
func (n *Node) plugins(s Settings, lim *quota.Limiter) (*plugin.Chain, error) {
	env := plugin.Env{Logger: s.Logger, Metrics: n.metrics.Registerer(), Dir: n.dir.Path(),
		Secret: func(v string) ([]byte, error) { return secret(v, s.Getenv) }}
	ps := []plugin.Plugin{lim}
	for _, c := range s.Plugins {
		p, closer, err := plugin.Build(c, env)
		if err != nil {
			return nil, err
		}
		if closer != nil {
			n.closers = append(n.closers, closer)
		}
		ps = append(ps, p)
	}
	return plugin.BuildChain(s.Rejections, env, ps...)
}

// Quotas returns the node's quotas: the config file's and the store's.
func (n *Node) Quotas() *quota.Manager { return n.quotas }

// Issuer returns the issuer every ID, key and serial goes through.
func (n *Node) Issuer() *issuer.Issuer { return n.issuer }

// Snowflake returns the snowflake generator.
func (n *Node) Snowflake() *snowflake.Generator { return n.snow }

// WorkerSource says where the snowflake worker ID came from (the
// provider's Describe: its URL, or the address and bits of an ip:// ID),
// for /v1/node; "" before one was acquired.
func (n *Node) WorkerSource() string {
	if n.provider == nil {
		return ""
	}
	return n.provider.Describe()
}

// Metrics returns the node's metrics, for /metrics.
func (n *Node) Metrics() *metrics.Metrics { return n.metrics }

// Dir returns the absolute path of the data directory.
func (n *Node) Dir() string { return n.dir.Path() }

// StoreURL returns the URL of the store opened (Settings.Store or the
// default), password included: redact it before it is shown.
func (n *Node) StoreURL() string { return n.storeURL }

// Close shuts the node down in reverse order, once; later calls return
// the first call's error. The snowflake generator closes before its
// worker ID is given back, and before the data directory unlocks, so that
// its final time fence is on disk before another process can take over
// the directory.
func (n *Node) Close() error {
	n.closeOnce.Do(func() {
		var errs []error
		if n.issuer != nil {
			errs = append(errs, n.issuer.Close())
		}
		if n.snow != nil {
			errs = append(errs, n.snow.Close())
		}
		if n.lease != nil {
			errs = append(errs, n.lease.Close())
		}
		if c, ok := n.provider.(io.Closer); ok {
			errs = append(errs, c.Close())
		}
		for _, c := range n.closers {
			errs = append(errs, c.Close())
		}
		if n.store != nil {
			errs = append(errs, n.store.Close())
		}
		if n.dir != nil {
			errs = append(errs, n.dir.Close())
		}
		n.closeErr = errors.Join(errs...)
	})
	return n.closeErr
}

// DefaultStoreURL is the store of a node given none: the SQLite database
// idforge.db in its data directory.
func DefaultStoreURL(dataDir string) string {
	if abs, err := filepath.Abs(dataDir); err == nil {
		dataDir = abs
	}
	return "sqlite://" + filepath.Join(dataDir, "idforge.db")
}

// sharedStore reports whether a store URL names a database other nodes
// can use too (anything but a SQLite file or memory).
func sharedStore(storeURL string) bool {
	scheme, _, _ := strings.Cut(storeURL, ":")
	return scheme != "sqlite" && scheme != "memory" && scheme != ""
}

// fmtTime formats a lease's time for the log; "-" when there is none.
func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339Nano)
}
