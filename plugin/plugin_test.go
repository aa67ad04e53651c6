package plugin

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/obfuscate"
)

func TestOrderAndTransform(t *testing.T) {
	var trace []string
	mk := func(name string, order int) *Func {
		return &Func{PluginName: name, PluginOrder: order,
			BeforeFunc: func(ctx context.Context, c Call) error { trace = append(trace, "before "+name); return nil },
			AfterFunc: func(ctx context.Context, c Call, ids []int64) ([]int64, error) {
				trace = append(trace, "after "+name)
				out := make([]int64, len(ids))
				for i, v := range ids {
					out[i] = v * 10
				}
				return out, nil
			},
		}
	}
	ch := NewChain(nil, mk("c", 30), mk("a", 10), mk("b", 20))
	ids, err := ch.Run(context.Background(), Call{Key: "k", Count: 2}, func() ([]int64, error) {
		trace = append(trace, "draw")
		return []int64{1, 2}, nil
	})
	if err != nil || ids[0] != 1000 || ids[1] != 2000 {
		t.Fatalf("ids = %v, %v; want each transformed three times", ids, err)
	}
	if got := strings.Join(trace, ","); got != "before a,before b,before c,draw,after a,after b,after c" {
		t.Fatalf("order = %s", got)
	}
}

func TestRejectionConsumesNothing(t *testing.T) {
	var failures []error
	refuse := &Func{PluginName: "quota", PluginOrder: 1,
		BeforeFunc: func(ctx context.Context, c Call) error { return errors.New("over quota") }}
	watch := &Func{PluginName: "watch", PluginOrder: 2,
		ErrorFunc: func(ctx context.Context, c Call, err error) { failures = append(failures, err) }}
	ch := NewChain(nil, refuse, watch)
	drawn := false
	_, err := ch.Run(context.Background(), Call{Key: "k", Count: 1}, func() ([]int64, error) { drawn = true; return []int64{1}, nil })
	if !errors.Is(err, ErrRejected) || !strings.Contains(err.Error(), "quota") || !strings.Contains(err.Error(), "over quota") {
		t.Fatalf("error = %v, want ErrRejected naming the plugin and its reason", err)
	}
	if drawn {
		t.Fatal("a rejected call drew IDs")
	}
	if len(failures) != 1 {
		t.Fatalf("OnError saw %d failures, want 1", len(failures))
	}
	// A custom rejection handler decides what the caller sees.
	ch = NewChain(func(ctx context.Context, c Call, p Plugin, err error) error {
		return idforge.ErrUnavailable
	}, refuse)
	if _, err := ch.Run(context.Background(), Call{Key: "k"}, func() ([]int64, error) { return nil, nil }); !errors.Is(err, idforge.ErrUnavailable) {
		t.Fatalf("custom rejection: %v", err)
	}
}

func TestScopedAndBuiltins(t *testing.T) {
	var buf bytes.Buffer
	reg := prometheus.NewRegistry()
	rate, err := NewRate(reg, 20)
	if err != nil {
		t.Fatal(err)
	}
	ch := NewChain(nil, Scoped(NewHistory(slog.New(slog.NewTextHandler(&buf, nil)), 10), "order"), rate)
	ctx := context.Background()
	ch.Run(ctx, Call{Key: "order", Count: 3}, func() ([]int64, error) { return []int64{7, 8, 9}, nil })
	ch.Run(ctx, Call{Key: "other", Count: 1}, func() ([]int64, error) { return []int64{1}, nil })
	ch.Run(ctx, Call{Key: "other", Count: 1}, func() ([]int64, error) { return nil, errors.New("down") })
	if log := buf.String(); !strings.Contains(log, "key=order") || !strings.Contains(log, "first=7") || strings.Contains(log, "key=other") {
		t.Fatalf("history log:\n%s", log)
	}
	if n := testutil.ToFloat64(rate.ids.WithLabelValues("order")); n != 3 {
		t.Fatalf("rate counted %v IDs for order", n)
	}
	if n := testutil.ToFloat64(rate.failures.WithLabelValues("other")); n != 1 {
		t.Fatalf("rate counted %v failures for other", n)
	}
	if !NewChain(nil).Empty() || (*Chain)(nil).Empty() == false {
		t.Fatal("Empty")
	}
}

func TestObfuscate(t *testing.T) {
	perm, err := obfuscate.New([]byte("sixteen byte key!"), 20)
	if err != nil {
		t.Fatal(err)
	}
	ch := NewChain(nil, NewObfuscate(perm, 1))
	ids, err := ch.Run(context.Background(), Call{Key: "k", Count: 3}, func() ([]int64, error) { return []int64{1, 2, 3}, nil })
	if err != nil {
		t.Fatal(err)
	}
	for i, id := range ids {
		back, err := perm.Decode(id)
		if err != nil || back != int64(i+1) || id == int64(i+1) {
			t.Fatalf("obfuscated %d → %d → %d, %v", i+1, id, back, err)
		}
	}
	// Out of the permutation's range: an error, never a collision.
	if _, err := ch.Run(context.Background(), Call{Key: "k", Count: 1}, func() ([]int64, error) { return []int64{1 << 20}, nil }); err == nil {
		t.Fatal("an ID outside the range was obfuscated")
	}
}

func TestFor(t *testing.T) {
	perm, err := obfuscate.New([]byte("sixteen byte key!"), 20)
	if err != nil {
		t.Fatal(err)
	}
	ch := NewChain(nil, Scoped(&Func{PluginName: "only-order", PluginOrder: 2}, "order"), &Func{PluginName: "all", PluginOrder: 1,
		BeforeFunc: func(ctx context.Context, c Call) error { return nil }}, NewObfuscate(perm, 3))
	if got := strings.Join(ch.For("order", idforge.StrategySegment), ","); got != "all,only-order,obfuscate" {
		t.Fatalf("For(order) = %s", got)
	}
	if got := strings.Join(ch.For("other", idforge.StrategySnowflake), ","); got != "all,obfuscate" {
		t.Fatalf("For(other) = %s", got)
	}
	// Obfuscate permutes integers: it does not run for string IDs.
	for _, s := range []idforge.Strategy{idforge.StrategyUUIDv7, idforge.StrategyULID, StrategySerial} {
		if got := strings.Join(ch.For("other", s), ","); got != "all" {
			t.Fatalf("For(other, %s) = %s, want all", s, got)
		}
	}
}

// String IDs (uuidv7, ulid, serials) pass the same chain: Before may
// refuse before anything is drawn, AfterStrings steps see and may replace
// the strings in order (history, after tag, logs the tagged ones),
// integer-only plugins are skipped, and OnError sees failures.
func TestRunStrings(t *testing.T) {
	perm, err := obfuscate.New([]byte("sixteen byte key!"), 20)
	if err != nil {
		t.Fatal(err)
	}
	var trace []string
	var buf bytes.Buffer
	reg := prometheus.NewRegistry()
	rate, err := NewRate(reg, 40)
	if err != nil {
		t.Fatal(err)
	}
	tag := &Func{PluginName: "tag", PluginOrder: 10,
		BeforeFunc: func(ctx context.Context, c Call) error {
			trace = append(trace, "before")
			if c.Count > 5 {
				return errors.New("at most 5")
			}
			return nil
		},
		AfterStringsFunc: func(ctx context.Context, c Call, ids []string) ([]string, error) {
			trace = append(trace, "after")
			out := make([]string, len(ids))
			for i, s := range ids {
				out[i] = "X" + s
			}
			return out, nil
		},
		ErrorFunc: func(ctx context.Context, c Call, err error) { trace = append(trace, "error") },
	}
	ch := NewChain(nil, NewObfuscate(perm, 20), NewHistory(slog.New(slog.NewTextHandler(&buf, nil)), 30), rate, tag)
	ctx := context.Background()
	call := Call{Key: "bill", Strategy: StrategySerial, Count: 2}
	ids, err := ch.RunStrings(ctx, call, func() ([]string, error) { trace = append(trace, "draw"); return []string{"A1", "A2"}, nil })
	if err != nil || strings.Join(ids, ",") != "XA1,XA2" {
		t.Fatalf("RunStrings = %v, %v; want XA1,XA2 (obfuscate skipped, tag applied)", ids, err)
	}
	if got := strings.Join(trace, ","); got != "before,draw,after" {
		t.Fatalf("order = %s", got)
	}
	if log := buf.String(); !strings.Contains(log, "key=bill") || !strings.Contains(log, "first=XA1") || !strings.Contains(log, "strategy=serial") {
		t.Fatalf("history log:\n%s", log)
	}
	if n := testutil.ToFloat64(rate.ids.WithLabelValues("bill")); n != 2 {
		t.Fatalf("rate counted %v IDs for bill", n)
	}

	trace = nil
	drawn := false
	call.Count = 6
	_, err = ch.RunStrings(ctx, call, func() ([]string, error) { drawn = true; return nil, nil })
	if !errors.Is(err, ErrRejected) || drawn {
		t.Fatalf("refused call: %v, drawn %v; want ErrRejected and nothing drawn", err, drawn)
	}
	if got := strings.Join(trace, ","); got != "before,error" {
		t.Fatalf("order on refusal = %s", got)
	}
	if n := testutil.ToFloat64(rate.failures.WithLabelValues("bill")); n != 1 {
		t.Fatalf("rate counted %v failures for bill", n)
	}
}

// A range handed out whole passes Before, then the RangeAfterer steps;
// a plugin that must see every ID refuses the call before anything is
// claimed.
func TestRunRange(t *testing.T) {
	perm, err := obfuscate.New([]byte("sixteen byte key!"), 20)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	reg := prometheus.NewRegistry()
	rate, err := NewRate(reg, 2)
	if err != nil {
		t.Fatal(err)
	}
	ch := NewChain(nil, NewHistory(slog.New(slog.NewTextHandler(&buf, nil)), 1), rate, Scoped(NewObfuscate(perm, 3), "hidden"))
	ctx := context.Background()
	want := idforge.Segment{Start: 101, End: 201}
	seg, err := ch.RunRange(ctx, Call{Key: "order", Strategy: idforge.StrategySegment, Count: 100}, func() (idforge.Segment, error) { return want, nil })
	if err != nil || seg != want {
		t.Fatalf("RunRange = %v, %v; want %v", seg, err, want)
	}
	if log := buf.String(); !strings.Contains(log, "first=101 last=200") {
		t.Fatalf("history log:\n%s", log)
	}
	if n := testutil.ToFloat64(rate.ids.WithLabelValues("order")); n != 100 {
		t.Fatalf("rate counted %v IDs", n)
	}
	claimed := false
	_, err = ch.RunRange(ctx, Call{Key: "hidden", Strategy: idforge.StrategySegment, Count: 100}, func() (idforge.Segment, error) {
		claimed = true
		return want, nil
	})
	if !errors.Is(err, idforge.ErrWrongStrategy) || claimed {
		t.Fatalf("range of an obfuscated key: %v, claimed %v; want ErrWrongStrategy before claiming", err, claimed)
	}
	if n := testutil.ToFloat64(rate.failures.WithLabelValues("hidden")); n != 1 {
		t.Fatalf("the refusal counted %v failures, want 1", n)
	}
}

// idler is a plugin with nothing to do while idle is set.
type idler struct {
	Func
	idle bool
}

func (i *idler) Idle() bool { return i.idle }

// A chain whose plugins are all idle Idlers is Idle, and callers skip it;
// any other plugin, or an Idler with work, makes it run.
func TestChainIdle(t *testing.T) {
	q := &idler{Func: Func{PluginName: "quota"}, idle: true}
	if !NewChain(nil, q).Idle() || !(*Chain)(nil).Idle() || !NewChain(nil).Idle() {
		t.Fatal("a chain of idle Idlers (or none) is not Idle")
	}
	q.idle = false
	if NewChain(nil, q).Idle() {
		t.Fatal("a chain whose Idler has work is Idle")
	}
	q.idle = true
	if NewChain(nil, q, &Func{PluginName: "history"}).Idle() {
		t.Fatal("a chain with a plugin that is no Idler is Idle")
	}
}
