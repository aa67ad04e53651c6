package metrics

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/issuer"
	"github.com/idforge/idforge/segment"
	"github.com/idforge/idforge/snowflake"
	"github.com/idforge/idforge/store/memstore"
)

func TestScrape(t *testing.T) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	ctx := context.Background()
	st := memstore.New()
	st.CreateKey(ctx, idforge.Key{Name: "order", Strategy: idforge.StrategySegment, Step: 100, MaxID: 1})
	st.CreateKey(ctx, idforge.Key{Name: "msg", Strategy: idforge.StrategySnowflake})
	gen, err := snowflake.New(snowflake.Settings{Worker: 9, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer gen.Close()
	m := New()
	iss := issuer.New(st, gen, issuer.Settings{Logger: quiet, Segment: segment.Settings{OnClaim: m.OnClaim}})
	defer iss.Close()
	m.Observe(iss)

	for range 42 {
		if _, err := iss.Next(ctx, "order"); err != nil {
			t.Fatal(err)
		}
	}
	for range 5 {
		iss.Next(ctx, "msg")
	}
	m.OnClaim("order", time.Millisecond, errors.New("down"))
	m.ObserveBackwards("qj", func() int64 { return 2 })
	m.OnClaim("moved", time.Millisecond, fmt.Errorf("%w: claims were made on another server", idforge.ErrStoreFailedOver))

	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body := rec.Body.String()
	for _, want := range []string{
		`idforge_ids_issued_total{key="order"} 42`,
		`idforge_segment_waits_total{key="order"} 1`,
		`idforge_segment_step{key="order"} `,
		`idforge_segment_buffered_ids{key="order"}`,
		`idforge_segment_buffered_seconds{key="order"}`,
		"idforge_segment_claim_duration_seconds_count ",
		"idforge_store_errors_total 2",
		`idforge_store_failover_detected{key="moved"} 1`,
		`idforge_segment_keys{state="active"} 1`,
		`idforge_segment_keys{state="exported"} 1`,
		"idforge_segment_all_ids_issued_total 42",
		"idforge_segment_all_waits_total 1",
		`idforge_snowflake_ids_issued_total 5`,
		`idforge_source_backwards_total{source="qj"} 2`,
		`idforge_snowflake_info{datacenter="0",layout="twitter",worker="9"} 1`,
		`idforge_snowflake_layout_expiry_timestamp_seconds 3.`,
		`go_goroutines`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("scrape lacks %s", want)
		}
	}
	if strings.Contains(body, `idforge_store_failover_detected{key="order"}`) {
		t.Error("a key whose claims succeed keeps a fail-over series")
	}
	if strings.Contains(body, "idforge_segment_outage_budget_seconds{") {
		t.Error("an outage budget exported for keys without survive_outage")
	}
	if t.Failed() {
		t.Log(body)
	}
}

// TestPerKeyBound: a scrape carries per-key series for at most PerKey
// keys, the busiest, and the aggregates for all of them.
func TestPerKeyBound(t *testing.T) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	ctx := context.Background()
	scrape := func(perKey int) string {
		st := memstore.New()
		m := NewWithOptions(Options{PerKey: perKey})
		iss := issuer.New(st, nil, issuer.Settings{Logger: quiet, Segment: segment.Settings{OnClaim: m.OnClaim}})
		defer iss.Close()
		m.Observe(iss)
		for i := range 5 {
			name := fmt.Sprintf("k%d", i)
			st.CreateKey(ctx, idforge.Key{Name: name, Strategy: idforge.StrategySegment, Step: 100, MaxID: 1})
			for range i + 1 {
				if _, err := iss.Next(ctx, name); err != nil {
					t.Fatal(err)
				}
			}
		}
		rec := httptest.NewRecorder()
		m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		return rec.Body.String()
	}
	body := scrape(2)
	for _, want := range []string{
		`idforge_ids_issued_total{key="k4"} 5`,
		`idforge_ids_issued_total{key="k3"} 4`,
		`idforge_segment_keys{state="active"} 5`,
		`idforge_segment_keys{state="exported"} 2`,
		"idforge_segment_all_ids_issued_total 15",
		"idforge_segment_all_loads_total 5",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("scrape with PerKey 2 lacks %s", want)
		}
	}
	if strings.Contains(body, `key="k0"`) {
		t.Error("scrape with PerKey 2 exports the least busy key")
	}
	if body := scrape(-1); strings.Contains(body, "idforge_ids_issued_total{") || !strings.Contains(body, "idforge_segment_all_ids_issued_total 15") {
		t.Error("scrape with PerKey -1: want the aggregates only")
	}
}
