package issuer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/obfuscate"
	"github.com/idforge/idforge/plugin"
	"github.com/idforge/idforge/snowflake"
	"github.com/idforge/idforge/store/memstore"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func newIssuer(t *testing.T, withSnowflake bool) (*Issuer, *memstore.Store) {
	t.Helper()
	st := memstore.New()
	var gen *snowflake.Generator
	if withSnowflake {
		var err error
		gen, err = snowflake.New(snowflake.Settings{Worker: 1, Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { gen.Close() })
	}
	iss := New(st, gen, Settings{Logger: quiet})
	t.Cleanup(func() { iss.Close() })
	return iss, st
}

func TestRoutesByStrategy(t *testing.T) {
	iss, _ := newIssuer(t, true)
	ctx := context.Background()
	if err := iss.CreateKey(ctx, idforge.Key{Name: "order", Strategy: idforge.StrategySegment, Step: 10, MaxID: 100}); err != nil {
		t.Fatal(err)
	}
	if err := iss.CreateKey(ctx, idforge.Key{Name: "msg", Strategy: idforge.StrategySnowflake}); err != nil {
		t.Fatal(err)
	}
	if id, err := iss.Next(ctx, "order"); err != nil || id != 100 {
		t.Fatalf("order = %d, %v; want 100", id, err)
	}
	id, err := iss.Next(ctx, "msg")
	if err != nil || id < 1<<40 {
		t.Fatalf("msg = %d, %v; want a snowflake", id, err)
	}
	if _, err := iss.NextSegment(ctx, "msg"); !errors.Is(err, idforge.ErrWrongStrategy) {
		t.Fatalf("NextSegment on a snowflake key: %v", err)
	}
	if _, err := iss.Next(ctx, "nope"); !errors.Is(err, idforge.ErrUnknownKey) {
		t.Fatalf("unknown key: %v", err)
	}
	if _, err := iss.Next(ctx, "bad key"); !errors.Is(err, idforge.ErrInvalidKey) {
		t.Fatalf("bad key: %v", err)
	}
	if _, err := iss.NextN(ctx, "order", 0); !errors.Is(err, idforge.ErrInvalidCount) {
		t.Fatalf("NextN 0: %v", err)
	}
}

func TestKeyAddedBehindItsBackIsPickedUp(t *testing.T) {
	iss, st := newIssuer(t, false)
	ctx := context.Background()
	if _, err := iss.Next(ctx, "late"); !errors.Is(err, idforge.ErrUnknownKey) {
		t.Fatalf("before: %v", err)
	}
	// Another node, or an operator with SQL, adds the key.
	if err := st.CreateKey(ctx, idforge.Key{Name: "late", Strategy: idforge.StrategySegment, Step: 5, MaxID: 1}); err != nil {
		t.Fatal(err)
	}
	if id, err := iss.Next(ctx, "late"); err != nil || id != 1 {
		t.Fatalf("after: %d, %v", id, err)
	}
}

func TestTakeClaimsExactly(t *testing.T) {
	iss, st := newIssuer(t, false)
	ctx := context.Background()
	iss.CreateKey(ctx, idforge.Key{Name: "k", Strategy: idforge.StrategySegment, Step: 1000, MaxID: 1})
	ids, err := iss.Take(ctx, "k", 3)
	if err != nil || len(ids) != 3 || ids[0] != 1 || ids[2] != 3 {
		t.Fatalf("Take = %v, %v", ids, err)
	}
	k, _ := st.Key(ctx, "k")
	if k.MaxID != 4 {
		t.Fatalf("max_id after Take(3) = %d, want 4: nothing wasted", k.MaxID)
	}
}

// Take on a key whose format takes IDs only up to 255 claims no more than
// fit: a request crossing the end answers what fits, and one past it
// answers space_exhausted, claiming nothing (it claimed and lost all).
func TestTakeServesWhatFits(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	if err := st.CreateKey(ctx, idforge.Key{Name: "k", Strategy: idforge.StrategySegment, Step: 10, MaxID: 250}); err != nil {
		t.Fatal(err)
	}
	f, err := obfuscate.ParseFormat("feistel:bits=8")
	if err != nil {
		t.Fatal(err)
	}
	if f, err = f.WithKey([]byte("0123456789abcdef-k")); err != nil {
		t.Fatal(err)
	}
	iss := New(st, nil, Settings{Logger: quiet, Formats: map[string]obfuscate.Format{"k": f}})
	defer iss.Close()
	ids, err := iss.Take(ctx, "k", 10)
	if err != nil || len(ids) != 6 {
		t.Fatalf("Take(10) at 250 = %v, %v; want the 6 IDs up to 255", ids, err)
	}
	for n, id := range ids {
		if raw, err := f.Permute.Decode(id); err != nil || raw != 250+int64(n) {
			t.Fatalf("ID %d is %d (raw %d, %v), want raw %d", n, id, raw, err, 250+n)
		}
	}
	for range 3 {
		if _, err := iss.Take(ctx, "k", 1); !errors.Is(err, idforge.ErrSpaceExhausted) || !strings.Contains(err.Error(), "up to 255") {
			t.Fatalf("Take past 255: %v, want ErrSpaceExhausted saying what the format takes", err)
		}
	}
	if k, _ := st.Key(ctx, "k"); k.MaxID != 256 {
		t.Fatalf("max_id = %d, want 256: nothing claimed past what fits", k.MaxID)
	}
}

// CheckKey holds a key to every stage that permutes its IDs: its format,
// then the plugins, each at least as wide as the one before it.
func TestCheckKeyWithPlugins(t *testing.T) {
	seg := idforge.Key{Name: "k", Strategy: idforge.StrategySegment, Step: 100, MaxID: 1}
	f, err := obfuscate.ParseFormat("feistel:bits=16+base62")
	if err != nil {
		t.Fatal(err)
	}
	obf := func(bits int) plugin.Width { return plugin.Width{Plugin: "obfuscate", Bits: bits} }
	tests := []struct {
		name    string
		key     idforge.Key
		format  *obfuscate.Format
		plugins []plugin.Width
		says    string // "" = accepted
	}{
		{"plugin alone", seg, nil, []plugin.Width{obf(8)}, ""},
		{"past the plugin", idforge.Key{Name: "k", Strategy: idforge.StrategySegment, Step: 100, MaxID: 200}, nil, []plugin.Width{obf(8)}, "plugin obfuscate (8 bits) takes no ID above that"},
		{"plugin as wide as the format", seg, &f, []plugin.Width{obf(16)}, ""},
		{"plugin narrower than the format", seg, &f, []plugin.Width{obf(12)}, "plugin obfuscate (12 bits) permutes the IDs its format feistel:bits=16+base62 gives out over 16 bits, and takes only 12: some would not fit; give it bits = 16 or more"},
		{"two plugins narrowing", seg, nil, []plugin.Width{obf(20), obf(10)}, "takes only 10"},
		{"snowflake, 63-bit plugin", idforge.Key{Name: "k", Strategy: idforge.StrategySnowflake}, nil, []plugin.Width{obf(63)}, ""},
		{"snowflake, 32-bit plugin", idforge.Key{Name: "k", Strategy: idforge.StrategySnowflake}, nil, []plugin.Width{obf(32)}, "give it bits = 63"},
		{"ulid, the plugin does not see it", idforge.Key{Name: "k", Strategy: idforge.StrategyULID}, nil, []plugin.Width{obf(8)}, ""},
	}
	for _, tt := range tests {
		err := CheckKey(tt.key, tt.format, tt.plugins...)
		switch {
		case tt.says == "" && err != nil:
			t.Errorf("%s: %v, want it accepted", tt.name, err)
		case tt.says != "" && (!errors.Is(err, idforge.ErrInvalidArgument) || !strings.Contains(err.Error(), tt.says)):
			t.Errorf("%s: %v, want ErrInvalidArgument saying %q", tt.name, err, tt.says)
		}
	}
}

func TestEnsureKey(t *testing.T) {
	iss, _ := newIssuer(t, true)
	ctx := context.Background()
	seg := idforge.Key{Name: "k", Strategy: idforge.StrategySegment, Step: 10, MaxID: 1}
	for range 2 {
		if err := iss.EnsureKey(ctx, seg); err != nil {
			t.Fatal(err)
		}
	}
	err := iss.EnsureKey(ctx, idforge.Key{Name: "k", Strategy: idforge.StrategySnowflake})
	if !errors.Is(err, idforge.ErrKeyExists) {
		t.Fatalf("conflicting strategy: %v", err)
	}
}

func TestCreateKeyValidation(t *testing.T) {
	iss, _ := newIssuer(t, false)
	ctx := context.Background()
	for name, k := range map[string]idforge.Key{
		"step 0":                     {Name: "a", Strategy: idforge.StrategySegment, Step: 0, MaxID: 1},
		"start 0":                    {Name: "a", Strategy: idforge.StrategySegment, Step: 1, MaxID: 0},
		"snowflake + step":           {Name: "a", Strategy: idforge.StrategySnowflake, Step: 1},
		"unknown strategy":           {Name: "a", Strategy: "uuid"},
		"bad name":                   {Name: "a/b", Strategy: idforge.StrategySegment, Step: 1, MaxID: 1},
		"start at the top":           {Name: "a", Strategy: idforge.StrategySegment, Step: 1000, MaxID: math.MaxInt64},
		"first segment past the top": {Name: "a", Strategy: idforge.StrategySegment, Step: 1000, MaxID: idforge.MaxSegmentID - 998},
	} {
		err := iss.CreateKey(ctx, k)
		if !errors.Is(err, idforge.ErrInvalidArgument) && !errors.Is(err, idforge.ErrInvalidKey) {
			t.Errorf("%s: %v, want a validation error", name, err)
		}
	}
	if keys, err := iss.Keys(ctx); err != nil || len(keys) != 0 {
		t.Fatalf("refused keys were stored: %v %v", keys, err)
	}
}

// CheckKey holds a key within the IDs its format can show, so that no key
// is created that could never issue through it.
func TestCheckKeyWithFormat(t *testing.T) {
	format := func(spec string) *obfuscate.Format {
		f, err := obfuscate.ParseFormat(spec)
		if err != nil {
			t.Fatal(err)
		}
		return &f
	}
	seg := func(start, step int64) idforge.Key {
		return idforge.Key{Name: "k", Strategy: idforge.StrategySegment, Step: step, MaxID: start}
	}
	tests := []struct {
		name   string
		key    idforge.Key
		format *obfuscate.Format
		says   string // "" = accepted
	}{
		{"no format", seg(1, 1000), nil, ""},
		{"text format", seg(idforge.MaxSegmentID, 1), format("base62:min=8"), ""},
		{"fits 8 bits", seg(156, 100), format("feistel:bits=8"), ""},
		{"past 8 bits", seg(157, 100), format("feistel:bits=8"), "[1, 156]"},
		{"step longer than 8 bits", seg(1, 1000), format("feistel:bits=8+hex"), "step 1000 out of range [1, 255]"},
		{"63 bits as int64", seg(idforge.MaxSegmentID, 1), format("feistel:bits=63"), ""},
		{"snowflake, 63 bits", idforge.Key{Name: "k", Strategy: idforge.StrategySnowflake}, format("feistel:bits=63+base62"), ""},
		{"snowflake, 40 bits", idforge.Key{Name: "k", Strategy: idforge.StrategySnowflake}, format("feistel:bits=40"), "feistel:bits=63"},
		{"snowflake, text only", idforge.Key{Name: "k", Strategy: idforge.StrategySnowflake}, format("sqids"), ""},
		{"uuidv7 with a format", idforge.Key{Name: "k", Strategy: idforge.StrategyUUIDv7}, format("decimal"), "take no format"},
		{"ulid without one", idforge.Key{Name: "k", Strategy: idforge.StrategyULID}, nil, ""},
	}
	for _, tt := range tests {
		err := CheckKey(tt.key, tt.format)
		switch {
		case tt.says == "" && err != nil:
			t.Errorf("%s: %v, want it accepted", tt.name, err)
		case tt.says != "" && (!errors.Is(err, idforge.ErrInvalidArgument) || !strings.Contains(err.Error(), tt.says)):
			t.Errorf("%s: %v, want ErrInvalidArgument saying %q", tt.name, err, tt.says)
		}
	}

	// CreateKey applies the key's configured format.
	f := format("feistel:bits=8")
	keyed, err := f.WithKey([]byte("0123456789abcdef-k"))
	if err != nil {
		t.Fatal(err)
	}
	iss := New(memstore.New(), nil, Settings{Logger: quiet, Formats: map[string]obfuscate.Format{"k": keyed}})
	defer iss.Close()
	ctx := context.Background()
	if err := iss.CreateKey(ctx, seg(200, 100)); !errors.Is(err, idforge.ErrInvalidArgument) {
		t.Fatalf("CreateKey past the format's 8 bits: %v, want ErrInvalidArgument", err)
	}
	if err := iss.CreateKey(ctx, seg(100, 100)); err != nil {
		t.Fatal(err)
	}
	ids, err := iss.NextN(ctx, "k", 100)
	if err != nil || len(ids) != 100 {
		t.Fatalf("the first segment of a key that fits its format: %v, %v", ids, err)
	}
}

func TestNoSnowflakeGenerator(t *testing.T) {
	iss, _ := newIssuer(t, false)
	ctx := context.Background()
	iss.CreateKey(ctx, idforge.Key{Name: "msg", Strategy: idforge.StrategySnowflake})
	if _, err := iss.Next(ctx, "msg"); !errors.Is(err, idforge.ErrUnavailable) {
		t.Fatalf("snowflake key without a generator: %v", err)
	}
	if _, err := iss.NextSnowflake(ctx, "msg"); !errors.Is(err, idforge.ErrUnavailable) {
		t.Fatalf("NextSnowflake without a generator: %v", err)
	}
}

// Many goroutines resolving the same new key at once share one allocator:
// two allocators for one key on one node would still be correct (claims
// never overlap) but would waste segments and break per-node order.
func TestConcurrentFirstUse(t *testing.T) {
	iss, st := newIssuer(t, false)
	ctx := context.Background()
	iss.CreateKey(ctx, idforge.Key{Name: "k", Strategy: idforge.StrategySegment, Step: 1000, MaxID: 1})
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() { iss.Next(ctx, "k") })
	}
	wg.Wait()
	if n := st.Claims(); n > 2 {
		t.Fatalf("%d claims for 32 IDs, want one allocator (1 claim + at most 1 prefetch)", n)
	}
}

func TestKeysShowsState(t *testing.T) {
	iss, _ := newIssuer(t, false)
	ctx := context.Background()
	iss.CreateKey(ctx, idforge.Key{Name: "b", Strategy: idforge.StrategySegment, Step: 10, MaxID: 1})
	iss.CreateKey(ctx, idforge.Key{Name: "a", Strategy: idforge.StrategySnowflake})
	iss.Next(ctx, "b")
	keys, err := iss.Keys(ctx)
	if err != nil || len(keys) != 2 || keys[0].Name != "a" || keys[1].Segment == nil || keys[1].Segment.Next != 2 {
		t.Fatalf("Keys = %+v, %v", keys, err)
	}
	if keys[0].Segment != nil {
		t.Fatalf("snowflake key has segment state")
	}
}

func TestClose(t *testing.T) {
	iss, _ := newIssuer(t, false)
	ctx := context.Background()
	iss.CreateKey(ctx, idforge.Key{Name: "k", Strategy: idforge.StrategySegment, Step: 10, MaxID: 1})
	iss.Next(ctx, "k")
	iss.Close()
	if _, err := iss.Next(ctx, "k"); !errors.Is(err, idforge.ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
}

func TestRefresh(t *testing.T) {
	iss, st := newIssuer(t, true)
	ctx := context.Background()
	iss.CreateKey(ctx, idforge.Key{Name: "gone", Strategy: idforge.StrategySegment, Step: 10, MaxID: 1})
	if _, err := iss.Next(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	// Behind the node's back: a key is added, another disappears (the
	// store is rebuilt without it).
	st.CreateKey(ctx, idforge.Key{Name: "new", Strategy: idforge.StrategySegment, Step: 10, MaxID: 1})
	st.CreateKey(ctx, idforge.Key{Name: "evt", Strategy: idforge.StrategySnowflake})
	st.Delete("gone")
	if err := iss.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, k := range iss.Active() {
		names = append(names, k.Name)
	}
	if got := strings.Join(names, ","); got != "evt,new" {
		t.Fatalf("active keys after refresh = %s, want evt,new", got)
	}
	if _, err := iss.Next(ctx, "gone"); !errors.Is(err, idforge.ErrUnknownKey) {
		t.Fatalf("removed key: %v", err)
	}
}

func TestPlugins(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	st.CreateKey(ctx, idforge.Key{Name: "order", Strategy: idforge.StrategySegment, Step: 100, MaxID: 1})
	closed := false
	gate := &plugin.Func{PluginName: "gate", PluginOrder: 1, BeforeFunc: func(ctx context.Context, c plugin.Call) error {
		if closed {
			return errors.New("orders are closed")
		}
		return nil
	}}
	double := &plugin.Func{PluginName: "double", PluginOrder: 2, AfterFunc: func(ctx context.Context, c plugin.Call, ids []int64) ([]int64, error) {
		out := make([]int64, len(ids))
		for i, v := range ids {
			out[i] = 2 * v
		}
		return out, nil
	}}
	iss := New(st, nil, Settings{Logger: quiet, Plugins: plugin.NewChain(nil, double, gate)})
	defer iss.Close()
	if id, err := iss.Next(ctx, "order"); err != nil || id != 2 {
		t.Fatalf("Next = %d, %v; want 1 doubled", id, err)
	}
	closed = true
	if _, err := iss.NextN(ctx, "order", 5); !errors.Is(err, plugin.ErrRejected) || !strings.Contains(err.Error(), "orders are closed") {
		t.Fatalf("rejected call: %v", err)
	}
	closed = false
	// Nothing was consumed by the rejected call: the next ID is 2 (doubled).
	if ids, err := iss.NextN(ctx, "order", 2); err != nil || ids[0] != 4 || ids[1] != 6 {
		t.Fatalf("after the rejection: %v, %v", ids, err)
	}
}

// Plugins run around string IDs too: uuidv7 and ulid keys and serials
// see Before (a refusal consumes no serial number) and AfterStrings, in
// order; the key listing names only the plugins that run for the key.
func TestPluginsAroundStringIDs(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	st.CreateKey(ctx, idforge.Key{Name: "order", Strategy: idforge.StrategySegment, Step: 100, MaxID: 1})
	var seen []string
	closed := false
	gate := &plugin.Func{PluginName: "gate", PluginOrder: 1, BeforeFunc: func(ctx context.Context, c plugin.Call) error {
		if closed {
			return errors.New("closed for the night")
		}
		return nil
	}}
	record := &plugin.Func{PluginName: "record", PluginOrder: 2, AfterStringsFunc: func(ctx context.Context, c plugin.Call, ids []string) ([]string, error) {
		seen = append(seen, fmt.Sprintf("%s/%s/%d", c.Key, c.Strategy, len(ids)))
		return ids, nil
	}}
	intOnly := &plugin.Func{PluginName: "int-only", PluginOrder: 3, AfterFunc: func(ctx context.Context, c plugin.Call, ids []int64) ([]int64, error) {
		return ids, nil
	}}
	iss := New(st, nil, Settings{
		Logger:  quiet,
		Plugins: plugin.NewChain(nil, record, gate, intOnly),
		Serials: []idforge.Serial{{Name: "bill", Template: "B@{seq:order,width=4}"}},
	})
	defer iss.Close()
	if err := iss.CreateKey(ctx, idforge.Key{Name: "evt", Strategy: idforge.StrategyUUIDv7}); err != nil {
		t.Fatal(err)
	}
	if _, err := iss.NextStrings(ctx, "evt", 3, ""); err != nil {
		t.Fatal(err)
	}
	if got, err := iss.NextSerial(ctx, "bill", 1, nil); err != nil || got[0] != "B0001" {
		t.Fatalf("bill = %v, %v", got, err)
	}
	if got := strings.Join(seen, ","); got != "evt/uuidv7/3,bill/serial/1" {
		t.Fatalf("AfterStrings saw %s", got)
	}
	closed = true
	if _, err := iss.NextSerial(ctx, "bill", 2, nil); !errors.Is(err, plugin.ErrRejected) {
		t.Fatalf("refused serial: %v, want ErrRejected", err)
	}
	if _, err := iss.NextStrings(ctx, "evt", 1, ""); !errors.Is(err, plugin.ErrRejected) {
		t.Fatalf("refused uuidv7: %v, want ErrRejected", err)
	}
	closed = false
	// The refusal drew nothing: the next serial follows on.
	if got, err := iss.NextSerial(ctx, "bill", 1, nil); err != nil || got[0] != "B0002" {
		t.Fatalf("bill after the refusal = %v, %v; want B0002", got, err)
	}
	states, err := iss.Keys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range states {
		want := "gate,record,int-only"
		if k.Key.Strategy == idforge.StrategyUUIDv7 {
			want = "gate,record" // int-only permutes integers: it never runs for evt
		}
		if got := strings.Join(k.Plugins, ","); got != want {
			t.Errorf("key %s lists plugins %s, want %s", k.Key.Name, got, want)
		}
	}
}
