package node

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/dsn"
	"github.com/idforge/idforge/internal/periodic"
	"github.com/idforge/idforge/internal/strictjson"
	"github.com/idforge/idforge/issuer"
	"github.com/idforge/idforge/metrics"
	"github.com/idforge/idforge/sequence"
	"github.com/idforge/idforge/sequence/compose"
	"github.com/idforge/idforge/serial"
)

// The kinds of idforge.Definition of sources and counters defined through
// the API (issuer.KindSource, issuer.KindCounter). Their Spec is the JSON
// form of Source (without its name) and of Counter: the fields of the
// configuration file's [[sources]] and [[counters]], by the same names.
const (
	KindSource  = issuer.KindSource
	KindCounter = issuer.KindCounter
)

// DefaultRecheck is how often a node re-reads the definitions it serves
// from the store (Settings.RecheckDefinitions): a source or counter
// retired on one node stops issuing on every other within this time.
const DefaultRecheck = 10 * time.Second

// CheckTimeout bounds how long defining a source or counter waits for its
// backend to answer: an unreachable backend is refused fast.
const CheckTimeout = 3 * time.Second

// sourceJSON is Source's JSON form: durations as text ("5m").
type sourceJSON struct {
	URL           string   `json:"url,omitempty"`
	Balance       []string `json:"balance,omitempty"`
	DatePacked    string   `json:"date_packed,omitempty"`
	Bits          int      `json:"bits,omitempty"`
	RescueAfter   string   `json:"rescue_after,omitempty"`
	SlowThreshold string   `json:"slow_threshold,omitempty"`
	SlowCount     int      `json:"slow_count,omitempty"`
	SlowWindow    string   `json:"slow_window,omitempty"`
	Expand        int      `json:"expand,omitempty"`
}

// MarshalJSON writes the source's settings (not its Name) as the API and
// the store keep them, durations as Go duration text.
func (s Source) MarshalJSON() ([]byte, error) {
	d := func(v time.Duration) string {
		if v == 0 {
			return ""
		}
		return v.String()
	}
	return strictjson.Marshal(sourceJSON{URL: s.URL, Balance: s.Balance, DatePacked: s.DatePacked, Bits: s.Bits, RescueAfter: d(s.RescueAfter),
		SlowThreshold: d(s.SlowThreshold), SlowCount: s.SlowCount, SlowWindow: d(s.SlowWindow), Expand: s.Expand})
}

// UnmarshalJSON reads what MarshalJSON writes. Unknown fields are
// errors, wrapping idforge.ErrInvalidArgument as every error here does.
func (s *Source) UnmarshalJSON(b []byte) error {
	var j sourceJSON
	if err := strictjson.Decode(b, &j, "definition"); err != nil {
		return err
	}
	out := Source{Name: s.Name, URL: j.URL, Balance: j.Balance, DatePacked: j.DatePacked, Bits: j.Bits, SlowCount: j.SlowCount, Expand: j.Expand}
	for _, f := range []struct {
		name string
		text string
		to   *time.Duration
	}{{"rescue_after", j.RescueAfter, &out.RescueAfter}, {"slow_threshold", j.SlowThreshold, &out.SlowThreshold},
		{"slow_window", j.SlowWindow, &out.SlowWindow}} {
		if f.text == "" {
			continue
		}
		v, err := time.ParseDuration(f.text)
		if err != nil {
			return fmt.Errorf("%w: %s: %v", idforge.ErrInvalidArgument, f.name, err)
		}
		*f.to = v
	}
	*s = out
	return nil
}

// counterJSON is Counter's JSON form.
type counterJSON struct {
	URL string `json:"url"`
}

// MarshalJSON writes the counter's URL (not its Name).
func (c Counter) MarshalJSON() ([]byte, error) { return strictjson.Marshal(counterJSON{URL: c.URL}) }

// UnmarshalJSON reads what MarshalJSON writes; unknown fields are errors.
func (c *Counter) UnmarshalJSON(b []byte) error {
	var j counterJSON
	if err := strictjson.Decode(b, &j, "definition"); err != nil {
		return err
	}
	c.URL = j.URL
	return nil
}

// Validate checks a source's settings without opening anything: a name,
// one of a URL, a balanced set of 2^n URLs (at least two, at most
// compose.MaxSources) or a date-packed counter (its URL naming a period
// and a zone, and bits that fit them; no expansion, which would change
// the numbers explain reads), an expansion of 0 to compose.MaxMemoryBits
// bits and no negative tuning. Errors wrap idforge.ErrInvalidArgument
// (or ErrInvalidKey for the name).
func (s Source) Validate() error {
	if err := idforge.ValidateKeyName(s.Name); err != nil {
		return err
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: source %q: %s", idforge.ErrInvalidArgument, s.Name, fmt.Sprintf(format, args...))
	}
	n := len(s.Balance)
	if s.DatePacked != "" {
		if s.URL != "" || n > 0 || s.Expand != 0 || s.RescueAfter != 0 || s.SlowThreshold != 0 || s.SlowWindow != 0 || s.SlowCount != 0 {
			return bad("date_packed takes no url, balance, expand or balance tuning")
		}
		if _, err := sequence.ParsePacking(s.DatePacked, s.Bits); err != nil {
			return fmt.Errorf("source %q: %w", s.Name, err)
		}
		return nil
	}
	switch {
	case s.Bits != 0:
		return bad("bits are a date_packed source's")
	case (s.URL == "") == (n == 0):
		return bad("give either url or balance (or date_packed)")
	case n == 1:
		return bad("balance has 1 member; a balanced source needs at least 2 (or give url)")
	case n > compose.MaxSources || n&(n-1) != 0:
		return bad("balance has %d members; want a power of two from 2 to %d", n, compose.MaxSources)
	case s.Expand < 0 || s.Expand > compose.MaxMemoryBits:
		return bad("expand %d out of 0..%d", s.Expand, compose.MaxMemoryBits)
	case s.RescueAfter < 0 || s.SlowThreshold < 0 || s.SlowWindow < 0 || s.SlowCount < 0:
		return bad("negative rescue_after, slow_threshold, slow_window or slow_count")
	case n == 0 && (s.RescueAfter != 0 || s.SlowThreshold != 0 || s.SlowWindow != 0 || s.SlowCount != 0):
		return bad("rescue_after, slow_threshold, slow_count and slow_window tune balance, and url has none")
	}
	for i, u := range s.Balance {
		if u == "" {
			return bad("balance[%d] is empty", i)
		}
	}
	return nil
}

// Validate checks a counter's settings without opening anything: a name
// and a URL. Errors wrap idforge.ErrInvalidArgument (or ErrInvalidKey).
func (c Counter) Validate() error {
	if err := idforge.ValidateKeyName(c.Name); err != nil {
		return err
	}
	if c.URL == "" {
		return fmt.Errorf("%w: counter %q: no url", idforge.ErrInvalidArgument, c.Name)
	}
	return nil
}

// catalog is the node's issuer.Definitions: the file's sources and
// counters, listed, and those defined in the store, opened on first use
// and re-checked every recheck.
type catalog struct {
	st      idforge.Store
	log     *slog.Logger
	metrics *metrics.Metrics            // nil: register none (a command's catalog)
	dataDir string                      // where relative SQLite files and counters' marks go
	file    map[string][]issuer.Defined // by kind, sorted by name
	// fileCounters are the file's counters with their passwords, which
	// a command's catalog opens on first use.
	fileCounters map[string]idforge.Definition
	recheck      time.Duration

	// openMu serialises opening definitions from the store, so that one
	// is opened once (and its metrics registered once).
	openMu sync.Mutex
	mu     sync.Mutex
	opened map[string]*opened // by kind + "/" + name
	closed bool
	stop   context.CancelFunc // ends the re-check
	done   chan struct{}      // closed when the re-check has ended
}

// opened is a definition from the store that this node opened.
type opened struct {
	kind, name string
	retired    atomic.Bool
	gen        idforge.Generator
	ctr        idforge.PeriodCounter
	closers    []io.Closer // closed first to last
}

func (o *opened) retiredErr() error {
	return fmt.Errorf("%w: %s %q was retired", idforge.ErrRetired, o.kind, o.name)
}

func (o *opened) close() error {
	var errs []error
	for _, c := range o.closers {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}

// liveSource is an opened source as the issuer holds it: it answers
// ErrRetired once the source is retired.
type liveSource struct{ o *opened }

func (s liveSource) Next(ctx context.Context) (int64, error) {
	if s.o.retired.Load() {
		return 0, s.o.retiredErr()
	}
	return s.o.gen.Next(ctx)
}

func (s liveSource) NextN(ctx context.Context, n int) ([]int64, error) {
	if s.o.retired.Load() {
		return nil, s.o.retiredErr()
	}
	return issuer.BatchOf(s.o.gen).NextN(ctx, n)
}

// liveCounter is liveSource for counters; it tells its period, as serial
// templates check.
type liveCounter struct{ o *opened }

func (c liveCounter) Next(ctx context.Context, at time.Time) (int64, time.Time, error) {
	if c.o.retired.Load() {
		return 0, time.Time{}, c.o.retiredErr()
	}
	return c.o.ctr.Next(ctx, at)
}

func (c liveCounter) CountsPer() (string, *time.Location) {
	if r, ok := c.o.ctr.(idforge.PeriodReporter); ok {
		return r.CountsPer()
	}
	return "", nil
}

// Member is the retirable member of the counter (sequence.Counter.Member,
// for serial templates' by=): it answers ErrRetired once the counter is.
func (c liveCounter) Member(ctx context.Context, value string) (idforge.PeriodCounter, error) {
	set, ok := c.o.ctr.(serial.CounterSet)
	if c.o.retired.Load() {
		return nil, c.o.retiredErr()
	}
	if !ok {
		return nil, fmt.Errorf("%w: counter %q cannot count apart for each value", idforge.ErrInvalidArgument, c.o.name)
	}
	m, err := set.Member(ctx, value)
	if err != nil {
		return nil, err
	}
	return liveMember{c.o, m}, nil
}

// liveMember is a member of a liveCounter, retired with it.
type liveMember struct {
	o *opened
	idforge.PeriodCounter
}

func (m liveMember) Next(ctx context.Context, at time.Time) (int64, time.Time, error) {
	if m.o.retired.Load() {
		return 0, time.Time{}, m.o.retiredErr()
	}
	return m.PeriodCounter.Next(ctx, at)
}

// Catalog returns the issuer.Definitions of a program that defines,
// lists and retires sources and counters in st without serving them (the
// idforge command's `sources` and `counters`): s's Sources and Counters
// are the configuration file's, s.DataDir where a counter being checked
// keeps its mark file. Close it after use, before st.
func Catalog(st idforge.Store, s Settings) interface {
	issuer.Definitions
	io.Closer
} {
	return newCatalog(st, s, nil, s.DataDir)
}

// newCatalog lists the file's definitions and starts the re-check; m and
// dataDir are as openSource and openCounter take them.
func newCatalog(st idforge.Store, s Settings, m *metrics.Metrics, dataDir string) *catalog {
	c := &catalog{st: st, log: cmp.Or(s.Logger, slog.Default()), metrics: m, dataDir: dataDir,
		file: map[string][]issuer.Defined{}, fileCounters: map[string]idforge.Definition{}, opened: map[string]*opened{},
		recheck: cmp.Or(s.RecheckDefinitions, DefaultRecheck), done: make(chan struct{})}
	for _, src := range s.Sources {
		spec, _ := strictjson.Marshal(src)
		c.file[KindSource] = append(c.file[KindSource], redacted(issuer.Defined{Origin: idforge.OriginFile,
			Definition: idforge.Definition{Kind: KindSource, Name: src.Name, Spec: string(spec)}}))
	}
	for _, ctr := range s.Counters {
		spec, _ := strictjson.Marshal(ctr)
		if m == nil { // a node has opened them, and must not open them twice
			c.fileCounters[ctr.Name] = idforge.Definition{Kind: KindCounter, Name: ctr.Name, Spec: string(spec)}
		}
		c.file[KindCounter] = append(c.file[KindCounter], redacted(issuer.Defined{Origin: idforge.OriginFile,
			Definition: idforge.Definition{Kind: KindCounter, Name: ctr.Name, Spec: string(spec)}}))
	}
	for _, l := range c.file {
		slices.SortFunc(l, func(a, b issuer.Defined) int { return cmp.Compare(a.Name, b.Name) })
	}
	ctx, stop := context.WithCancel(context.Background())
	c.stop = stop
	go func() {
		defer close(c.done)
		periodic.Run(ctx, c.recheck, c.recheckOnce, nil)
	}()
	return c
}

var _ issuer.Definitions = (*catalog)(nil)

// store returns the node's store as a DefinitionStore, or an error
// wrapping ErrInvalidArgument when it keeps none.
func (c *catalog) store() (idforge.DefinitionStore, error) {
	ds, ok := c.st.(idforge.DefinitionStore)
	if !ok {
		return nil, fmt.Errorf("%w: the store keeps no definitions; declare sources and counters in the configuration", idforge.ErrInvalidArgument)
	}
	return ds, nil
}

// checkKind refuses a kind this catalog does not own.
func checkKind(kind string) error {
	if kind != KindSource && kind != KindCounter {
		return fmt.Errorf("%w: definition kind %q; want %q or %q", idforge.ErrInvalidArgument, kind, KindSource, KindCounter)
	}
	return nil
}

// inFile returns the file's definition of that kind and name.
func (c *catalog) inFile(kind, name string) (issuer.Defined, bool) {
	for _, d := range c.file[kind] {
		if d.Name == name {
			return d, true
		}
	}
	return issuer.Defined{}, false
}

// Source implements issuer.Definitions.
func (c *catalog) Source(ctx context.Context, name string) (idforge.Generator, error) {
	o, err := c.get(ctx, KindSource, name)
	if err != nil {
		return nil, err
	}
	return liveSource{o}, nil
}

// Counter implements issuer.Definitions.
func (c *catalog) Counter(ctx context.Context, name string) (idforge.PeriodCounter, error) {
	o, err := c.get(ctx, KindCounter, name)
	if err != nil {
		return nil, err
	}
	return liveCounter{o}, nil
}

// get returns the opened definition, reading and opening it the first
// time. A retired definition is opened for nothing: it answers
// ErrRetired.
func (c *catalog) get(ctx context.Context, kind, name string) (*opened, error) {
	key := kind + "/" + name
	if o, ok := c.cached(key); ok {
		return o, nil
	}
	c.openMu.Lock()
	defer c.openMu.Unlock()
	if o, ok := c.cached(key); ok {
		return o, nil
	}
	d, inFile := c.fileCounters[name]
	if !inFile || kind != KindCounter {
		ds, err := c.store()
		if err != nil {
			return nil, fmt.Errorf("%w: %s %q", idforge.ErrUnknownKey, kind, name)
		}
		d, err = ds.Definition(ctx, kind, name)
		if errors.Is(err, idforge.ErrInvalidArgument) { // a store not migrated: nothing defined
			return nil, fmt.Errorf("%w: %s %q", idforge.ErrUnknownKey, kind, name)
		}
		if err != nil {
			return nil, err
		}
	}
	if d.Retired {
		o := &opened{kind: kind, name: name}
		o.retired.Store(true)
		return o, nil
	}
	o, err := c.open(ctx, d, true)
	if err != nil {
		return nil, fmt.Errorf("%w: %s %q: %w", idforge.ErrUnavailable, kind, name, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		o.close()
		return nil, idforge.ErrClosed
	}
	c.opened[key] = o
	return o, nil
}

// cached returns the definition opened under key, if any.
func (c *catalog) cached(key string) (*opened, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	o, ok := c.opened[key]
	return o, ok
}

// open opens a stored definition as the node opens the file's; observe
// registers its metrics.
func (c *catalog) open(ctx context.Context, d idforge.Definition, observe bool) (*opened, error) {
	v, err := parse(d)
	if err != nil {
		return nil, err
	}
	o := &opened{kind: d.Kind, name: d.Name}
	switch v := v.(type) {
	case Source:
		m := c.metrics
		if !observe {
			m = nil
		}
		o.gen, o.closers, err = openSource(ctx, v, c.dataDir, c.log, m)
	case Counter:
		var sc io.Closer
		o.ctr, sc, err = openCounter(ctx, v, c.dataDir)
		o.closers = []io.Closer{sc}
	}
	if err != nil {
		return nil, err
	}
	return o, nil
}

// parse reads a definition's Spec for its kind and validates it.
func parse(d idforge.Definition) (any, error) {
	switch d.Kind {
	case KindSource:
		src := Source{Name: d.Name}
		if err := src.UnmarshalJSON([]byte(d.Spec)); err != nil {
			return nil, fmt.Errorf("source %q: %w", d.Name, err)
		}
		return src, src.Validate()
	case KindCounter:
		ctr := Counter{Name: d.Name}
		if err := ctr.UnmarshalJSON([]byte(d.Spec)); err != nil {
			return nil, fmt.Errorf("counter %q: %w", d.Name, err)
		}
		return ctr, ctr.Validate()
	}
	return nil, checkKind(d.Kind)
}

// Define implements issuer.Definitions: the kind is known, the spec is
// sound, the name is taken by nothing a template or a request could mean
// (a key, a source or counter of the file or the store, retired ones
// included), and the backend answers within CheckTimeout; then it is
// stored, in canonical JSON.
func (c *catalog) Define(ctx context.Context, d idforge.Definition) error {
	if err := checkKind(d.Kind); err != nil {
		return err
	}
	if err := idforge.ValidateKeyName(d.Name); err != nil {
		return fmt.Errorf("%s name: %w", d.Kind, err)
	}
	v, err := parse(d)
	if err != nil {
		return err
	}
	canonical, _ := strictjson.Marshal(v)
	d.Spec = string(canonical)
	if err := d.Validate(); err != nil {
		return err
	}
	ds, err := c.store()
	if err != nil {
		return err
	}
	if err := c.nameFree(ctx, ds, d.Kind, d.Name); err != nil {
		return err
	}
	// Reach the backend: open it (which connects) and close it again;
	// nothing is counted.
	check := d
	if src, ok := v.(Source); ok && src.Expand > 0 {
		// The expansion's prefetcher would draw values for nothing.
		src.Expand = 0
		spec, _ := strictjson.Marshal(src)
		check.Spec = string(spec)
	}
	cctx, cancel := context.WithTimeout(ctx, CheckTimeout)
	defer cancel()
	o, err := c.open(cctx, check, false)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if errors.Is(err, idforge.ErrInvalidArgument) {
			return fmt.Errorf("%s %q: %w", d.Kind, d.Name, err)
		}
		return fmt.Errorf("%w: %s %q: its backend was not reached within %v: %v", idforge.ErrInvalidArgument, d.Kind, d.Name, CheckTimeout, err)
	}
	o.close()
	if err := ds.CreateDefinition(ctx, d); err != nil {
		return idforge.BackendError(err)
	}
	if d.Kind == KindSource {
		// Serve it from now on, as the file's sources are served from
		// the start: open, with its health in Sources.
		c.openLive(ctx, d.Name)
	}
	return nil
}

// openLive opens a live source of the store for serving, logging a
// failure (a request for it tries again, and answers the error).
func (c *catalog) openLive(ctx context.Context, name string) {
	if c.metrics == nil {
		return // a command's catalog serves nothing
	}
	if _, err := c.get(ctx, KindSource, name); err != nil {
		c.log.Warn("opening a source defined through the API failed; a request for it tries again", "source", name, "err", err)
	}
}

// Opened implements issuer.Definitions.
func (c *catalog) Opened() map[string]idforge.Generator {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]idforge.Generator{}
	for _, o := range c.opened {
		if o.kind == KindSource && !o.retired.Load() && o.gen != nil {
			out[o.name] = o.gen
		}
	}
	return out
}

// nameFree refuses a name that something else a request or a template
// resolves answers to.
func (c *catalog) nameFree(ctx context.Context, ds idforge.DefinitionStore, kind, name string) error {
	for _, k := range []string{KindSource, KindCounter} {
		if _, ok := c.inFile(k, name); ok {
			return fmt.Errorf("%w: %s %q is defined in the configuration file", idforge.ErrKeyExists, k, name)
		}
		d, err := ds.Definition(ctx, k, name)
		switch {
		case err == nil && d.Retired:
			return fmt.Errorf("%w: %s %q was retired; its name is never used again (choose a new one)", idforge.ErrKeyExists, k, name)
		case err == nil:
			return fmt.Errorf("%w: %s %q is already defined", idforge.ErrKeyExists, k, name)
		case !errors.Is(err, idforge.ErrUnknownKey):
			return idforge.BackendError(err)
		}
	}
	if _, err := c.st.Key(ctx, name); err == nil {
		return fmt.Errorf("%w: %q is a key; a %s of that name could not be told from it", idforge.ErrKeyExists, name, kind)
	} else if !errors.Is(err, idforge.ErrUnknownKey) {
		return idforge.BackendError(err)
	}
	return nil
}

// Retire implements issuer.Definitions: the store marks it retired and
// this node stops at once; the others within the re-check interval.
func (c *catalog) Retire(ctx context.Context, kind, name string) error {
	if err := checkKind(kind); err != nil {
		return err
	}
	if err := idforge.ValidateKeyName(name); err != nil {
		return err
	}
	if _, ok := c.inFile(kind, name); ok {
		return fmt.Errorf("%w: %s %q is defined in the configuration file; remove it there", idforge.ErrInvalidArgument, kind, name)
	}
	ds, err := c.store()
	if err != nil {
		return err
	}
	if err := ds.RetireDefinition(ctx, kind, name); err != nil {
		return idforge.BackendError(err)
	}
	c.retireLocal(kind, name)
	return nil
}

// retireLocal stops serving an opened definition and releases it.
func (c *catalog) retireLocal(kind, name string) {
	c.mu.Lock()
	o := c.opened[kind+"/"+name]
	c.mu.Unlock()
	if o != nil && !o.retired.Swap(true) {
		c.log.Info(kind+" retired; it issues nothing more on this node", "name", name)
		o.close()
	}
}

// Defined implements issuer.Definitions.
func (c *catalog) Defined(ctx context.Context, kind, name string) (issuer.Defined, error) {
	if err := checkKind(kind); err != nil {
		return issuer.Defined{}, err
	}
	if err := idforge.ValidateKeyName(name); err != nil {
		return issuer.Defined{}, err
	}
	if d, ok := c.inFile(kind, name); ok {
		return d, nil
	}
	ds, err := c.store()
	if err != nil {
		return issuer.Defined{}, fmt.Errorf("%w: %s %q", idforge.ErrUnknownKey, kind, name)
	}
	d, err := ds.Definition(ctx, kind, name)
	if err != nil {
		return issuer.Defined{}, idforge.BackendError(err)
	}
	return redacted(issuer.Defined{Definition: d, Origin: idforge.OriginAPI}), nil
}

// redacted hides the passwords of a definition's URLs, for showing it.
func redacted(d issuer.Defined) issuer.Defined {
	v, err := parse(d.Definition)
	if v == nil || err != nil && !errors.Is(err, idforge.ErrInvalidArgument) {
		return d
	}
	switch v := v.(type) {
	case Source:
		v.URL, v.DatePacked = redactURL(v.URL), redactURL(v.DatePacked)
		v.Balance = slices.Clone(v.Balance)
		for i, u := range v.Balance {
			v.Balance[i] = redactURL(u)
		}
		spec, _ := strictjson.Marshal(v)
		d.Spec = string(spec)
	case Counter:
		v.URL = redactURL(v.URL)
		spec, _ := strictjson.Marshal(v)
		d.Spec = string(spec)
	}
	return d
}

// redactURL is dsn.RedactedString, keeping "" empty.
func redactURL(u string) string {
	if u == "" {
		return ""
	}
	return dsn.RedactedString(u)
}

// List implements issuer.Definitions.
func (c *catalog) List(ctx context.Context, kind string) ([]issuer.Defined, error) {
	if err := checkKind(kind); err != nil {
		return nil, err
	}
	out := slices.Clone(c.file[kind])
	if ds, err := c.store(); err == nil {
		defs, err := ds.Definitions(ctx, kind)
		if err != nil && !errors.Is(err, idforge.ErrInvalidArgument) {
			return nil, idforge.BackendError(err)
		}
		for _, d := range defs {
			out = append(out, redacted(issuer.Defined{Definition: d, Origin: idforge.OriginAPI}))
		}
	}
	slices.SortStableFunc(out, func(a, b issuer.Defined) int { return cmp.Compare(a.Name, b.Name) })
	return out, nil
}

// recheckOnce re-reads the store's sources, and its counters when this
// node has opened one: it stops those retired meanwhile and, on a node
// that serves them, opens the live sources another node defined (so that
// every node reports their health, as it does the file's). The catalog
// runs it every recheck. It logs its failures itself: the node serves
// what it knows.
func (c *catalog) recheckOnce(ctx context.Context) error {
	c.mu.Lock()
	kinds := map[string]bool{KindSource: true}
	for _, o := range c.opened {
		if !o.retired.Load() {
			kinds[o.kind] = true
		}
	}
	c.mu.Unlock()
	ds, err := c.store()
	if err != nil {
		return nil
	}
	for kind := range kinds {
		defs, err := ds.Definitions(ctx, kind)
		if errors.Is(err, idforge.ErrInvalidArgument) {
			continue // a database not migrated to keep definitions holds none
		}
		if err != nil {
			c.log.Warn("re-reading definitions from the store failed; serving what this node knows", "kind", kind, "err", err)
			continue
		}
		for _, d := range defs {
			switch _, open := c.cached(kind + "/" + d.Name); {
			case d.Retired:
				c.retireLocal(kind, d.Name)
			case kind == KindSource && !open:
				c.openLive(ctx, d.Name)
			}
		}
	}
	return nil
}

// Close stops the re-check and closes every opened definition.
func (c *catalog) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.stop()
	all := c.opened
	c.opened = map[string]*opened{}
	c.mu.Unlock()
	<-c.done
	var errs []error
	for _, o := range all {
		if !o.retired.Swap(true) {
			errs = append(errs, o.close())
		}
	}
	return errors.Join(errs...)
}
