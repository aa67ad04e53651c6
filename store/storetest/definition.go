package storetest

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idforge/idforge"
)

// defStore returns st as an idforge.DefinitionStore, or skips the test.
func defStore(t *testing.T, st idforge.Store) idforge.DefinitionStore {
	t.Helper()
	ds, ok := st.(idforge.DefinitionStore)
	if !ok {
		t.Skip("store does not implement idforge.DefinitionStore")
	}
	return ds
}

func mustCreateDef(t *testing.T, ds idforge.DefinitionStore, d idforge.Definition) {
	t.Helper()
	if err := ds.CreateDefinition(context.Background(), d); err != nil {
		t.Fatalf("CreateDefinition(%s %q): %v", d.Kind, d.Name, err)
	}
}

// WantDefinition checks that ds holds want, comparing everything but
// Updated, which must be recent.
func WantDefinition(t *testing.T, ds idforge.DefinitionStore, want idforge.Definition) {
	t.Helper()
	got, err := ds.Definition(context.Background(), want.Kind, want.Name)
	if err != nil {
		t.Fatalf("Definition(%s %q): %v", want.Kind, want.Name, err)
	}
	checkDef(t, got, want)
}

func checkDef(t *testing.T, got, want idforge.Definition) {
	t.Helper()
	u := got.Updated
	got.Updated, want.Updated = time.Time{}, time.Time{}
	if got != want {
		t.Errorf("definition = %+v, want %+v", got, want)
	}
	if d := time.Since(u); u.IsZero() || d < -5*time.Minute || d > 5*time.Minute {
		t.Errorf("%s %q: Updated = %v, want about now", want.Kind, want.Name, u)
	}
}

func testDefinitionCreate(t *testing.T, st idforge.Store) {
	ds := defStore(t, st)
	full := idforge.Definition{Kind: "source", Name: "daily", Spec: `{"url":"redis://127.0.0.1:6379/0?prefix=计数"}`,
		Description: "per-day counter, 每日计数"}
	mustCreateDef(t, ds, full)
	WantDefinition(t, ds, full)

	// Retired and Updated are the store's to set; a description may be
	// empty; a name may hold one '/' (fingerprints).
	bare := idforge.Definition{Kind: "fingerprint", Name: "source/daily", Spec: "abc", Retired: true,
		Updated: time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)}
	mustCreateDef(t, ds, bare)
	bare.Retired, bare.Updated = false, time.Time{}
	WantDefinition(t, ds, bare)

	// The limits round-trip.
	long := idforge.Definition{Kind: strings.Repeat("k", idforge.MaxKeyLen),
		Name:        strings.Repeat("n", idforge.MaxKeyLen) + "/" + strings.Repeat("m", idforge.MaxKeyLen),
		Spec:        strings.Repeat("s", idforge.MaxSpecLen-len("é")) + "é",
		Description: strings.Repeat("d", idforge.MaxDescriptionLen)}
	mustCreateDef(t, ds, long)
	WantDefinition(t, ds, long)
}

func testDefinitionNameTaken(t *testing.T, st idforge.Store) {
	ds := defStore(t, st)
	ctx := context.Background()
	d := idforge.Definition{Kind: "counter", Name: "orders", Spec: `{"period":"day"}`}
	mustCreateDef(t, ds, d)
	again := d
	again.Spec = `{"period":"month"}`
	wantErr(t, ds.CreateDefinition(ctx, again), idforge.ErrKeyExists, "CreateDefinition of a taken name")
	WantDefinition(t, ds, d)

	// A retired name stays taken.
	if err := ds.RetireDefinition(ctx, d.Kind, d.Name); err != nil {
		t.Fatal(err)
	}
	wantErr(t, ds.CreateDefinition(ctx, again), idforge.ErrKeyExists, "CreateDefinition of a retired name")
	d.Retired = true
	WantDefinition(t, ds, d)

	// Names are per kind, and compared byte for byte.
	mustCreateDef(t, ds, idforge.Definition{Kind: "source", Name: "orders", Spec: "s"})
	mustCreateDef(t, ds, idforge.Definition{Kind: "counter", Name: "Orders", Spec: "S"})
	WantDefinition(t, ds, idforge.Definition{Kind: "counter", Name: "Orders", Spec: "S"})
}

func testDefinitionUpdate(t *testing.T, st idforge.Store) {
	ds := defStore(t, st)
	ctx := context.Background()
	d := idforge.Definition{Kind: "quota", Name: "q", Spec: `{"per_second":10}`, Description: "ten"}
	mustCreateDef(t, ds, d)
	d.Spec, d.Description = `{"per_second":20}`, ""
	if err := ds.UpdateDefinition(ctx, d); err != nil {
		t.Fatalf("UpdateDefinition: %v", err)
	}
	WantDefinition(t, ds, d)
	// The same content again is no error.
	if err := ds.UpdateDefinition(ctx, d); err != nil {
		t.Fatalf("UpdateDefinition to the same content: %v", err)
	}
	WantDefinition(t, ds, d)

	unknown := idforge.Definition{Kind: "quota", Name: "none", Spec: "x"}
	wantErr(t, ds.UpdateDefinition(ctx, unknown), idforge.ErrUnknownKey, "UpdateDefinition of an unknown definition")
	other := idforge.Definition{Kind: "counter", Name: "q", Spec: "x"}
	wantErr(t, ds.UpdateDefinition(ctx, other), idforge.ErrUnknownKey, "UpdateDefinition of another kind's name")

	if err := ds.RetireDefinition(ctx, d.Kind, d.Name); err != nil {
		t.Fatal(err)
	}
	changed := d
	changed.Spec = `{"per_second":30}`
	wantErr(t, ds.UpdateDefinition(ctx, changed), idforge.ErrRetired, "UpdateDefinition of a retired definition")
	d.Retired = true
	WantDefinition(t, ds, d)
	wantErr(t, ds.UpdateDefinition(ctx, idforge.Definition{Kind: "quota", Name: "q"}), idforge.ErrInvalidArgument, "UpdateDefinition with an empty spec")
}

func testDefinitionRetire(t *testing.T, st idforge.Store) {
	ds := defStore(t, st)
	ctx := context.Background()
	d := idforge.Definition{Kind: "source", Name: "old", Spec: "s", Description: "kept"}
	mustCreateDef(t, ds, d)
	for i := range 2 { // idempotent
		if err := ds.RetireDefinition(ctx, d.Kind, d.Name); err != nil {
			t.Fatalf("RetireDefinition #%d: %v", i+1, err)
		}
	}
	d.Retired = true
	WantDefinition(t, ds, d)
	wantErr(t, ds.RetireDefinition(ctx, "source", "none"), idforge.ErrUnknownKey, "RetireDefinition of an unknown definition")
	wantErr(t, ds.RetireDefinition(ctx, "counter", "old"), idforge.ErrUnknownKey, "RetireDefinition of another kind's name")
	_, err := ds.Definition(ctx, "source", "none")
	wantErr(t, err, idforge.ErrUnknownKey, "Definition of an unknown definition")
}

func testDefinitionsSorted(t *testing.T, st idforge.Store) {
	ds := defStore(t, st)
	ctx := context.Background()
	defs, err := ds.Definitions(ctx, "source")
	if err != nil || len(defs) != 0 {
		t.Fatalf("Definitions on an empty store = %+v, %v", defs, err)
	}
	want := []idforge.Definition{
		{Kind: "source", Name: "A-upper", Spec: "1"},
		{Kind: "source", Name: "a", Spec: "2", Description: "lower"},
		{Kind: "source", Name: "a-b", Spec: "3"},
		{Kind: "source", Name: "a.b", Spec: "4"},
		{Kind: "source", Name: "b", Spec: "5"},
	}
	for _, i := range []int{4, 1, 3, 0, 2} {
		mustCreateDef(t, ds, want[i])
	}
	mustCreateDef(t, ds, idforge.Definition{Kind: "counter", Name: "a", Spec: "other kind"})
	mustCreateDef(t, ds, idforge.Definition{Kind: "sources", Name: "c", Spec: "other kind"})
	if err := ds.RetireDefinition(ctx, "source", "a-b"); err != nil {
		t.Fatal(err)
	}
	want[2].Retired = true
	defs, err = ds.Definitions(ctx, "source")
	if err != nil {
		t.Fatal(err)
	}
	if len(defs) != len(want) {
		t.Fatalf("Definitions = %+v, want %+v", defs, want)
	}
	for i := range want {
		checkDef(t, defs[i], want[i])
	}
}

func testInvalidDefinitions(t *testing.T, st idforge.Store) {
	ds := defStore(t, st)
	ctx := context.Background()
	for _, tc := range []struct {
		d    idforge.Definition
		want error
	}{
		{idforge.Definition{Kind: "", Name: "n", Spec: "s"}, idforge.ErrInvalidKey},
		{idforge.Definition{Kind: "so urce", Name: "n", Spec: "s"}, idforge.ErrInvalidKey},
		{idforge.Definition{Kind: "source", Name: "", Spec: "s"}, idforge.ErrInvalidKey},
		{idforge.Definition{Kind: "source", Name: "a/b/c", Spec: "s"}, idforge.ErrInvalidKey},
		{idforge.Definition{Kind: "source", Name: "a/", Spec: "s"}, idforge.ErrInvalidKey},
		{idforge.Definition{Kind: "source", Name: strings.Repeat("n", idforge.MaxKeyLen+1), Spec: "s"}, idforge.ErrInvalidKey},
		{idforge.Definition{Kind: "source", Name: "n", Spec: ""}, idforge.ErrInvalidArgument},
		{idforge.Definition{Kind: "source", Name: "n", Spec: strings.Repeat("s", idforge.MaxSpecLen+1)}, idforge.ErrInvalidArgument},
		{idforge.Definition{Kind: "source", Name: "n", Spec: "s", Description: strings.Repeat("d", idforge.MaxDescriptionLen+1)}, idforge.ErrInvalidArgument},
		{idforge.Definition{Kind: "source", Name: "n", Spec: "\xff"}, idforge.ErrInvalidArgument},
		{idforge.Definition{Kind: "source", Name: "n", Spec: "a\x00b"}, idforge.ErrInvalidArgument},
	} {
		wantErr(t, ds.CreateDefinition(ctx, tc.d), tc.want, "CreateDefinition "+strings.ToValidUTF8(tc.d.Kind+"/"+tc.d.Name, "?"))
	}
	for _, kind := range []string{"source", "so urce", ""} {
		defs, err := ds.Definitions(ctx, kind)
		if err != nil && kind == "source" || len(defs) != 0 {
			t.Fatalf("Definitions(%q) after refused creations = %+v, %v", kind, defs, err)
		}
	}
}

func testConcurrentCreateDefinition(t *testing.T, st idforge.Store) {
	ds := defStore(t, st)
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = ds.CreateDefinition(context.Background(), idforge.Definition{Kind: "source", Name: "race", Spec: strings.Repeat("x", i+1)})
		}()
	}
	wg.Wait()
	won := -1
	for i, err := range errs {
		switch {
		case err == nil && won >= 0:
			t.Fatalf("creators %d and %d both created the definition", won, i)
		case err == nil:
			won = i
		default:
			wantErr(t, err, idforge.ErrKeyExists, "a losing CreateDefinition")
		}
	}
	if won < 0 {
		t.Fatal("no creator won")
	}
	WantDefinition(t, ds, idforge.Definition{Kind: "source", Name: "race", Spec: strings.Repeat("x", won+1)})
}

// closedDefinitions checks that every DefinitionStore call fails with
// ErrClosed after Close.
func closedDefinitions(t *testing.T, st idforge.Store) {
	ds, ok := st.(idforge.DefinitionStore)
	if !ok {
		return
	}
	ctx := context.Background()
	d := idforge.Definition{Kind: "source", Name: "after-close", Spec: "s"}
	wantErr(t, ds.CreateDefinition(ctx, d), idforge.ErrClosed, "CreateDefinition after Close")
	wantErr(t, ds.UpdateDefinition(ctx, d), idforge.ErrClosed, "UpdateDefinition after Close")
	wantErr(t, ds.RetireDefinition(ctx, d.Kind, d.Name), idforge.ErrClosed, "RetireDefinition after Close")
	_, err := ds.Definition(ctx, d.Kind, d.Name)
	wantErr(t, err, idforge.ErrClosed, "Definition after Close")
	_, err = ds.Definitions(ctx, d.Kind)
	wantErr(t, err, idforge.ErrClosed, "Definitions after Close")
}
