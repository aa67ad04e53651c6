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
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/issuer"
)

// Metrics holds the registry of one node.
type Metrics struct {
	reg         *prometheus.Registry
	claimTime   *prometheus.HistogramVec
	storeErrors *prometheus.CounterVec
	failedOver  *prometheus.GaugeVec
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
		failedOver: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "idforge_store_failover_detected",
			Help: "1 while the key's claims are refused because the store failed over and may lack claims already made (error store_failed_over; run `idforge keys repair`), 0 once a claim succeeds.",
		}, []string{"key"}),
	}
	m.reg.MustRegister(m.claimTime, m.storeErrors, m.failedOver,
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

// Registerer is where plugins register their own metrics.
func (m *Metrics) Registerer() prometheus.Registerer { return m.reg }

// Handler serves the metrics in Prometheus' text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

var (
	descIssued = prometheus.NewDesc("idforge_ids_issued_total",
		"IDs issued for a segment key by this node since it started.", []string{"key"}, nil)
	descLoads = prometheus.NewDesc("idforge_segment_loads_total",
		"Segments claimed from the store.", []string{"key"}, nil)
	descWaits = prometheus.NewDesc("idforge_segment_waits_total",
		"Calls that had to wait for a claim because nothing was buffered (the first call, and any after the buffers ran dry).", []string{"key"}, nil)
	descStep = prometheus.NewDesc("idforge_segment_step",
		"Length of the newest claimed segment.", []string{"key"}, nil)
	descBuffered = prometheus.NewDesc("idforge_segment_buffered_ids",
		"IDs left in the current and the prefetched segment.", []string{"key"}, nil)
	descBufferedFor = prometheus.NewDesc("idforge_segment_buffered_seconds",
		"How long the buffered IDs last at the current rate: how long a store outage would go unnoticed.", []string{"key"}, nil)
	descRate = prometheus.NewDesc("idforge_segment_rate",
		"Consumption rate in IDs per second over the current and previous segment.", []string{"key"}, nil)
	descFailures = prometheus.NewDesc("idforge_segment_failing_claims",
		"Consecutive failed claims (0 when the store is healthy).", []string{"key"}, nil)
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
	for _, d := range []*prometheus.Desc{descIssued, descLoads, descWaits, descStep, descBuffered,
		descBufferedFor, descRate, descFailures, descSnowIssued, descSnowInfo, descSnowExpiry} {
		ch <- d
	}
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	for _, k := range c.iss.Active() {
		st := k.Segment
		if st == nil {
			continue
		}
		ch <- prometheus.MustNewConstMetric(descIssued, prometheus.CounterValue, float64(st.Issued), k.Name)
		ch <- prometheus.MustNewConstMetric(descLoads, prometheus.CounterValue, float64(st.Loads), k.Name)
		ch <- prometheus.MustNewConstMetric(descWaits, prometheus.CounterValue, float64(st.Waits), k.Name)
		ch <- prometheus.MustNewConstMetric(descStep, prometheus.GaugeValue, float64(st.Step), k.Name)
		ch <- prometheus.MustNewConstMetric(descBuffered, prometheus.GaugeValue, float64(st.Buffered), k.Name)
		ch <- prometheus.MustNewConstMetric(descBufferedFor, prometheus.GaugeValue, st.BufferedFor.Seconds(), k.Name)
		ch <- prometheus.MustNewConstMetric(descRate, prometheus.GaugeValue, st.Rate, k.Name)
		ch <- prometheus.MustNewConstMetric(descFailures, prometheus.GaugeValue, float64(st.Failures), k.Name)
	}
	if g := c.iss.Snowflake(); g != nil {
		l := g.Layout()
		ch <- prometheus.MustNewConstMetric(descSnowIssued, prometheus.CounterValue, float64(g.Issued()))
		ch <- prometheus.MustNewConstMetric(descSnowInfo, prometheus.GaugeValue, 1,
			l.Name, strconv.FormatInt(g.Worker(), 10), strconv.FormatInt(g.Datacenter(), 10))
		ch <- prometheus.MustNewConstMetric(descSnowExpiry, prometheus.GaugeValue, float64(l.Expires().Unix()))
	}
}
