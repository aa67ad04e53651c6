package metrics_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/fakeclock"
	"github.com/idforge/idforge/issuer"
	"github.com/idforge/idforge/metrics"
	"github.com/idforge/idforge/segment"
	"github.com/idforge/idforge/sequence/compose"
	"github.com/idforge/idforge/snowflake"
	"github.com/idforge/idforge/store/memstore"
)

// halfDownSource returns a balanced source over segment keys "a" and "b"
// of st (created here), named "up" and "down", whose member "down" is
// closed: the first call that reaches it fails and ejects it. closeAll
// closes the source and its members.
func halfDownSource(ctx context.Context, st *memstore.Store, log *slog.Logger) (bal *compose.Balanced, closeAll func(), err error) {
	for _, name := range []string{"a", "b"} {
		st.CreateKey(ctx, idforge.Key{Name: name, Strategy: idforge.StrategySegment, Step: 10, MaxID: 1})
	}
	up := segment.New(st, "a", segment.Settings{Logger: log})
	down := segment.New(st, "b", segment.Settings{Logger: log})
	down.Close()
	bal, err = compose.NewBalanced([]idforge.Generator{up, down}, compose.BalancedOptions{Names: []string{"up", "down"}, Logger: log})
	if err != nil {
		up.Close()
		return nil, nil, err
	}
	return bal, func() { bal.Close(); up.Close() }, nil
}

// TestScrapeOperations checks the series the alerting rules in
// deploy/prometheus read besides the per-key ones: HTTP requests by
// handler and code, the snowflake lease and clock steps back, and the
// members of a balanced source.
func TestScrapeOperations(t *testing.T) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	ctx := context.Background()
	st := memstore.New()
	bal, closeAll, err := halfDownSource(ctx, st, quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer closeAll()
	clk := fakeclock.New(time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC))
	lease := time.Date(2025, 6, 1, 12, 0, 5, 0, time.UTC)
	gen, err := snowflake.New(snowflake.Settings{Worker: 9, Logger: quiet, Clock: clk,
		Guard: guardFunc(func() time.Time { return lease })})
	if err != nil {
		t.Fatal(err)
	}
	defer gen.Close()
	m := metrics.New()
	iss := issuer.New(st, gen, issuer.Settings{Logger: quiet, Segment: segment.Settings{SurviveOutage: 10 * time.Minute},
		Sources: map[string]idforge.Generator{"tickets": bal}})
	defer iss.Close()
	m.Observe(iss)
	if _, err := iss.Next(ctx, "a"); err != nil {
		t.Fatal(err)
	}

	// Two clock steps back: 2 ms is waited out, 1 s refused.
	if _, err := gen.Next(ctx); err != nil {
		t.Fatal(err)
	}
	clk.Add(-2 * time.Millisecond)
	if _, err := gen.Next(ctx); err != nil {
		t.Fatal(err)
	}
	clk.Add(-time.Second)
	if _, err := gen.Next(ctx); !errors.Is(err, idforge.ErrClockMovedBackwards) {
		t.Fatalf("a second back: %v, want ErrClockMovedBackwards", err)
	}

	// A balanced source whose second member is closed: its error ejects it.
	for range 4 {
		if _, err := bal.Next(ctx); err != nil {
			t.Fatal(err)
		}
	}

	h := m.InstrumentHTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/ids/x" {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("ok"))
	}))
	for _, path := range []string{"/v1/ids/x", "/healthz", "/v1/other", "/made/up/path"} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", path, nil))
	}

	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body := rec.Body.String()
	for _, want := range []string{
		`idforge_http_requests_total{code="503",handler="api"} 1`,
		`idforge_http_requests_total{code="200",handler="api"} 2`,
		`idforge_http_requests_total{code="200",handler="/healthz"} 1`,
		`idforge_http_request_duration_seconds_count{handler="api"} 3`,
		`idforge_snowflake_lease_valid_until_timestamp_seconds 1.748779205e+09`,
		`idforge_snowflake_clock_backwards_total{outcome="waited"} 1`,
		`idforge_snowflake_clock_backwards_total{outcome="refused"} 1`,
		`idforge_source_member_ejected{member="down",source="tickets"} 1`,
		`idforge_source_member_ejected{member="up",source="tickets"} 0`,
		`idforge_source_member_ejections_total{member="down",source="tickets"} 1`,
		`idforge_source_member_errors_total{member="down",source="tickets"} 1`,
		`idforge_source_member_calls_total{member="down",source="tickets"} 1`,
		`idforge_source_member_rescue_seconds{member="up",source="tickets"} 0`,
		`idforge_source_health{source="tickets"} 1`,
		`idforge_source_failures_total{source="tickets"} 1`,
		`idforge_source_last_error_timestamp_seconds{source="tickets"} `,
		`idforge_segment_outage_budget_seconds{key="a"} 600`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("scrape lacks %s", want)
		}
	}
	if strings.Contains(body, "/made/up/path") {
		t.Error("a request's own path became a label value")
	}

	// A lost lease reads 0, not a time in 1970 minus something.
	lease = time.Unix(0, 0)
	rec = httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if !strings.Contains(rec.Body.String(), "idforge_snowflake_lease_valid_until_timestamp_seconds 0\n") {
		t.Error("a lost lease does not read 0")
	}
	if t.Failed() {
		t.Log(body)
	}
}

// guardFunc is a snowflake.Guard whose deadline a test sets.
type guardFunc func() time.Time

func (f guardFunc) ValidUntil() time.Time { return f() }
