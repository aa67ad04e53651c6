package metrics_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/issuer"
	"github.com/idforge/idforge/metrics"
	"github.com/idforge/idforge/store/memstore"
)

// InstrumentHTTP counts and times every request a handler answers, by
// handler ("api", or the probe's path) and status code.
func ExampleMetrics_InstrumentHTTP() {
	m := metrics.New()
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/ids/gone" {
			http.Error(w, "unavailable", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, 42)
	})
	h := m.InstrumentHTTP(api)
	for _, path := range []string{"/v1/ids/order", "/v1/ids/order", "/v1/ids/gone", "/healthz"} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", path, nil))
	}

	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for _, line := range strings.Split(rec.Body.String(), "\n") {
		if strings.HasPrefix(line, "idforge_http_requests_total{") {
			fmt.Println(line)
		}
	}
	// Output:
	// idforge_http_requests_total{code="200",handler="/healthz"} 1
	// idforge_http_requests_total{code="200",handler="api"} 2
	// idforge_http_requests_total{code="503",handler="api"} 1
}

// Observe exports the status of the issuer's sources: here a balanced
// source whose second member fails (its allocator is closed), so the
// first call ejects it and the source is degraded.
func ExampleMetrics_Observe_sources() {
	ctx := context.Background()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	st := memstore.New()
	bal, closeAll, err := halfDownSource(ctx, st, quiet)
	if err != nil {
		panic(err)
	}
	defer closeAll()

	m := metrics.New()
	iss := issuer.New(st, nil, issuer.Settings{Logger: quiet, Sources: map[string]idforge.Generator{"tickets": bal}})
	defer iss.Close()
	m.Observe(iss)
	for range 2 {
		iss.Next(ctx, "tickets")
	}
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for _, line := range strings.Split(rec.Body.String(), "\n") {
		if strings.HasPrefix(line, "idforge_source_member_ejected{") || strings.HasPrefix(line, "idforge_source_health{") {
			fmt.Println(line)
		}
	}
	// Output:
	// idforge_source_health{source="tickets"} 1
	// idforge_source_member_ejected{member="down",source="tickets"} 1
	// idforge_source_member_ejected{member="up",source="tickets"} 0
}
