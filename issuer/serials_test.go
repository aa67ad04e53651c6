package issuer

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/fakeclock"
	"github.com/idforge/idforge/store/memstore"
	"github.com/idforge/idforge/store/sqlite"
)

// counterSource is an in-memory sequence source.
type counterSource struct{ n atomic.Int64 }

func (c *counterSource) Next(ctx context.Context) (int64, error) { return c.n.Add(1), nil }

// dayCounter restarts every day.
type dayCounter struct {
	mu   sync.Mutex
	day  time.Time
	next int64
}

func (d *dayCounter) Next(ctx context.Context, at time.Time) (int64, time.Time, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	day := time.Date(at.Year(), at.Month(), at.Day(), 0, 0, 0, 0, at.Location())
	if !day.Equal(d.day) {
		d.day, d.next = day, 0
	}
	d.next++
	return d.next, day, nil
}

// CountsPer says the counter counts per day, as sequence.Counter does.
func (d *dayCounter) CountsPer() (string, *time.Location) { return "day", time.UTC }

func TestSerials(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	st.CreateKey(ctx, idforge.Key{Name: "order", Strategy: idforge.StrategySegment, Step: 100, MaxID: 1})
	clk := fakeclock.New(time.Date(2017, 3, 4, 9, 0, 0, 0, time.UTC))
	qj := &counterSource{}
	iss := New(st, nil, Settings{
		Logger:   quiet,
		Clock:    clk,
		Sources:  map[string]idforge.Generator{"qj": qj},
		Counters: map[string]idforge.PeriodCounter{"daily": &dayCounter{}},
		Serials: []idforge.Serial{
			{Name: "waybill", Template: "@{date:yyyyMMdd}@{seq:daily,width=5}"},
			{Name: "qj", Template: "QJ@{seq:qj,width=6}"},
			{Name: "job", Template: "@{param:area}-@{param:unit,width=4}-@{seq:order,width=5}"},
		},
	})
	defer iss.Close()

	got, err := iss.NextSerial(ctx, "waybill", 2, nil)
	if err != nil || got[0] != "2017030400001" || got[1] != "2017030400002" {
		t.Fatalf("waybill = %v, %v", got, err)
	}
	if got, err := iss.NextSerial(ctx, "qj", 1, nil); err != nil || got[0] != "QJ000001" {
		t.Fatalf("qj = %v, %v", got, err)
	}
	if got, err := iss.NextSerial(ctx, "job", 1, map[string]string{"area": "010", "unit": "6541"}); err != nil || got[0] != "010-6541-00001" {
		t.Fatalf("job = %v, %v", got, err)
	}
	// The source answers as a key too.
	if id, err := iss.Next(ctx, "qj"); err != nil || id != 2 {
		t.Fatalf("source as a key: %d, %v", id, err)
	}

	// Defined through the API: stored, then served.
	if err := iss.CreateSerial(ctx, idforge.Serial{Name: "sn", Template: "SN-@{seq:order,width=6}-@{checksum:mod,of=seq}"}); err != nil {
		t.Fatal(err)
	}
	if got, err := iss.NextSerial(ctx, "sn", 1, nil); err != nil || len(got[0]) != len("SN-000002-0") {
		t.Fatalf("sn = %v, %v", got, err)
	}
	for name, tc := range map[string]struct {
		def  idforge.Serial
		want error
	}{
		"taken in config": {idforge.Serial{Name: "qj", Template: "x"}, idforge.ErrKeyExists},
		"taken in store":  {idforge.Serial{Name: "sn", Template: "X@{seq:order}"}, idforge.ErrKeyExists},
		"bad template":    {idforge.Serial{Name: "bad", Template: "@{date:qqq}"}, idforge.ErrInvalidArgument},
		"unknown source":  {idforge.Serial{Name: "bad", Template: "@{seq:nope}"}, idforge.ErrUnknownKey},
		"bad zone":        {idforge.Serial{Name: "bad", Template: "x", TimeZone: "Mars/Olympus"}, idforge.ErrInvalidArgument},
		"empty":           {idforge.Serial{Name: "bad"}, idforge.ErrInvalidArgument},
	} {
		if err := iss.CreateSerial(ctx, tc.def); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", name, err, tc.want)
		}
	}
	if _, err := iss.NextSerial(ctx, "nope", 1, nil); !errors.Is(err, idforge.ErrUnknownKey) {
		t.Fatalf("unknown serial: %v", err)
	}
	if _, err := iss.NextSerial(ctx, "job", 1, map[string]string{"area": "010"}); !errors.Is(err, idforge.ErrInvalidArgument) {
		t.Fatalf("missing param: %v", err)
	}
	for _, n := range []int{0, -1, idforge.MaxCount + 1} {
		if _, err := iss.NextSerial(ctx, "qj", n, nil); !errors.Is(err, idforge.ErrInvalidCount) {
			t.Fatalf("count %d: %v", n, err)
		}
	}
	defs, err := iss.Serials(ctx)
	if err != nil || len(defs) != 4 || defs[0].Name != "job" {
		t.Fatalf("Serials = %v, %v", defs, err)
	}
}

// A serial whose key cannot be read when its template is first compiled
// (the store is down) is unavailable, not an invalid template: clients
// fail over on the one, never on the other. Once the store is back, the
// serial is served.
func TestSerialStoreDownAtCompile(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	st.CreateKey(ctx, idforge.Key{Name: "order", Strategy: idforge.StrategySegment, Step: 100, MaxID: 1})
	iss := New(st, nil, Settings{Logger: quiet, Serials: []idforge.Serial{{Name: "bill", Template: "B@{seq:order,width=4}"}}})
	defer iss.Close()
	st.Fail(fmt.Errorf("%w: connection refused", idforge.ErrUnavailable))
	_, err := iss.NextSerial(ctx, "bill", 1, nil)
	if !errors.Is(err, idforge.ErrUnavailable) || idforge.ErrorCode(err) != "unavailable" {
		t.Fatalf("store down at compile: %v (code %s), want unavailable", err, idforge.ErrorCode(err))
	}
	st.Fail(nil)
	if got, err := iss.NextSerial(ctx, "bill", 1, nil); err != nil || got[0] != "B0001" {
		t.Fatalf("after the store came back: %v, %v", got, err)
	}
}

// The request's context reaches the store lookups of a template's first
// compilation: a request that gives up while its serial's key is read is
// answered as canceled, not as an invalid template (by NextSerial and
// CreateSerial alike), and nothing bad is kept: the next request compiles
// the serial and is served.
func TestSerialCompileSeesRequestContext(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "ids.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.CreateKey(ctx, idforge.Key{Name: "order", Strategy: idforge.StrategySegment, Step: 100, MaxID: 1}); err != nil {
		t.Fatal(err)
	}
	iss := New(st, nil, Settings{Logger: quiet, Serials: []idforge.Serial{{Name: "bill", Template: "B@{seq:order,width=4}"}}})
	defer iss.Close()
	gaveUp, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := iss.NextSerial(gaveUp, "bill", 1, nil); idforge.ErrorCode(err) != idforge.CodeCanceled {
		t.Fatalf("canceled during the first compilation: %v (code %s), want canceled", err, idforge.ErrorCode(err))
	}
	if err := iss.CreateSerial(gaveUp, idforge.Serial{Name: "sn", Template: "S@{seq:order,width=4}"}); idforge.ErrorCode(err) != idforge.CodeCanceled {
		t.Fatalf("CreateSerial canceled while compiling: %v (code %s), want canceled", err, idforge.ErrorCode(err))
	}
	if got, err := iss.NextSerial(ctx, "bill", 1, nil); err != nil || got[0] != "B0001" {
		t.Fatalf("the next request: %v, %v", got, err)
	}
}
