package main

import (
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/auth"
	"github.com/idforge/idforge/internal/registry"
	"github.com/idforge/idforge/issuer"
	"github.com/idforge/idforge/metrics"
	"github.com/idforge/idforge/node"
	"github.com/idforge/idforge/obfuscate"
	"github.com/idforge/idforge/plugin"
	"github.com/idforge/idforge/quota"
	"github.com/idforge/idforge/snowflake"
	"github.com/idforge/idforge/store"
	"github.com/idforge/idforge/worker"
)

// Config is everything a node can be told. Values come, later ones
// winning, from the defaults, the config file, IDFORGE_* environment
// variables and command-line flags.
type Config struct {
	// HTTP is the address the server listens on.
	HTTP string `toml:"http"`
	// GRPC, when set, is the address the gRPC server (IDForge, health,
	// reflection) listens on; empty means no gRPC.
	GRPC string `toml:"grpc"`
	// Data is the node's data directory: its lock, worker ID, time fence
	// and (by default) its SQLite database.
	Data string `toml:"data"`
	// Store is the store URL; empty means sqlite in the data directory.
	Store string `toml:"store"`
	// Advertise is how other nodes and coordinators know this node,
	// "host:port". Default: the host name and the listening port (the
	// one-shot commands use "host:cli").
	Advertise string `toml:"advertise"`
	// LogLevel is debug, info, warn or error.
	LogLevel string `toml:"log_level"`
	// RefreshKeys is how often the server re-reads the key catalogue, so
	// keys added or changed by other nodes or by hand take effect without
	// a restart. Default 60s.
	RefreshKeys duration `toml:"refresh_keys"`
	// MetricsPerKey is how many segment keys get their own series in
	// /metrics (metrics.Options.PerKey, which documents which keys);
	// 0 means none. Default metrics.DefaultPerKey, at most
	// metrics.MaxPerKey.
	MetricsPerKey int `toml:"metrics_per_key"`

	// Auth holds the API tokens; see package auth. IDFORGE_TOKEN (admin)
	// and IDFORGE_ISSUE_TOKEN (issue) add one each from the environment.
	Auth auth.Config `toml:"auth"`
	// TLS serves HTTPS (and gRPC over TLS) when Cert and Key are set;
	// ClientCA makes client certificates required.
	TLS TLSConfig `toml:"tls"`

	Snowflake SnowflakeConfig `toml:"snowflake"`
	Segment   SegmentConfig   `toml:"segment"`
	// Keys are created at start-up when the store lacks them.
	Keys []KeyConfig `toml:"keys"`
	// Sources are named sequence sources (see package sequence): usable
	// as keys and from serial templates.
	Sources []SourceConfig `toml:"sources"`
	// Counters are named per-period counters for serial templates.
	Counters []NamedURL `toml:"counters"`
	// Serials are serial-number definitions (see package serial).
	Serials []SerialConfig `toml:"serials"`
	// Plugins run around every issue of IDs, in Order.
	Plugins []PluginConfig `toml:"plugins"`
	// Rejections say what the node does besides refusing when a plugin
	// (a quota, say) refuses a call: the fields of plugin.Rejections.
	Rejections RejectionsConfig `toml:"rejections"`
	// Quotas refuse calls over N IDs per period, close keys or limit
	// their formats (quota.Spec); more can be defined through the API.
	Quotas []quota.Spec `toml:"quotas"`

	// file and fileData are the config file read, for placing an error
	// in it; overridden are the settings the environment or a flag set.
	file       string
	fileData   []byte
	overridden map[string]bool
}

// SourceConfig declares a sequence source: the fields of node.Source,
// which documents and validates them, and whose JSON form (the API's)
// uses the same names.
type SourceConfig struct {
	Name          string   `toml:"name"`
	URL           string   `toml:"url"`
	Balance       []string `toml:"balance"`
	DatePacked    string   `toml:"date_packed"`
	Bits          int      `toml:"bits"`
	RescueAfter   duration `toml:"rescue_after"`
	SlowThreshold duration `toml:"slow_threshold"`
	SlowCount     int      `toml:"slow_count"`
	SlowWindow    duration `toml:"slow_window"`
	Expand        int      `toml:"expand"`
}

// NamedURL names a source or counter given by URL.
type NamedURL struct {
	Name string `toml:"name"`
	URL  string `toml:"url"`
}

// SerialConfig declares a serial number.
type SerialConfig struct {
	Name        string `toml:"name"`
	Template    string `toml:"template"`
	TimeZone    string `toml:"time_zone"`
	Description string `toml:"description"`
	// Gapless makes the serial gap-free: each number is reserved, then
	// committed or voided, and audited (needs a SQL store).
	Gapless bool `toml:"gapless"`
	// ReuseExpired hands a gapless serial's expired reservation to the
	// next one instead of voiding it.
	ReuseExpired bool `toml:"reuse_expired"`
	// Expiry is how long a gapless serial's reservation waits for its
	// commit; 0 means 5m.
	Expiry duration `toml:"expiry"`
}

func (s SerialConfig) serial() idforge.Serial {
	return idforge.Serial{Name: s.Name, Template: s.Template, TimeZone: s.TimeZone, Description: s.Description,
		Gapless: s.Gapless, ReuseExpired: s.ReuseExpired, Expiry: time.Duration(s.Expiry)}
}

// TLSConfig names the certificate files.
type TLSConfig struct {
	// Cert is the certificate file (PEM), with Key: serve HTTPS.
	Cert string `toml:"cert"`
	// Key is the certificate's private key file (PEM).
	Key string `toml:"key"`
	// ClientCA, when set, requires client certificates signed by it.
	ClientCA string `toml:"client_ca"`
}

// SnowflakeConfig configures the node's snowflake generator.
type SnowflakeConfig struct {
	// Layout is a preset name or a full layout spec (see
	// snowflake.ParseLayout). Default "twitter".
	Layout string `toml:"layout"`
	// Worker names the worker-ID provider: empty (a file in the data
	// directory), a number, static://N, file://PATH, k8s://, ip (the low
	// bits of the private IPv4 address: ip://?bits=16&net=CIDR; ip+mysql://
	// and the other SQL URLs hold it in idforge_workers), or a coordinator
	// that leases one (etcd, zk, redis, mysql, postgres, sqlite URLs, each
	// refusing a node more than max_drift from its peers' clocks:
	// docs/engines.md).
	Worker string `toml:"worker"`
	// Datacenter is the datacenter ID, for layouts that have one.
	Datacenter int64 `toml:"datacenter"`
	// MaxBackwardWait is how far the clock may step back before the
	// generator refuses instead of waiting. Default 5ms.
	MaxBackwardWait duration `toml:"max_backward_wait"`
	// MaxBorrow, when set, lets the generator issue through larger
	// backward steps by running its time ahead of the clock, up to this
	// much (see snowflake.Settings.MaxBorrow); 0 means refuse.
	MaxBorrow duration `toml:"max_borrow"`
	// Drift spends max_borrow on bursts too: a used-up tick goes on in
	// the next ticks ahead of the clock instead of waiting (see
	// snowflake.Settings.Drift). Off by default; needs max_borrow.
	Drift bool `toml:"drift"`
}

// SegmentConfig tunes every segment key's allocator; zero values mean the
// segment package's defaults.
type SegmentConfig struct {
	PrefetchAt     float64  `toml:"prefetch_at"`
	TargetDuration duration `toml:"target_duration"`
	SurviveOutage  duration `toml:"survive_outage"`
	MinStep        int64    `toml:"min_step"`
	MaxStep        int64    `toml:"max_step"`
	LoadTimeout    duration `toml:"load_timeout"`
}

// KeyConfig declares a key: an idforge.Key (key applies the defaults)
// and the Format and FormatKey of node.Key, which documents them.
type KeyConfig struct {
	Name        string `toml:"name"`
	Strategy    string `toml:"strategy"`
	Step        int64  `toml:"step"`
	Start       int64  `toml:"start"`
	Description string `toml:"description"`
	// Order is a segment key's order across nodes: "node" (the default)
	// or "global", every ID above every ID returned before the request
	// began, on any node, at the cost of a store round trip per request
	// (see docs/keys.md). A key's order is fixed when it is created.
	Order     string `toml:"order"`
	Format    string `toml:"format"`
	FormatKey string `toml:"format_key"`
}

// PluginConfig declares a plugin run around every issue: the fields of
// plugin.Config and of its kinds' settings (plugin.HistoryConfig,
// plugin.ObfuscateConfig), which document, check and build them.
type PluginConfig struct {
	Kind  string   `toml:"kind"`
	Keys  []string `toml:"keys"`
	Order int      `toml:"order"`
	Bits  int      `toml:"bits"`
	Key   string   `toml:"key"`
	File  string   `toml:"file"`
}

// plugin returns the declaration. The table writes every kind's settings
// flat: p.Kind gets its own, unless some of another kind are set, which
// plugin.Check then refuses ("file is for history, not rate").
func (p PluginConfig) plugin() plugin.Config {
	c := plugin.Config{Kind: p.Kind, Keys: p.Keys, Order: p.Order}
	for kind, s := range map[string]any{"history": plugin.HistoryConfig{File: p.File}, "obfuscate": plugin.ObfuscateConfig{Bits: p.Bits, Key: p.Key}} {
		if kind == p.Kind && c.Settings == nil || kind != p.Kind && !reflect.ValueOf(s).IsZero() {
			c.Settings = s
		}
	}
	return c
}

// RejectionsConfig is the [rejections] table: the fields of
// plugin.Rejections, which documents, checks and builds them.
type RejectionsConfig struct {
	// Log writes a warning line per refusal: the key, the plugin, how
	// many IDs were asked for and why.
	Log bool `toml:"log"`
	// Count counts refusals in idforge_plugin_rejections_total{plugin,key}.
	Count bool `toml:"count"`
	// Keys limits logging and counting to these keys; empty means every
	// key.
	Keys []string `toml:"keys"`
}

// duration is a time.Duration written as "5ms", "15m" in the file.
type duration time.Duration

func (d *duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return err
	}
	*d = duration(v)
	return nil
}

func (d duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// defaultConfig returns the configuration of a node started with nothing.
func defaultConfig() Config {
	return Config{
		HTTP:        "127.0.0.1:8080",
		Data:        "./idforge-data",
		LogLevel:    "info",
		RefreshKeys: duration(time.Minute),
		// The aggregate series cover every key; per-key ones are bounded.
		MetricsPerKey: metrics.DefaultPerKey,
		Snowflake:     SnowflakeConfig{Layout: "twitter"},
	}
}

// errUsage marks errors in how idforge was invoked or configured: exit
// status 2. It is matched with errors.Is and never shows in a message.
var errUsage = errors.New("usage")

// usageError is an error in how idforge was invoked or configured. Its
// message is the error's own: the mark changes the exit status, not the
// words.
type usageError struct{ err error }

func (e usageError) Error() string        { return e.err.Error() }
func (e usageError) Unwrap() error        { return e.err }
func (e usageError) Is(target error) bool { return target == errUsage }

// usageErr returns a usage error with the message format and args make;
// %w wraps as in fmt.Errorf.
func usageErr(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// parseConfigFile decodes a TOML config. Unknown settings are an error, so
// a typo is reported instead of silently ignored; an error names the line
// and the setting (see configcheck.go) and says how to fix it.
func parseConfigFile(data []byte, into *Config) error {
	md, err := toml.Decode(string(data), into)
	if err != nil {
		return decodeError(data, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		return unknownSetting(data, und[0])
	}
	return nil
}

// nodeFlags are the flags every command that opens a node accepts.
type nodeFlags struct {
	fs            *flag.FlagSet
	config        string
	http          string
	data          string
	store         string
	worker        string
	layout        string
	datacenter    string
	logLevel      string
	advertise     string
	tlsCert       string
	tlsKey        string
	tlsClientCA   string
	grpc          string
	metricsPerKey string
	// defaultLogLevel is "info" for the server and "warn" for one-shot
	// commands, whose output is the IDs.
	defaultLogLevel string
}

func newNodeFlags(fs *flag.FlagSet, withHTTP bool) *nodeFlags {
	f := &nodeFlags{fs: fs, defaultLogLevel: "warn"}
	if withHTTP {
		f.defaultLogLevel = "info"
	}
	fs.StringVar(&f.config, "config", "", "config file (TOML); env IDFORGE_CONFIG")
	if withHTTP {
		fs.StringVar(&f.http, "http", "", "listen address (default 127.0.0.1:8080); env IDFORGE_HTTP")
		fs.StringVar(&f.grpc, "grpc", "", "gRPC listen address (default: no gRPC); env IDFORGE_GRPC")
		fs.StringVar(&f.tlsCert, "tls-cert", "", "TLS certificate file: serve HTTPS; env IDFORGE_TLS_CERT")
		fs.StringVar(&f.tlsKey, "tls-key", "", "TLS key file; env IDFORGE_TLS_KEY")
		fs.StringVar(&f.tlsClientCA, "tls-client-ca", "", "CA file: require client certificates it signed; env IDFORGE_TLS_CLIENT_CA")
		fs.StringVar(&f.metricsPerKey, "metrics-per-key", "", fmt.Sprintf("segment keys with their own series in /metrics, 0..%d (default %d; the aggregates cover every key); env IDFORGE_METRICS_PER_KEY", metrics.MaxPerKey, metrics.DefaultPerKey))
	}
	fs.StringVar(&f.data, "data", "", "data directory (default ./idforge-data); env IDFORGE_DATA")
	fs.StringVar(&f.store, "store", "", storeHelp())
	fs.StringVar(&f.worker, "worker", "", workerHelp())
	fs.StringVar(&f.layout, "layout", "", "snowflake layout: preset or spec (default twitter); env IDFORGE_LAYOUT")
	fs.StringVar(&f.datacenter, "datacenter", "", "snowflake datacenter ID (default 0); env IDFORGE_DATACENTER")
	fs.StringVar(&f.logLevel, "log-level", "", "debug, info, warn or error; env IDFORGE_LOG_LEVEL")
	fs.StringVar(&f.advertise, "advertise", "", "this node's host:port for worker-ID coordinators (default: host name and listening port); env IDFORGE_ADVERTISE")
	return f
}

// storeHelp is the --store flag's help: every scheme store.Open knows,
// read from its registry so that a new backend shows without an edit.
func storeHelp() string {
	return "store URL: " + schemeList(store.Schemes()) +
		` (README "Store URLs"; default sqlite in the data directory); env IDFORGE_STORE`
}

// workerHelp is the --worker flag's help: every worker-ID source read
// from worker's registry.
func workerHelp() string {
	return "snowflake worker ID: N or static://N (a fixed ID), or " + schemeList(worker.Schemes()) +
		` (README "Worker IDs"; default: the file worker-id in the data directory); env IDFORGE_WORKER`
}

// schemeList lists registered URL schemes as "a://…, b://…".
func schemeList(schemes []registry.Scheme) string {
	forms := make([]string, len(schemes))
	for i, s := range schemes {
		forms[i] = s.Name + "://…"
	}
	return strings.Join(forms, ", ")
}

// newStoreFlags registers the flags of the commands that only read or
// define what the store holds (keys list, keys create, migrate): the
// config file, the store, the data directory its default lives in and the
// log level. They open no worker-ID source, so they take no --worker.
func newStoreFlags(fs *flag.FlagSet) *nodeFlags {
	f := &nodeFlags{fs: fs, defaultLogLevel: "warn"}
	fs.StringVar(&f.config, "config", "", "config file (TOML); env IDFORGE_CONFIG")
	fs.StringVar(&f.data, "data", "", "data directory, where the default store lives (default ./idforge-data); env IDFORGE_DATA")
	fs.StringVar(&f.store, "store", "", storeHelp())
	fs.StringVar(&f.logLevel, "log-level", "", "debug, info, warn or error; env IDFORGE_LOG_LEVEL")
	return f
}

// newLayoutFlags registers only --config and --layout, for the commands
// that decode or build IDs without opening a node.
func newLayoutFlags(fs *flag.FlagSet) *nodeFlags {
	f := &nodeFlags{fs: fs, defaultLogLevel: "warn"}
	fs.StringVar(&f.config, "config", "", "config file (TOML); env IDFORGE_CONFIG")
	fs.StringVar(&f.layout, "layout", "", "snowflake layout: preset or spec (default twitter); env IDFORGE_LAYOUT")
	return f
}

// load builds the Config: defaults, then the file, then the environment,
// then the flags that were set.
func (f *nodeFlags) load(getenv func(string) string) (Config, error) {
	path := getenv("IDFORGE_CONFIG")
	if f.fs.Lookup("config") != nil && f.isSet("config") {
		path = f.config
	}
	return f.loadFile(path, getenv)
}

func (f *nodeFlags) isSet(name string) bool {
	set := false
	f.fs.Visit(func(fl *flag.Flag) { set = set || fl.Name == name })
	return set
}

// loadFile is load with the config file path ("": none). It is the one
// way every command, idforge config check included, reads a configuration.
func (f *nodeFlags) loadFile(path string, getenv func(string) string) (Config, error) {
	cfg := defaultConfig()
	cfg.LogLevel = f.defaultLogLevel
	var data []byte
	if path != "" {
		var err error
		if data, err = os.ReadFile(path); err != nil {
			return Config{}, usageErr("config file: %v", err)
		}
		if err := parseConfigFile(data, &cfg); err != nil {
			return Config{}, inFile(path, err)
		}
	}
	cfg.file, cfg.fileData, cfg.overridden = path, data, map[string]bool{}
	overridden := cfg.overridden
	pick := func(dst *string, setting, flagName, env, flagVal string) {
		if v := getenv(env); v != "" {
			*dst, overridden[setting] = v, true
		}
		if f.isSet(flagName) {
			*dst, overridden[setting] = flagVal, true
		}
	}
	pick(&cfg.HTTP, "http", "http", "IDFORGE_HTTP", f.http)
	pick(&cfg.GRPC, "grpc", "grpc", "IDFORGE_GRPC", f.grpc)
	pick(&cfg.Data, "data", "data", "IDFORGE_DATA", f.data)
	pick(&cfg.Store, "store", "store", "IDFORGE_STORE", f.store)
	pick(&cfg.Snowflake.Worker, "snowflake.worker", "worker", "IDFORGE_WORKER", f.worker)
	pick(&cfg.Snowflake.Layout, "snowflake.layout", "layout", "IDFORGE_LAYOUT", f.layout)
	pick(&cfg.LogLevel, "log_level", "log-level", "IDFORGE_LOG_LEVEL", f.logLevel)
	pick(&cfg.Advertise, "advertise", "advertise", "IDFORGE_ADVERTISE", f.advertise)
	pick(&cfg.TLS.Cert, "tls.cert", "tls-cert", "IDFORGE_TLS_CERT", f.tlsCert)
	pick(&cfg.TLS.Key, "tls.key", "tls-key", "IDFORGE_TLS_KEY", f.tlsKey)
	pick(&cfg.TLS.ClientCA, "tls.client_ca", "tls-client-ca", "IDFORGE_TLS_CLIENT_CA", f.tlsClientCA)
	dc := ""
	pick(&dc, "snowflake.datacenter", "datacenter", "IDFORGE_DATACENTER", f.datacenter)
	perKey := ""
	pick(&perKey, "metrics_per_key", "metrics-per-key", "IDFORGE_METRICS_PER_KEY", f.metricsPerKey)
	if perKey != "" {
		n, err := strconv.Atoi(perKey)
		if err != nil {
			return Config{}, usageErr("metrics_per_key %q is not a number", perKey)
		}
		cfg.MetricsPerKey = n
	}
	if dc != "" {
		n, err := strconv.ParseInt(dc, 10, 64)
		if err != nil {
			return Config{}, usageErr("datacenter %q is not a number", dc)
		}
		cfg.Snowflake.Datacenter = n
	}
	if err := cfg.validate(); err != nil {
		return Config{}, cfg.inFile(err)
	}
	return cfg, nil
}

// validate checks what can be checked without opening anything.
func (c *Config) validate() error {
	if c.Data == "" {
		return inSetting("data", errors.New("the data directory must not be empty"))
	}
	if _, err := snowflake.ParseLayout(c.Snowflake.Layout); err != nil {
		return inSetting("snowflake.layout", err)
	}
	if _, err := parseLevel(c.LogLevel); err != nil {
		return inSetting("log_level", err)
	}
	if c.MetricsPerKey < 0 || c.MetricsPerKey > metrics.MaxPerKey {
		return inSetting("metrics_per_key", fmt.Errorf("metrics_per_key %d: want 0..%d", c.MetricsPerKey, metrics.MaxPerKey))
	}
	if c.RefreshKeys <= 0 {
		return inSetting("refresh_keys", fmt.Errorf("refresh_keys %v must be positive", time.Duration(c.RefreshKeys)))
	}
	if c.Segment.PrefetchAt < 0 || c.Segment.PrefetchAt >= 1 {
		return inSetting("segment.prefetch_at", fmt.Errorf("segment.prefetch_at %v must be in (0, 1)", c.Segment.PrefetchAt))
	}
	if c.Segment.MinStep < 0 || c.Segment.MaxStep < 0 || (c.Segment.MaxStep > 0 && c.Segment.MinStep > c.Segment.MaxStep) {
		return inSetting("segment.min_step", fmt.Errorf("segment.min_step %d / max_step %d: want 0 ≤ min_step ≤ max_step", c.Segment.MinStep, c.Segment.MaxStep))
	}
	names := map[string]string{}
	named := func(kind string, i int, name string) error {
		if err := idforge.ValidateKeyName(name); err != nil {
			return inSetting(fmt.Sprintf("%s[%d]", kind, i), inContext(err, "%s[%d]", kind, i))
		}
		if other, dup := names[name]; dup {
			return inSetting(fmt.Sprintf("%s[%d]", kind, i), fmt.Errorf("%s[%d]: name %q already names one of %s", kind, i, name, other))
		}
		names[name] = kind
		return nil
	}
	for i, src := range c.Sources {
		if err := named("sources", i, src.Name); err != nil {
			return err
		}
		if err := src.source().Validate(); err != nil {
			return inSetting(fmt.Sprintf("sources[%d]", i), inContext(err, "sources[%d]", i))
		}
	}
	for i, ctr := range c.Counters {
		if err := named("counters", i, ctr.Name); err != nil {
			return err
		}
		if err := node.Counter(ctr).Validate(); err != nil {
			return inSetting(fmt.Sprintf("counters[%d]", i), inContext(err, "counters[%d]", i))
		}
	}
	serials := map[string]bool{}
	for i, sc := range c.Serials {
		if err := sc.serial().Validate(); err != nil {
			return inSetting(fmt.Sprintf("serials[%d]", i), inContext(err, "serials[%d]", i))
		}
		if serials[sc.Name] {
			return inSetting(fmt.Sprintf("serials[%d]", i), fmt.Errorf("serials[%d]: serial %q declared twice", i, sc.Name))
		}
		serials[sc.Name] = true
	}
	for i, p := range c.Plugins {
		if err := plugin.Check(p.plugin()); err != nil {
			return inSetting(fmt.Sprintf("plugins[%d]", i), inContext(err, "plugins[%d]", i))
		}
	}
	if err := plugin.Rejections(c.Rejections).Check(); err != nil {
		return usageIn(err, "rejections")
	}
	quotas := map[string]bool{}
	for i, q := range c.Quotas {
		if err := q.Validate(); err != nil {
			return inSetting(fmt.Sprintf("quotas[%d]", i), inContext(err, "quotas[%d]", i))
		}
		if err := q.CheckTokens(auth.FromEnv(c.Auth).Names()); err != nil {
			return usageIn(err, "quotas[%d]", i)
		}
		if quotas[q.Name] {
			return inSetting(fmt.Sprintf("quotas[%d]", i), fmt.Errorf("quotas[%d]: quota %q declared twice", i, q.Name))
		}
		quotas[q.Name] = true
	}
	seen := map[string]bool{}
	for i, k := range c.Keys {
		key, err := k.key()
		if err != nil {
			return inSetting(fmt.Sprintf("keys[%d]", i), inContext(err, "keys[%d]", i))
		}
		if seen[k.Name] {
			return inSetting(fmt.Sprintf("keys[%d]", i), fmt.Errorf("keys[%d]: key %q declared twice", i, k.Name))
		}
		if k.Format != "" {
			f, err := obfuscate.ParseFormat(k.Format)
			if err != nil {
				return inSetting(fmt.Sprintf("keys[%d]", i), inContext(err, "keys[%d] (%s)", i, k.Name))
			}
			if (f.Bits() > 0) != (k.FormatKey != "") {
				return inSetting(fmt.Sprintf("keys[%d]", i), fmt.Errorf("keys[%d] (%s): format_key goes with a feistel format, and only with one", i, k.Name))
			}
			if err := issuer.CheckKey(key, &f); err != nil {
				return inSetting(fmt.Sprintf("keys[%d]", i), fmt.Errorf("keys[%d]: %v", i, err))
			}
		}
		seen[k.Name] = true
	}
	return nil
}

// key turns a declaration into an idforge.Key, applying the defaults of
// every key definition (issuer.WithDefaults).
func (k KeyConfig) key() (idforge.Key, error) {
	out := issuer.WithDefaults(idforge.Key{Name: k.Name, Strategy: idforge.Strategy(k.Strategy), Description: k.Description, Step: k.Step, MaxID: k.Start,
		Order: idforge.Order(k.Order)})
	return out, out.Validate()
}

// owner returns the node's identity for a worker-ID coordinator: the
// configured advertise address, else "host:port" of listen (the bound
// address when it is a specific one, else the host name). A one-shot
// command (listen "") gets an identity of its own process.
func (c *Config) owner(listen string) string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	ip, port, err := net.SplitHostPort(listen)
	if err != nil {
		// A one-shot command is a process of its own: two running at
		// once, or one beside a server advertising this host, must never
		// be taken for one node restarting and share a worker ID.
		var b [4]byte
		rand.Read(b[:])
		return fmt.Sprintf("%s:cli/pid-%d/%x", host, os.Getpid(), b)
	}
	if c.Advertise != "" {
		return c.Advertise
	}
	// A listener bound to one address is known by it (Leaf names nodes
	// ip:port): two servers on one host with the same port on different
	// addresses must not share an identity, and with it a worker ID.
	if a := net.ParseIP(ip); a != nil && !a.IsUnspecified() {
		host = ip
	}
	return net.JoinHostPort(host, port)
}

// storeURL is the configured store, or SQLite in the data directory.
func (c *Config) storeURL(dataDir string) string {
	if c.Store != "" {
		return c.Store
	}
	return node.DefaultStoreURL(dataDir)
}
