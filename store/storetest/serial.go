package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idforge/idforge"
)

// serialStore returns st as an idforge.SerialStore, or skips the test.
func serialStore(t *testing.T, st idforge.Store) idforge.SerialStore {
	t.Helper()
	ss, ok := st.(idforge.SerialStore)
	if !ok {
		t.Skip("store does not implement idforge.SerialStore")
	}
	return ss
}

func mustCreateSerial(t *testing.T, ss idforge.SerialStore, def idforge.Serial) {
	t.Helper()
	if err := ss.CreateSerial(context.Background(), def); err != nil {
		t.Fatalf("CreateSerial(%q): %v", def.Name, err)
	}
}

func mustSerial(t *testing.T, ss idforge.SerialStore, name string) idforge.Serial {
	t.Helper()
	def, err := ss.Serial(context.Background(), name)
	if err != nil {
		t.Fatalf("Serial(%q): %v", name, err)
	}
	return def
}

// checkSerial compares everything but Updated, which must be recent.
func checkSerial(t *testing.T, got, want idforge.Serial) {
	t.Helper()
	u := got.Updated
	got.Updated, want.Updated = time.Time{}, time.Time{}
	if got != want {
		t.Errorf("serial = %+v, want %+v", got, want)
	}
	if d := time.Since(u); u.IsZero() || d < -5*time.Minute || d > 5*time.Minute {
		t.Errorf("serial %q: Updated = %v, want about now", want.Name, u)
	}
}

func testSerialCreate(t *testing.T, st idforge.Store) {
	ss := serialStore(t, st)
	full := idforge.Serial{Name: "orders", Template: "订单@{date:yyyyMMdd}@{seq:orders,width=5}",
		TimeZone: "Asia/Shanghai", Description: "order numbers, 订单号"}
	mustCreateSerial(t, ss, full)
	checkSerial(t, mustSerial(t, ss, "orders"), full)

	// The optional fields may stay empty; Updated is the store's to set.
	bare := idforge.Serial{Name: "bare", Template: "B", Updated: time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)}
	mustCreateSerial(t, ss, bare)
	bare.Updated = time.Time{}
	checkSerial(t, mustSerial(t, ss, "bare"), bare)
}

func testSerialsSorted(t *testing.T, st idforge.Store) {
	ss := serialStore(t, st)
	ctx := context.Background()
	defs, err := ss.Serials(ctx)
	if err != nil {
		t.Fatalf("Serials on an empty store: %v", err)
	}
	if len(defs) != 0 {
		t.Fatalf("Serials on an empty store = %+v", defs)
	}
	want := []idforge.Serial{
		{Name: "A-upper", Template: "A{seq}"},
		{Name: "Order", Template: "O{seq}", TimeZone: "Europe/Berlin"},
		{Name: "a.dotted", Template: "a{seq}", Description: "a"},
		{Name: "b:colon", Template: "b{seq}"},
		{Name: "order", Template: "o{seq}", Description: "differs from Order in case only"},
		{Name: "z", Template: "z{seq}", TimeZone: "UTC", Description: "last"},
	}
	for _, i := range []int{4, 0, 5, 2, 1, 3} {
		mustCreateSerial(t, ss, want[i])
	}
	defs, err = ss.Serials(ctx)
	if err != nil {
		t.Fatalf("Serials: %v", err)
	}
	if len(defs) != len(want) {
		t.Fatalf("Serials returned %d definitions, want %d: %+v", len(defs), len(want), defs)
	}
	for i := range want {
		checkSerial(t, defs[i], want[i])
	}
}

// testSerialNameTaken: a second definition of a name is refused and the
// first stays. Keys and serials do not take each other's names.
func testSerialNameTaken(t *testing.T, st idforge.Store) {
	ss := serialStore(t, st)
	ctx := context.Background()
	first := idforge.Serial{Name: "sn", Template: "SN{seq}", Description: "first"}
	mustCreateSerial(t, ss, first)
	for _, def := range []idforge.Serial{first, {Name: "sn", Template: "other{seq}", TimeZone: "UTC"}} {
		wantErr(t, ss.CreateSerial(ctx, def), idforge.ErrKeyExists, fmt.Sprintf("CreateSerial(%+v) of a taken name", def))
	}
	checkSerial(t, mustSerial(t, ss, "sn"), first)

	mustCreate(t, st, segKey("sn", 1, 10))
	mustCreate(t, st, idforge.Key{Name: "ev", Strategy: idforge.StrategySnowflake})
	ev := idforge.Serial{Name: "ev", Template: "EV{seq}"}
	mustCreateSerial(t, ss, ev)
	checkSerial(t, mustSerial(t, ss, "ev"), ev)
	wantSegment(t, mustClaim(t, st, "sn", 0), idforge.Segment{Start: 1, End: 11, Step: 10})
}

func testSerialUnknown(t *testing.T, st idforge.Store) {
	ss := serialStore(t, st)
	ctx := context.Background()
	mustCreateSerial(t, ss, idforge.Serial{Name: "known", Template: "K{seq}"})
	mustCreate(t, st, idforge.Key{Name: "key-only", Strategy: idforge.StrategySnowflake})
	for _, name := range []string{"missing", "KNOWN", "key-only"} {
		_, err := ss.Serial(ctx, name)
		wantErr(t, err, idforge.ErrUnknownKey, fmt.Sprintf("Serial(%q)", name))
		if err != nil && !strings.Contains(err.Error(), name) {
			t.Errorf("error %q does not name the serial", err)
		}
	}
}

func testInvalidSerials(t *testing.T, st idforge.Store) {
	ss := serialStore(t, st)
	ok := idforge.Serial{Name: "ok", Template: "OK{seq}"}
	with := func(f func(d *idforge.Serial)) idforge.Serial {
		d := ok
		f(&d)
		return d
	}
	tests := []struct {
		name string
		def  idforge.Serial
		want error
	}{
		{"empty name", with(func(d *idforge.Serial) { d.Name = "" }), idforge.ErrInvalidKey},
		{"long name", with(func(d *idforge.Serial) { d.Name = strings.Repeat("n", idforge.MaxKeyLen+1) }), idforge.ErrInvalidKey},
		{"space in name", with(func(d *idforge.Serial) { d.Name = "order no" }), idforge.ErrInvalidKey},
		{"quote in name", with(func(d *idforge.Serial) { d.Name = "x'; DROP TABLE idforge_serials; --" }), idforge.ErrInvalidKey},
		{"non-ASCII name", with(func(d *idforge.Serial) { d.Name = "订单" }), idforge.ErrInvalidKey},
		{"empty template", with(func(d *idforge.Serial) { d.Template = "" }), idforge.ErrInvalidArgument},
		{"long template", with(func(d *idforge.Serial) { d.Template = strings.Repeat("t", idforge.MaxTemplateLen+1) }), idforge.ErrInvalidArgument},
		// 342 characters, but 1026 bytes.
		{"long multibyte template", with(func(d *idforge.Serial) { d.Template = strings.Repeat("号", 342) }), idforge.ErrInvalidArgument},
		{"template not UTF-8", with(func(d *idforge.Serial) { d.Template = "bad \xff byte" }), idforge.ErrInvalidArgument},
		{"long time zone", with(func(d *idforge.Serial) { d.TimeZone = strings.Repeat("z", 65) }), idforge.ErrInvalidArgument},
		{"long description", with(func(d *idforge.Serial) { d.Description = strings.Repeat("d", idforge.MaxDescriptionLen+1) }), idforge.ErrInvalidArgument},
		{"description not UTF-8", with(func(d *idforge.Serial) { d.Description = "bad \xff byte" }), idforge.ErrInvalidArgument},
	}
	for i, tt := range tests {
		if tt.def.Name == ok.Name {
			// A name of its own, so that a wrongly accepted definition
			// cannot hide the next case behind ErrKeyExists.
			tt.def.Name = fmt.Sprintf("bad-%d", i)
		}
		err := ss.CreateSerial(context.Background(), tt.def)
		if !errors.Is(err, tt.want) {
			t.Errorf("%s: CreateSerial error %v, want one wrapping %v", tt.name, err, tt.want)
		}
	}
	defs, err := ss.Serials(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(defs) != 0 {
		t.Errorf("invalid definitions were stored: %+v", defs)
	}
}

// testSerialLimitsAccepted stores every field at its longest: lengths are
// in bytes, so a store must hold MaxTemplateLen bytes of three-byte
// characters, not merely that many ASCII ones.
func testSerialLimitsAccepted(t *testing.T, st idforge.Store) {
	ss := serialStore(t, st)
	for _, def := range []idforge.Serial{
		{Name: strings.Repeat("s", idforge.MaxKeyLen), Template: strings.Repeat("t", idforge.MaxTemplateLen)},
		{Name: "multibyte", Template: strings.Repeat("号", idforge.MaxTemplateLen/3) + "x",
			TimeZone: strings.Repeat("z", 64), Description: strings.Repeat("号", 85) + "d"},
		{Name: "Aa0._:-", Template: "{seq}", TimeZone: "America/Argentina/ComodRivadavia",
			Description: strings.Repeat("d", idforge.MaxDescriptionLen)},
	} {
		mustCreateSerial(t, ss, def)
		checkSerial(t, mustSerial(t, ss, def.Name), def)
	}
}

// testConcurrentCreateSerial races creators of one name: exactly one wins,
// and its definition is the one stored.
func testConcurrentCreateSerial(t *testing.T, st idforge.Store) {
	ss := serialStore(t, st)
	RaceCreateSerial(t, []idforge.SerialStore{ss}, 8)
	defs, err := ss.Serials(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(defs) != 1 {
		t.Errorf("Serials = %+v, want one definition", defs)
	}
}

// RaceCreateSerial has perStore creators on each of stores (several
// Stores on one database, as several nodes would be) race to create the
// serial "shared", each with its own template. It checks that exactly one
// wins and that every store reads the winner's definition, and returns it.
func RaceCreateSerial(t *testing.T, stores []idforge.SerialStore, perStore int) idforge.Serial {
	t.Helper()
	type result struct {
		def idforge.Serial
		err error
	}
	results := make(chan result, len(stores)*perStore)
	var start, wg sync.WaitGroup
	start.Add(1)
	for i, ss := range stores {
		for j := range perStore {
			wg.Go(func() {
				start.Wait()
				def := idforge.Serial{Name: "shared", Template: fmt.Sprintf("S%d-%d{seq}", i, j), Description: "raced"}
				results <- result{def, ss.CreateSerial(context.Background(), def)}
			})
		}
	}
	start.Done()
	wg.Wait()
	close(results)
	var won []idforge.Serial
	for r := range results {
		switch {
		case r.err == nil:
			won = append(won, r.def)
		case !errors.Is(r.err, idforge.ErrKeyExists):
			t.Errorf("CreateSerial: %v, want nil or ErrKeyExists", r.err)
		}
	}
	if len(won) != 1 {
		t.Fatalf("%d creators of one serial succeeded, want 1: %+v", len(won), won)
	}
	for _, ss := range stores {
		WantSerial(t, ss, won[0])
	}
	return won[0]
}

// WantSerial checks that ss holds def, Updated aside (which must be
// recent).
func WantSerial(t *testing.T, ss idforge.SerialStore, def idforge.Serial) {
	t.Helper()
	checkSerial(t, mustSerial(t, ss, def.Name), def)
}
