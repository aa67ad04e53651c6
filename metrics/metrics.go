// Package metrics exports idforge's state to Prometheus.
//
// Everything per key is read from the allocators' snapshots when Prometheus
// scrapes, so issuing an ID pays nothing for metrics; only claim latencies
// and store errors are recorded as they happen (claims are rare).
//
// A scrape's size does not grow with the number of keys: the aggregate
// series (idforge_segment_keys, idforge_segment_all_*) cover every segment
// key, and the per-key series are exported for at most Options.PerKey keys,
// those in trouble first, then the busiest.
package metrics

import (
	"cmp"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/issuer"
	"github.com/idforge/idforge/segment"
	"github.com/idforge/idforge/sequence"
)

// DefaultPerKey is how many segment keys get their own series when
// Options.PerKey is 0; MaxPerKey is the most Options.PerKey may ask for.
const (
	DefaultPerKey = 100
	MaxPerKey     = 10_000
)

// Options configure the metrics.
type Options struct {
	// PerKey is how many segment keys get their own series
	// (idforge_ids_issued_total{key}, idforge_segment_*{key}): the keys
	// whose claims fail or whose buffers are below their outage budget
	// first, then those issuing the most, then by name. 0 means
	// DefaultPerKey, a negative number none; above MaxPerKey means
	// MaxPerKey. The aggregate series cover every key regardless.
	PerKey int
}

// Metrics holds the registry of one node.
type Metrics struct {
	perKey       int
	reg          *prometheus.Registry
	claimTime    *prometheus.HistogramVec
	storeErrors  *prometheus.CounterVec
	failedOver   *prometheus.GaugeVec
	httpRequests *prometheus.CounterVec
	httpTime     *prometheus.HistogramVec
	sources      *sourceCollector
}

// New returns the node's metrics with the default Options.
func New() *Metrics { return NewWithOptions(Options{}) }

// NewWithOptions returns the node's metrics with Go runtime and process
// collectors registered. Pass OnClaim to segment.Settings, then call
// Observe once the issuer exists.
func NewWithOptions(opts Options) *Metrics {
	perKey := opts.PerKey
	switch {
	case perKey == 0:
		perKey = DefaultPerKey
	case perKey < 0:
		perKey = 0
	}
	m := &Metrics{
		perKey: min(perKey, MaxPerKey),
		reg:    prometheus.NewRegistry(),
		claimTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "idforge_segment_claim_duration_seconds",
			Help:    "Time taken by successful segment claims in the store, all keys.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
		}, nil),
		storeErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "idforge_store_errors_total",
			Help: "Failed segment claims (the store was down, slow or refused), all keys.",
		}, nil),
		httpRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "idforge_http_requests_total",
			Help: "HTTP requests answered, by handler (api, or the probe path) and status code.",
		}, []string{"handler", "code"}),
		httpTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "idforge_http_request_duration_seconds",
			Help:    "Time from a request's arrival to the end of its answer, by handler (api, or the probe path).",
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
		}, []string{"handler"}),
		failedOver: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "idforge_store_failover_detected",
			Help: "1 while the key's claims are refused because the store failed over and may lack claims already made (error store_failed_over; run `idforge keys repair`); absent once a claim succeeds.",
		}, []string{"key"}),
		sources: &sourceCollector{},
	}
	m.reg.MustRegister(m.claimTime, m.storeErrors, m.failedOver, m.httpRequests, m.httpTime, m.sources,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// OnClaim records one claim attempt; it has the signature of
// segment.Settings.OnClaim.
func (m *Metrics) OnClaim(key string, took time.Duration, err error) {
	if err != nil {
		m.storeErrors.WithLabelValues().Inc()
		if errors.Is(err, idforge.ErrStoreFailedOver) {
			m.failedOver.WithLabelValues(key).Set(1)
		}
		return
	}
	// Only the keys refused now have a series: a node with many keys
	// does not keep one per key that ever claimed.
	m.failedOver.DeleteLabelValues(key)
	m.claimTime.WithLabelValues().Observe(took.Seconds())
}

// Observe registers the metrics of iss: per key, of the snowflake
// generator, and of every open sequence source that reports its status
// (issuer.Issuer.Sources, the registry every health surface reads; a
// compose.Balanced, compose.Expanded or tickets.Source): its health,
// calls, failures and latest error's time, each member's state, rescue
// time left, calls and failures, the prefetch buffer of an expansion and
// ticket servers' highest tickets. Everything is read at every scrape.
func (m *Metrics) Observe(iss *issuer.Issuer) {
	m.sources.iss.Store(iss)
	m.reg.MustRegister(&collector{iss: iss, perKey: m.perKey})
}

// InstrumentHTTP wraps h so that every request it answers is counted in
// idforge_http_requests_total and timed in
// idforge_http_request_duration_seconds. The handler label is the path
// for the probes (/healthz, /readyz, /metrics) and "api" for everything
// else, so that a client cannot make up label values.
//
// The series are bound once per handler label and status code, so a
// request costs two atomic adds and a clock read, not a label lookup.
func (m *Metrics) InstrumentHTTP(h http.Handler) http.Handler {
	routes := map[string]*httpRoute{}
	for _, name := range httpHandlers {
		routes[name] = &httpRoute{name: name, time: m.httpTime.WithLabelValues(name)}
	}
	api := &httpRoute{name: "api", time: m.httpTime.WithLabelValues("api")}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := recorders.Get().(*statusRecorder)
		*rec = statusRecorder{ResponseWriter: w, code: http.StatusOK}
		h.ServeHTTP(rec, r)
		code := rec.code
		*rec = statusRecorder{}
		recorders.Put(rec)
		route := api
		if len(r.URL.Path) < 10 { // the longest probe path, "/healthz"
			if p, ok := routes[r.URL.Path]; ok {
				route = p
			}
		}
		route.requests(m.httpRequests, code).Inc()
		route.time.Observe(time.Since(start).Seconds())
	})
}

// httpHandlers are the handler label values other than "api": the probes.
var httpHandlers = []string{"/healthz", "/readyz", "/metrics"}

// httpRoute holds the bound series of one handler label: its duration
// histogram and, filled in as each status code is first answered, its
// request counters.
type httpRoute struct {
	name  string
	time  prometheus.Observer
	codes [600]atomic.Pointer[prometheus.Counter]
}

// requests returns the request counter of the route and status code.
func (r *httpRoute) requests(vec *prometheus.CounterVec, code int) prometheus.Counter {
	if code < 0 || code >= len(r.codes) {
		return vec.WithLabelValues(r.name, strconv.Itoa(code))
	}
	c := r.codes[code].Load()
	if c == nil {
		// Two requests racing here bind the same child of vec.
		bound := vec.WithLabelValues(r.name, strconv.Itoa(code))
		c = &bound
		r.codes[code].Store(c)
	}
	return *c
}

// recorders recycles statusRecorders: a request needs one only while
// the handler runs.
var recorders = sync.Pool{New: func() any { return new(statusRecorder) }}

// statusRecorder remembers the status code a handler wrote.
type statusRecorder struct {
	http.ResponseWriter
	code  int
	wrote bool
}

func (s *statusRecorder) WriteHeader(code int) {
	if !s.wrote {
		s.code, s.wrote = code, true
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	s.wrote = true
	return s.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection (flushes,
// deadlines) through the recorder.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// Registerer is where plugins register their own metrics.
func (m *Metrics) Registerer() prometheus.Registerer { return m.reg }

// Handler serves the metrics in Prometheus' text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// keyMetric is a metric of each active segment key, labelled by key and
// read from the key's segment.Stats.
type keyMetric struct {
	desc  *prometheus.Desc
	kind  prometheus.ValueType
	value func(*segment.Stats) float64
}

func newKeyMetric(name, help string, kind prometheus.ValueType, value func(*segment.Stats) float64) keyMetric {
	return keyMetric{prometheus.NewDesc(name, help, []string{"key"}, nil), kind, value}
}

// keyMetrics are the per-key metrics: a new one needs only a line here.
var keyMetrics = []keyMetric{
	newKeyMetric("idforge_ids_issued_total", "IDs issued for a segment key by this node since it started.",
		prometheus.CounterValue, func(st *segment.Stats) float64 { return float64(st.Issued) }),
	newKeyMetric("idforge_segment_loads_total", "Segments claimed from the store.",
		prometheus.CounterValue, func(st *segment.Stats) float64 { return float64(st.Loads) }),
	newKeyMetric("idforge_segment_waits_total", "Calls that had to wait for a claim because nothing was buffered (the first call, and any after the buffers ran dry).",
		prometheus.CounterValue, func(st *segment.Stats) float64 { return float64(st.Waits) }),
	newKeyMetric("idforge_segment_step", "Length of the newest claimed segment.",
		prometheus.GaugeValue, func(st *segment.Stats) float64 { return float64(st.Step) }),
	newKeyMetric("idforge_segment_buffered_ids", "IDs left in the current and the prefetched segment.",
		prometheus.GaugeValue, func(st *segment.Stats) float64 { return float64(st.Buffered) }),
	newKeyMetric("idforge_segment_buffered_seconds", "How long the buffered IDs last at the current rate: how long a store outage would go unnoticed.",
		prometheus.GaugeValue, func(st *segment.Stats) float64 { return st.BufferedFor.Seconds() }),
	newKeyMetric("idforge_segment_rate", "Consumption rate in IDs per second over the current and previous segment.",
		prometheus.GaugeValue, func(st *segment.Stats) float64 { return st.Rate }),
	newKeyMetric("idforge_segment_failing_claims", "Consecutive failed claims (0 when the store is healthy).",
		prometheus.GaugeValue, func(st *segment.Stats) float64 { return float64(st.Failures) }),
}

// descBudget is the one per-key metric that is absent when its value is
// not set, so it stands outside keyMetrics.
var descBudget = prometheus.NewDesc("idforge_segment_outage_budget_seconds",
	"The store outage the key's buffers are sized to outlast (survive_outage); absent when not set.", []string{"key"}, nil)

// The aggregates over every segment key, exported whatever PerKey says.
var (
	descKeys = prometheus.NewDesc("idforge_segment_keys",
		"Segment keys this node has issued from (state active); of them, those whose claims fail (failing), whose buffers are below their outage budget (below_outage_budget), that have no IDs left while claims fail (out_of_ids), and that have their own per-key series (exported).", []string{"state"}, nil)
	descAllIssued = prometheus.NewDesc("idforge_segment_all_ids_issued_total",
		"IDs issued for every segment key by this node since it started.", nil, nil)
	descAllLoads = prometheus.NewDesc("idforge_segment_all_loads_total",
		"Segments claimed from the store, every key.", nil, nil)
	descAllWaits = prometheus.NewDesc("idforge_segment_all_waits_total",
		"Calls that had to wait for a claim, every key.", nil, nil)
)

// The snowflake generator's and the sequence sources' metrics.
var (
	descSnowIssued = prometheus.NewDesc("idforge_snowflake_ids_issued_total",
		"IDs issued by this node's snowflake generator (all snowflake keys share it).", nil, nil)
	descSnowInfo = prometheus.NewDesc("idforge_snowflake_info",
		"The snowflake generator's identity; the value is always 1.", []string{"layout", "worker", "datacenter"}, nil)
	descSnowExpiry = prometheus.NewDesc("idforge_snowflake_layout_expiry_timestamp_seconds",
		"When the layout's time bits run out; alert well before.", nil, nil)
	descLeaseUntil = prometheus.NewDesc("idforge_snowflake_lease_valid_until_timestamp_seconds",
		"Until when the worker ID's lease lets this node issue snowflake IDs (0 once the lease is lost); absent for a worker ID that needs no lease (static, file, k8s).", nil, nil)
	descBackwards = prometheus.NewDesc("idforge_snowflake_clock_backwards_total",
		"Times an ID was asked for while the clock was behind the newest issued time: outcome waited (a small step, waited out) or refused (clock_moved_backwards).", []string{"outcome"}, nil)
	descEjected = prometheus.NewDesc("idforge_source_member_ejected",
		"1 while a member of a sequence source (balanced, ticket servers, auto-increment tables) is ejected (failing or too often slow) or exhausted, else 0.", []string{"source", "member"}, nil)
	descEjections = prometheus.NewDesc("idforge_source_member_ejections_total",
		"Times a member of a sequence source (balanced, ticket servers, auto-increment tables) was ejected: set aside after failing, or too often slow.", []string{"source", "member"}, nil)
	descMemberErrors = prometheus.NewDesc("idforge_source_member_errors_total",
		"Failed calls of a member of a sequence source.", []string{"source", "member"}, nil)
	descMemberCalls = prometheus.NewDesc("idforge_source_member_calls_total",
		"Calls of a member of a sequence source, successful or not.", []string{"source", "member"}, nil)
	descRescue = prometheus.NewDesc("idforge_source_member_rescue_seconds",
		"How long an ejected member of a sequence source stays out (0 when admitted).", []string{"source", "member"}, nil)
	descHighest = prometheus.NewDesc("idforge_source_member_highest",
		"The highest value a member handed out (a ticket server's highest ticket); absent when not tracked.", []string{"source", "member"}, nil)
	descHealth = prometheus.NewDesc("idforge_source_health",
		"A sequence source's health: 0 up, 1 degraded (a member ejected, or failing with IDs left), 2 down (nothing left to issue from).", []string{"source"}, nil)
	descCalls = prometheus.NewDesc("idforge_source_calls_total",
		"Calls a sequence source made of its backends (members, inner source).", []string{"source"}, nil)
	descFailures = prometheus.NewDesc("idforge_source_failures_total",
		"Failed calls a sequence source made of its backends.", []string{"source"}, nil)
	descLastError = prometheus.NewDesc("idforge_source_last_error_timestamp_seconds",
		"When a sequence source last failed; absent when it never did.", []string{"source"}, nil)
	descPrefetchIDs = prometheus.NewDesc("idforge_source_prefetch_ids",
		"IDs a memory expansion holds ready (the current block's rest and the blocks fetched ahead).", []string{"source"}, nil)
	descPrefetchBlocks = prometheus.NewDesc("idforge_source_prefetch_blocks",
		"Blocks (inner values) a memory expansion has fetched ahead, by what: ready or target.", []string{"source", "what"}, nil)
	descPrefetchRate = prometheus.NewDesc("idforge_source_prefetch_rate",
		"The consumption rate a memory expansion measured, in IDs per second.", []string{"source"}, nil)
)

// healthValues are idforge_source_health's values.
var healthValues = map[sequence.Health]float64{sequence.Up: 0, sequence.Degraded: 1, sequence.Down: 2}

// sourceCollector reads the sources' status from the issuer (Observe)
// at scrape time.
type sourceCollector struct {
	iss atomic.Pointer[issuer.Issuer]
}

func (c *sourceCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descEjected, descEjections, descMemberErrors, descMemberCalls, descRescue, descHighest,
		descHealth, descCalls, descFailures, descLastError, descPrefetchIDs, descPrefetchBlocks, descPrefetchRate} {
		ch <- d
	}
}

func (c *sourceCollector) Collect(ch chan<- prometheus.Metric) {
	iss := c.iss.Load()
	if iss == nil {
		return
	}
	for _, s := range iss.Sources() {
		st := s.Status
		gauge := func(d *prometheus.Desc, v float64, labels ...string) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, append([]string{s.Name}, labels...)...)
		}
		counter := func(d *prometheus.Desc, v uint64, labels ...string) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), append([]string{s.Name}, labels...)...)
		}
		gauge(descHealth, healthValues[st.Health])
		counter(descCalls, st.Calls)
		counter(descFailures, st.Failures)
		if !st.LastErrorAt.IsZero() {
			gauge(descLastError, float64(st.LastErrorAt.UnixMilli())/1e3)
		}
		if p := st.Prefetch; p != nil {
			gauge(descPrefetchIDs, float64(p.IDs))
			gauge(descPrefetchBlocks, float64(p.Blocks), "ready")
			gauge(descPrefetchBlocks, float64(p.Target), "target")
			gauge(descPrefetchRate, p.Rate)
		}
		// The members of a composition, or of the source it wraps.
		for in := &st; in != nil; in = in.Inner {
			for _, mb := range in.Members {
				ejected := 0.0
				if !mb.Admitted() {
					ejected = 1
				}
				gauge(descEjected, ejected, mb.Name)
				gauge(descRescue, mb.RescueIn.Seconds(), mb.Name)
				counter(descEjections, mb.Ejections, mb.Name)
				counter(descMemberErrors, mb.Failures, mb.Name)
				counter(descMemberCalls, mb.Calls, mb.Name)
				if mb.Highest > 0 {
					gauge(descHighest, float64(mb.Highest), mb.Name)
				}
			}
		}
	}
}

// collector reads the issuer's snapshots at scrape time.
type collector struct {
	iss    *issuer.Issuer
	perKey int
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, m := range keyMetrics {
		ch <- m.desc
	}
	for _, d := range []*prometheus.Desc{descBudget, descKeys, descAllIssued, descAllLoads, descAllWaits, descSnowIssued, descSnowInfo, descSnowExpiry, descLeaseUntil, descBackwards} {
		ch <- d
	}
}

// keyTrouble reports whether a key's state wants attention: its claims
// fail, or its buffers last less than its outage budget while it issues.
func keyTrouble(st *segment.Stats) bool {
	return st.Failures > 0 || (st.OutageBudget > 0 && st.Rate > 0 && st.BufferedFor < st.OutageBudget)
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	var (
		keys                 []issuer.KeyState
		failing, below, dry  int
		issued, loads, waits int64
	)
	for _, k := range c.iss.Active() {
		st := k.Segment
		if st == nil {
			continue
		}
		keys = append(keys, k)
		issued, loads, waits = issued+st.Issued, loads+st.Loads, waits+st.Waits
		if st.Failures > 0 {
			failing++
			if st.Buffered == 0 {
				dry++
			}
		}
		if st.OutageBudget > 0 && st.Rate > 0 && st.BufferedFor < st.OutageBudget {
			below++
		}
	}
	active := len(keys)
	if len(keys) > c.perKey {
		// Trouble first, then the busiest, then by name (Active's order,
		// kept by the stable sort).
		slices.SortStableFunc(keys, func(a, b issuer.KeyState) int {
			if ta, tb := keyTrouble(a.Segment), keyTrouble(b.Segment); ta != tb {
				if ta {
					return -1
				}
				return 1
			}
			return cmp.Or(cmp.Compare(b.Segment.Rate, a.Segment.Rate), cmp.Compare(b.Segment.Issued, a.Segment.Issued))
		})
		keys = keys[:c.perKey]
	}
	for _, k := range keys {
		st := k.Segment
		for _, m := range keyMetrics {
			ch <- prometheus.MustNewConstMetric(m.desc, m.kind, m.value(st), k.Name)
		}
		if st.OutageBudget > 0 {
			ch <- prometheus.MustNewConstMetric(descBudget, prometheus.GaugeValue, st.OutageBudget.Seconds(), k.Name)
		}
	}
	for state, n := range map[string]int{"active": active, "failing": failing, "below_outage_budget": below, "out_of_ids": dry, "exported": len(keys)} {
		ch <- prometheus.MustNewConstMetric(descKeys, prometheus.GaugeValue, float64(n), state)
	}
	ch <- prometheus.MustNewConstMetric(descAllIssued, prometheus.CounterValue, float64(issued))
	ch <- prometheus.MustNewConstMetric(descAllLoads, prometheus.CounterValue, float64(loads))
	ch <- prometheus.MustNewConstMetric(descAllWaits, prometheus.CounterValue, float64(waits))
	if g := c.iss.Snowflake(); g != nil {
		l := g.Layout()
		ch <- prometheus.MustNewConstMetric(descSnowIssued, prometheus.CounterValue, float64(g.Issued()))
		ch <- prometheus.MustNewConstMetric(descSnowInfo, prometheus.GaugeValue, 1,
			l.Name, strconv.FormatInt(g.Worker(), 10), strconv.FormatInt(g.Datacenter(), 10))
		ch <- prometheus.MustNewConstMetric(descSnowExpiry, prometheus.GaugeValue, float64(l.Expires().Unix()))
		if until := g.ValidUntil(); !until.IsZero() {
			ch <- prometheus.MustNewConstMetric(descLeaseUntil, prometheus.GaugeValue, float64(max(until.UnixMilli(), 0))/1e3)
		}
		waits, refusals := g.ClockBackwards()
		ch <- prometheus.MustNewConstMetric(descBackwards, prometheus.CounterValue, float64(waits), "waited")
		ch <- prometheus.MustNewConstMetric(descBackwards, prometheus.CounterValue, float64(refusals), "refused")
	}
}

// ObserveBackwards exports backwards, a source's count of answers it
// refused because its counter went back below a value it had handed out
// (a fail-over to a replica that lacked the latest increments, a
// restore), as idforge_source_backwards_total{source}. Above zero it
// wants an operator: the source refuses until its counter is set above
// every value issued.
func (m *Metrics) ObserveBackwards(source string, backwards func() int64) {
	m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name:        "idforge_source_backwards_total",
		Help:        "Answers a sequence source refused because its counter went back below a value it had handed out (a fail-over that lost writes, a restore).",
		ConstLabels: prometheus.Labels{"source": source},
	}, func() float64 { return float64(backwards()) }))
}
