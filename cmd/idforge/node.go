package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/datadir"
	"github.com/idforge/idforge/internal/dsn"
	"github.com/idforge/idforge/issuer"
	"github.com/idforge/idforge/metrics"
	"github.com/idforge/idforge/obfuscate"
	"github.com/idforge/idforge/plugin"
	"github.com/idforge/idforge/segment"
	"github.com/idforge/idforge/sequence"
	_ "github.com/idforge/idforge/sequence/all" // register every source and counter
	"github.com/idforge/idforge/sequence/compose"
	"github.com/idforge/idforge/snowflake"
	"github.com/idforge/idforge/store"
	_ "github.com/idforge/idforge/store/all" // register every backend
	"github.com/idforge/idforge/worker"
	_ "github.com/idforge/idforge/worker/all" // register every coordinator
)

// node is everything an idforge process issues from: the locked data
// directory, the store, the worker ID, the snowflake generator and the
// issuer over them. The server and the embedded CLI commands both open one.
type node struct {
	cfg     Config
	log     *slog.Logger
	getenv  func(string) string
	dir     *datadir.Dir
	store   idforge.Store
	snow    *snowflake.Generator
	issuer  *issuer.Issuer
	metrics *metrics.Metrics

	closers []io.Closer // sequence sources and counters

	provider  worker.Provider
	maxWorker int64
	leaseMu   sync.Mutex
	lease     worker.Lease
	stopLease chan struct{}
	leaseWG   sync.WaitGroup
	closeOnce sync.Once
}

func (n *node) setLease(l worker.Lease) {
	n.leaseMu.Lock()
	defer n.leaseMu.Unlock()
	n.lease = l
}

func (n *node) currentLease() worker.Lease {
	n.leaseMu.Lock()
	defer n.leaseMu.Unlock()
	return n.lease
}

// leaseReport is how often the newest issued time goes to the lease, for
// the coordinator.
const leaseReport = time.Second

// superviseLease feeds the newest issued time to the worker-ID lease and,
// when a lease is lost (renewals failed, or the process was frozen past
// it), acquires a new one and rebinds the generator to it. Until then the
// generator refuses to issue (ErrLeaseLost): never an ID with a worker ID
// another node may hold.
func (n *node) superviseLease() {
	defer n.leaseWG.Done()
	tick := time.NewTicker(leaseReport)
	defer tick.Stop()
	for {
		lease := n.currentLease()
		select {
		case <-n.stopLease:
			return
		case <-tick.C:
			lease.Report(n.snow.LastIssued())
			continue
		case <-lease.Done():
		}
		n.log.Error("worker ID lease lost; snowflake IDs are refused until a new one is acquired", "worker", lease.ID())
		lease.Release(context.Background())
		backoff := 100 * time.Millisecond
		for {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			next, err := n.provider.Acquire(ctx, n.maxWorker)
			cancel()
			if err == nil {
				if err = n.snow.Rebind(next.ID(), next.LastTime(), next); err == nil {
					n.setLease(next)
					n.log.Info("worker ID re-acquired", "worker", next.ID(), "valid_until", fmtTime(next.ValidUntil()))
					break
				}
				next.Release(context.Background())
			}
			n.log.Warn("re-acquiring a worker ID failed; retrying", "err", err, "retry_in", backoff)
			select {
			case <-n.stopLease:
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 5*time.Second)
		}
	}
}

// openSequences opens the configured sources and counters. A counter's
// mark file goes to <data>/counters unless its URL says dir=.
func (n *node) openSequences(ctx context.Context, cfg Config) (map[string]idforge.Generator, map[string]idforge.PeriodCounter, error) {
	sources := map[string]idforge.Generator{}
	for _, sc := range cfg.Sources {
		src, err := n.openSource(ctx, sc)
		if err != nil {
			return nil, nil, inContext(err, "source %q", sc.Name)
		}
		sources[sc.Name] = src
	}
	counters := map[string]idforge.PeriodCounter{}
	for _, c := range cfg.Counters {
		u, err := url.Parse(c.URL)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: counter %q: %v", idforge.ErrInvalidArgument, c.Name, err)
		}
		q := u.Query()
		if !q.Has("name") {
			q.Set("name", c.Name)
		}
		if !q.Has("dir") {
			q.Set("dir", n.dir.File("counters"))
		}
		u.RawQuery = q.Encode()
		counter, err := sequence.OpenCounter(ctx, u.String())
		if err != nil {
			return nil, nil, inContext(err, "counter %q", c.Name)
		}
		n.closers = append(n.closers, counter)
		counters[c.Name] = counter
	}
	return sources, counters, nil
}

// keyFormats builds the configured string forms of keys.
func keyFormats(cfg Config, getenv func(string) string) (map[string]obfuscate.Format, error) {
	formats := map[string]obfuscate.Format{}
	for _, kc := range cfg.Keys {
		if kc.Format == "" {
			continue
		}
		f, err := obfuscate.ParseFormat(kc.Format)
		if err != nil {
			return nil, usageIn(err, "key %q", kc.Name)
		}
		if f.Bits() > 0 {
			key, err := secret(kc.FormatKey, getenv)
			if err != nil {
				return nil, inContext(err, "key %q: format_key", kc.Name)
			}
			if f, err = f.WithKey(key); err != nil {
				return nil, usageIn(err, "key %q", kc.Name)
			}
		}
		formats[kc.Name] = f
	}
	return formats, nil
}

// plugins builds the configured plugin chain.
func (n *node) plugins(cfg Config) (*plugin.Chain, error) {
	var ps []plugin.Plugin
	for _, pc := range cfg.Plugins {
		var p plugin.Plugin
		switch pc.Kind {
		case "history":
			log, err := n.historyLog(pc.File)
			if err != nil {
				return nil, err
			}
			p = plugin.NewHistory(log, pc.Order)
		case "rate":
			r, err := plugin.NewRate(n.metrics.Registerer(), pc.Order)
			if err != nil {
				return nil, usageErr("plugin rate declared twice: %v", err)
			}
			p = r
		case "obfuscate":
			key, err := secret(pc.Key, n.getenv)
			if err != nil {
				return nil, fmt.Errorf("plugin obfuscate: key: %w", err)
			}
			perm, err := obfuscate.New(key, pc.Bits)
			if err != nil {
				return nil, usageIn(err, "plugin obfuscate")
			}
			p = plugin.NewObfuscate(perm, pc.Order)
		}
		ps = append(ps, plugin.Scoped(p, pc.Keys...))
	}
	if len(ps) == 0 {
		return nil, nil
	}
	return plugin.NewChain(nil, ps...), nil
}

// sharedStore reports whether a store URL names a database other nodes
// can use too (anything but a SQLite file or memory).
func sharedStore(storeURL string) bool {
	scheme, _, _ := strings.Cut(storeURL, ":")
	return scheme != "sqlite" && scheme != "memory" && scheme != ""
}

// historyLog is where the history plugin writes: the process log, or
// file (JSON lines, appended; relative to the data directory).
func (n *node) historyLog(file string) (*slog.Logger, error) {
	if file == "" {
		return n.log.With("plugin", "history"), nil
	}
	if !filepath.IsAbs(file) {
		file = filepath.Join(n.dir.Path(), file)
	}
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o640)
	if err != nil {
		return nil, fmt.Errorf("plugin history: %w", err)
	}
	n.closers = append(n.closers, f)
	return slog.New(slog.NewJSONHandler(f, nil)), nil
}

// openSource opens one configured source: a URL, or a balanced set, then
// the memory expansion when asked for.
func (n *node) openSource(ctx context.Context, sc SourceConfig) (idforge.Generator, error) {
	var src sequence.Source
	var err error
	if len(sc.Balance) > 0 {
		src, err = compose.OpenBalanced(ctx, sc.Balance, compose.BalancedOptions{
			RescueAfter:   time.Duration(sc.RescueAfter),
			SlowThreshold: time.Duration(sc.SlowThreshold),
			SlowCount:     sc.SlowCount,
			SlowWindow:    time.Duration(sc.SlowWindow),
			Logger:        n.log,
		})
	} else {
		src, err = sequence.Open(ctx, sc.URL)
	}
	if err != nil {
		return nil, err
	}
	n.closers = append(n.closers, src)
	if sc.Expand == 0 {
		return src, nil
	}
	exp, err := compose.NewExpanded(src, compose.ExpandedOptions{MemoryBits: sc.Expand, Logger: n.log})
	if err != nil {
		return nil, err
	}
	n.closers = append([]io.Closer{exp}, n.closers...) // stop the prefetcher before its source
	return exp, nil
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// openNode opens a node; on failure everything opened so far is closed.
// owner identifies the node to a worker-ID coordinator ("host:port").
func openNode(ctx context.Context, cfg Config, log *slog.Logger, owner string, getenv func(string) string) (_ *node, err error) {
	n := &node{cfg: cfg, log: log, getenv: getenv, metrics: metrics.New(), stopLease: make(chan struct{})}
	defer func() {
		if err != nil {
			n.Close()
		}
	}()
	if n.dir, err = datadir.Open(cfg.Data); err != nil {
		return nil, err
	}
	storeURL := cfg.storeURL(n.dir.Path())
	if n.store, err = openStore(ctx, storeURL, store.Options{DataDir: n.dir.Path(), Logger: log}); err != nil {
		return nil, err
	}
	layout, err := snowflake.ParseLayout(cfg.Snowflake.Layout)
	if err != nil {
		return nil, err
	}
	n.provider, err = worker.Open(ctx, cfg.Snowflake.Worker, worker.Options{DataDir: n.dir.Path(), Logger: log, Owner: owner})
	if err != nil {
		return nil, err
	}
	n.maxWorker = layout.MaxWorker()
	lease, err := n.provider.Acquire(ctx, n.maxWorker)
	if err != nil {
		return nil, inContext(err, "%s", n.provider.Describe())
	}
	n.setLease(lease)
	log.Info("worker ID assigned", "worker", lease.ID(), "from", n.provider.Describe(), "owner", owner,
		"valid_until", fmtTime(lease.ValidUntil()), "earlier_holder_last", fmtTime(lease.LastTime()))
	if cfg.Snowflake.Worker == "" && sharedStore(storeURL) {
		// Not silent: the default is a guess that only one node makes.
		log.Warn("the snowflake worker ID comes from this node's data directory (chosen at random when first needed), "+
			"but the store is shared: nodes that share it may hold the same worker ID and issue duplicate snowflake IDs; "+
			"give each node its own (worker = a number) or a coordinator (worker = etcd://, zk://, redis:// or mysql:// / postgres://)",
			"worker", lease.ID(), "store", dsn.RedactedString(storeURL))
	}
	n.snow, err = snowflake.New(snowflake.Settings{
		Layout:          layout,
		Datacenter:      cfg.Snowflake.Datacenter,
		Worker:          lease.ID(),
		MaxBackwardWait: time.Duration(cfg.Snowflake.MaxBackwardWait),
		MaxBorrow:       time.Duration(cfg.Snowflake.MaxBorrow),
		NotBefore:       lease.LastTime(),
		Guard:           lease,
		Fence:           n.dir.TimeFence(),
		Logger:          log,
	})
	if err != nil {
		return nil, err
	}
	n.leaseWG.Add(1)
	go n.superviseLease()
	sources, counters, err := n.openSequences(ctx, cfg)
	if err != nil {
		return nil, err
	}
	formats, err := keyFormats(cfg, n.getenv)
	if err != nil {
		return nil, err
	}
	plugins, err := n.plugins(cfg)
	if err != nil {
		return nil, err
	}
	serials := make([]idforge.Serial, len(cfg.Serials))
	for i, sc := range cfg.Serials {
		serials[i] = sc.serial()
	}
	n.issuer = issuer.New(n.store, n.snow, issuer.Settings{
		Logger:   log,
		Sources:  sources,
		Counters: counters,
		Serials:  serials,
		Formats:  formats,
		Plugins:  plugins,
		Segment: segment.Settings{
			PrefetchAt:     cfg.Segment.PrefetchAt,
			TargetDuration: time.Duration(cfg.Segment.TargetDuration),
			SurviveOutage:  time.Duration(cfg.Segment.SurviveOutage),
			MinStep:        cfg.Segment.MinStep,
			MaxStep:        cfg.Segment.MaxStep,
			LoadTimeout:    time.Duration(cfg.Segment.LoadTimeout),
			Logger:         log,
			OnClaim:        n.metrics.OnClaim,
		},
	})
	n.metrics.Observe(n.issuer)
	for _, kc := range cfg.Keys {
		k, err := kc.key()
		if err != nil {
			return nil, err
		}
		if err := n.issuer.EnsureKey(ctx, k); err != nil {
			return nil, inContext(err, "config key %q", k.Name)
		}
	}
	// Compile every configured serial now: a bad template or a missing
	// source is a start-up error, not a surprise at the first request.
	for _, d := range serials {
		if _, err := n.issuer.Compile(d); err != nil {
			return nil, inContext(err, "config serial %q", d.Name)
		}
	}
	return n, nil
}

// Close shuts the node down in reverse order. The snowflake generator
// closes before the data directory unlocks, so its final time fence is on
// disk before another process can take over the directory.
func (n *node) Close() error {
	var errs []error
	n.closeOnce.Do(func() { close(n.stopLease) })
	n.leaseWG.Wait()
	if n.issuer != nil {
		errs = append(errs, n.issuer.Close())
	}
	if n.snow != nil {
		errs = append(errs, n.snow.Close())
	}
	if lease := n.currentLease(); lease != nil {
		if n.snow != nil {
			lease.Report(n.snow.LastIssued())
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		errs = append(errs, lease.Release(ctx))
		cancel()
	}
	if c, ok := n.provider.(io.Closer); ok {
		errs = append(errs, c.Close())
	}
	for _, c := range n.closers {
		errs = append(errs, c.Close())
	}
	n.closers = nil
	if n.store != nil {
		errs = append(errs, n.store.Close())
	}
	if n.dir != nil {
		errs = append(errs, n.dir.Close())
	}
	return errors.Join(errs...)
}
