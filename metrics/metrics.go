// Package metrics exports idforge's state to Prometheus.
//
// Everything per key is read from the allocators' snapshots when Prometheus
// scrapes, so issuing an ID pays nothing for metrics; only claim latencies
// and store errors are recorded as they happen (claims are rare).
package metrics

import (
	"errors"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/issuer"
	"github.com/idforge/idforge/segment"
	"github.com/idforge/idforge/sequence"
)

// Metrics holds the registry of one node.
type Metrics struct {
	reg          *prometheus.Registry
	claimTime    *prometheus.HistogramVec
	storeErrors  *prometheus.CounterVec
	failedOver   *prometheus.GaugeVec
	httpRequests *prometheus.CounterVec
	httpTime     *prometheus.HistogramVec
	sources      *sourceCollector
}

// New returns the node's metrics with Go runtime and process collectors
// registered. Pass OnClaim to segment.Settings, then call Observe once the
// issuer exists.
func New() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		claimTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "idforge_segment_claim_duration_seconds",
			Help:    "Time taken by successful segment claims in the store.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
		}, []string{"key"}),
		storeErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "idforge_store_errors_total",
			Help: "Failed segment claims (the store was down, slow or refused).",
		}, []string{"key"}),
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
			Help: "1 while the key's claims are refused because the store failed over and may lack claims already made (error store_failed_over; run `idforge keys repair`), 0 once a claim succeeds.",
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
		m.storeErrors.WithLabelValues(key).Inc()
		if errors.Is(err, idforge.ErrStoreFailedOver) {
			m.failedOver.WithLabelValues(key).Set(1)
		}
		return
	}
	m.failedOver.WithLabelValues(key).Set(0)
	m.claimTime.WithLabelValues(key).Observe(took.Seconds())
}

// Observe registers the per-key and snowflake metrics of iss.
func (m *Metrics) Observe(iss *issuer.Issuer) {
	m.reg.MustRegister(&collector{iss: iss})
}

// ObserveSource exports the status of the sequence source called name
// (see sequence.Status; a compose.Balanced, compose.Expanded or
// tickets.Source): its health, calls, failures and latest error's time,
// each member's state, rescue time left, calls and failures, the
// prefetch buffer of an expansion and ticket servers' highest tickets.
// The status is read at every scrape. Observing a name twice replaces
// the first.
func (m *Metrics) ObserveSource(name string, s sequence.StatusReporter) {
	m.sources.mu.Lock()
	defer m.sources.mu.Unlock()
	for i, o := range m.sources.list {
		if o.name == name {
			m.sources.list[i].src = s
			return
		}
	}
	m.sources.list = append(m.sources.list, namedSource{name, s})
}

// InstrumentHTTP wraps h so that every request it answers is counted in
// idforge_http_requests_total and timed in
// idforge_http_request_duration_seconds. The handler label is the path
// for the probes (/healthz, /readyz, /metrics) and "api" for everything
// else, so that a client cannot make up label values.
func (m *Metrics) InstrumentHTTP(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w, code: http.StatusOK}
		h.ServeHTTP(rec, r)
		handler := "api"
		switch r.URL.Path {
		case "/healthz", "/readyz", "/metrics":
			handler = r.URL.Path
		}
		m.httpRequests.WithLabelValues(handler, strconv.Itoa(rec.code)).Inc()
		m.httpTime.WithLabelValues(handler).Observe(time.Since(start).Seconds())
	})
}

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
		"1 while a member of a sequence source (balanced, ticket servers) is ejected (failing or too often slow) or exhausted, else 0.", []string{"source", "member"}, nil)
	descEjections = prometheus.NewDesc("idforge_source_member_ejections_total",
		"Times a member of a balanced sequence source was ejected.", []string{"source", "member"}, nil)
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

// sourceCollector reads the sources' status at scrape time.
type sourceCollector struct {
	mu   sync.Mutex
	list []namedSource
}

type namedSource struct {
	name string
	src  sequence.StatusReporter
}

func (c *sourceCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descEjected, descEjections, descMemberErrors, descMemberCalls, descRescue, descHighest,
		descHealth, descCalls, descFailures, descLastError, descPrefetchIDs, descPrefetchBlocks, descPrefetchRate} {
		ch <- d
	}
}

func (c *sourceCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	list := c.list
	c.mu.Unlock()
	for _, s := range list {
		st := s.src.Status()
		gauge := func(d *prometheus.Desc, v float64, labels ...string) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, append([]string{s.name}, labels...)...)
		}
		counter := func(d *prometheus.Desc, v uint64, labels ...string) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), append([]string{s.name}, labels...)...)
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
				if mb.State != "admitted" {
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
	iss *issuer.Issuer
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, m := range keyMetrics {
		ch <- m.desc
	}
	for _, d := range []*prometheus.Desc{descBudget, descSnowIssued, descSnowInfo, descSnowExpiry, descLeaseUntil, descBackwards} {
		ch <- d
	}
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	for _, k := range c.iss.Active() {
		st := k.Segment
		if st == nil {
			continue
		}
		for _, m := range keyMetrics {
			ch <- prometheus.MustNewConstMetric(m.desc, m.kind, m.value(st), k.Name)
		}
		if st.OutageBudget > 0 {
			ch <- prometheus.MustNewConstMetric(descBudget, prometheus.GaugeValue, st.OutageBudget.Seconds(), k.Name)
		}
	}
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
