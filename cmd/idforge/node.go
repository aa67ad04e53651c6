package main

import (
	"cmp"
	"context"
	"log/slog"
	"time"

	"github.com/idforge/idforge/auth"
	"github.com/idforge/idforge/node"
	"github.com/idforge/idforge/plugin"
	"github.com/idforge/idforge/segment"
	_ "github.com/idforge/idforge/sequence/all" // register every source and counter
	_ "github.com/idforge/idforge/store/all"    // register every backend
	_ "github.com/idforge/idforge/worker/all"   // register every coordinator
)

// openNode opens the node cfg describes. owner identifies it to a
// worker-ID coordinator ("host:port").
func openNode(ctx context.Context, cfg Config, log *slog.Logger, owner string, getenv func(string) string) (*node.Node, error) {
	s, err := cfg.settings(log, owner, getenv)
	if err != nil {
		return nil, err
	}
	return node.Open(ctx, s)
}

// settings are the node.Settings cfg describes.
func (cfg Config) settings(log *slog.Logger, owner string, getenv func(string) string) (node.Settings, error) {
	s := node.Settings{
		DataDir:         cfg.Data,
		Store:           cfg.Store,
		OpenStore:       openStore,
		Worker:          cfg.Snowflake.Worker,
		Owner:           owner,
		Layout:          cfg.Snowflake.Layout,
		Datacenter:      cfg.Snowflake.Datacenter,
		MaxBackwardWait: time.Duration(cfg.Snowflake.MaxBackwardWait),
		MaxBorrow:       time.Duration(cfg.Snowflake.MaxBorrow),
		Drift:           cfg.Snowflake.Drift,
		Segment: segment.Settings{
			PrefetchAt:     cfg.Segment.PrefetchAt,
			TargetDuration: time.Duration(cfg.Segment.TargetDuration),
			SurviveOutage:  time.Duration(cfg.Segment.SurviveOutage),
			MinStep:        cfg.Segment.MinStep,
			MaxStep:        cfg.Segment.MaxStep,
			LoadTimeout:    time.Duration(cfg.Segment.LoadTimeout),
		},
		Logger: log,
		Getenv: getenv,
		// The config's 0 means none; the node's 0 means the default.
		MetricsPerKey: cmp.Or(cfg.MetricsPerKey, -1),
	}
	for _, kc := range cfg.Keys {
		k, err := kc.key()
		if err != nil {
			return s, err
		}
		s.Keys = append(s.Keys, node.Key{Key: k, Format: kc.Format, FormatKey: kc.FormatKey})
	}
	s.Sources, s.Counters = cfg.sequences()
	for _, sc := range cfg.Serials {
		s.Serials = append(s.Serials, sc.serial())
	}
	for _, pc := range cfg.Plugins {
		s.Plugins = append(s.Plugins, pc.plugin())
	}
	s.Rejections = plugin.Rejections(cfg.Rejections)
	s.Quotas, s.Tokens = cfg.Quotas, auth.FromEnv(cfg.Auth).Names()
	return s, nil
}

// sequences are the configured sources and counters as node takes them.
func (cfg Config) sequences() ([]node.Source, []node.Counter) {
	var sources []node.Source
	for _, sc := range cfg.Sources {
		sources = append(sources, sc.source())
	}
	var counters []node.Counter
	for _, c := range cfg.Counters {
		counters = append(counters, node.Counter(c))
	}
	return sources, counters
}

// source is the configured source as node takes it.
func (sc SourceConfig) source() node.Source {
	return node.Source{Name: sc.Name, URL: sc.URL, Balance: sc.Balance, DatePacked: sc.DatePacked, Bits: sc.Bits,
		RescueAfter: time.Duration(sc.RescueAfter), SlowThreshold: time.Duration(sc.SlowThreshold),
		SlowCount: sc.SlowCount, SlowWindow: time.Duration(sc.SlowWindow), Expand: sc.Expand}
}
