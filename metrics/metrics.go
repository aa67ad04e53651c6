// Package metrics exports idforge's state to Prometheus.
//
// Everything per key is read from the allocators' snapshots when Prometheus
// scrapes, so issuing an ID pays nothing for metrics; only claim latencies
// and store errors are recorded as they happen (claims are rare).
package metrics

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/idforge/idforge/issuer"
	"github.com/idforge/idforge/segment"
)

// Metrics holds the registry of one node.
type Metrics struct {
	reg         *prometheus.Registry
	claimTime   *prometheus.HistogramVec
	storeErrors *prometheus.CounterVec
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
	}
	m.reg.MustRegister(m.claimTime, m.storeErrors,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// OnClaim records one claim attempt; it has the signature of
// segment.Settings.OnClaim.
func (m *Metrics) OnClaim(key string, took time.Duration, err error) {
	if err != nil {
		m.storeErrors.WithLabelValues(key).Inc()
		return
	}
	m.claimTime.WithLabelValues(key).Observe(took.Seconds())
}

// Observe registers the per-key and snowflake metrics of iss.
func (m *Metrics) Observe(iss *issuer.Issuer) {
	m.reg.MustRegister(&collector{iss: iss})
}

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

// The snowflake generator's metrics.
var (
	descSnowIssued = prometheus.NewDesc("idforge_snowflake_ids_issued_total",
		"IDs issued by this node's snowflake generator (all snowflake keys share it).", nil, nil)
	descSnowInfo = prometheus.NewDesc("idforge_snowflake_info",
		"The snowflake generator's identity; the value is always 1.", []string{"layout", "worker", "datacenter"}, nil)
	descSnowExpiry = prometheus.NewDesc("idforge_snowflake_layout_expiry_timestamp_seconds",
		"When the layout's time bits run out; alert well before.", nil, nil)
)

// collector reads the issuer's snapshots at scrape time.
type collector struct {
	iss *issuer.Issuer
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, m := range keyMetrics {
		ch <- m.desc
	}
	for _, d := range []*prometheus.Desc{descSnowIssued, descSnowInfo, descSnowExpiry} {
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
	}
	if g := c.iss.Snowflake(); g != nil {
		l := g.Layout()
		ch <- prometheus.MustNewConstMetric(descSnowIssued, prometheus.CounterValue, float64(g.Issued()))
		ch <- prometheus.MustNewConstMetric(descSnowInfo, prometheus.GaugeValue, 1,
			l.Name, strconv.FormatInt(g.Worker(), 10), strconv.FormatInt(g.Datacenter(), 10))
		ch <- prometheus.MustNewConstMetric(descSnowExpiry, prometheus.GaugeValue, float64(l.Expires().Unix()))
	}
}
