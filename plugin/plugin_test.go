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
	ch := NewChain(nil, Scoped(&Func{PluginName: "only-order", PluginOrder: 2}, "order"), &Func{PluginName: "all", PluginOrder: 1})
	if got := strings.Join(ch.For("order"), ","); got != "all,only-order" {
		t.Fatalf("For(order) = %s", got)
	}
	if got := strings.Join(ch.For("other"), ","); got != "all" {
		t.Fatalf("For(other) = %s", got)
	}
}
