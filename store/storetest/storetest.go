// Package storetest is the conformance and benchmark suite every idforge
// store backend runs, so that all of them keep the same contract:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) idforge.Store { return openFresh(t) })
//	}
//
//	func BenchmarkStore(b *testing.B) {
//		storetest.Bench(b, func(b *testing.B) idforge.Store { return openFresh(b) })
//	}
//
// Each subtest and benchmark calls open for a store of its own, which must
// be empty; the suite closes it when the subtest ends (Close is idempotent,
// so open may register its own cleanup too).
//
// Besides the contract documented on idforge.SegmentStore and
// idforge.KeyStore, the suite checks the key rules every persistent
// backend applies: a segment key's step is in [1, 2³¹−1] and its MaxID, the
// first ID issued, is at least 1; the strategy is known; the description
// is UTF-8 of at most 256 bytes.
//
// Stores that implement the optional idforge.SegmentReturner,
// idforge.Migrator, idforge.SerialStore or idforge.DefinitionStore are
// held to those contracts too;
// for the others the cases are skipped. For serials the suite also checks
// that a definition passing idforge.Serial.Validate round-trips exactly
// (a template of MaxTemplateLen bytes of multibyte text included), that
// names compare byte for byte, and that serial names are a namespace of
// their own: a key does not take a serial's name, nor a serial a key's.
// For definitions it checks that names are per kind and stay taken once
// retired, and that the limits of idforge.Definition.Validate round-trip.
// That a definition survives a restart is for each backend's own tests:
// the suite cannot reopen a store.
package storetest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idforge/idforge"
)

// Run runs the conformance suite against the stores open returns.
func Run(t *testing.T, open func(t *testing.T) idforge.Store) {
	RunWith(t, open, Options{})
}

// Options relax the suite for stores that document a weaker property.
type Options struct {
	// MayLeaveGaps accepts gaps between the segments of concurrent
	// claims (a store that abandons room when claims race, as
	// store/redis does); overlaps are refused all the same.
	MayLeaveGaps bool
	// Blocks is for a store that claims fixed blocks of the stored step
	// whatever step is asked for, from databases that each hold part of
	// the key (store/shards): explicit steps, the limits of one row and
	// a max_id that follows every claim are not checked, and gaps
	// between concurrent claims are accepted.
	Blocks bool
}

// RunWith runs the conformance suite with opts.
func RunWith(t *testing.T, open func(t *testing.T) idforge.Store, opts Options) {
	tests := []struct {
		name string
		fn   func(t *testing.T, st idforge.Store)
	}{
		{"CreateSegmentKey", testCreateSegmentKey},
		{"CreateSnowflakeKey", testCreateSnowflakeKey},
		{"KeysSorted", testKeysSorted},
		{"NameConflict", testNameConflict},
		{"ConcurrentCreate", testConcurrentCreate},
		{"InvalidKeys", testInvalidKeys},
		{"LimitsAccepted", testLimitsAccepted},
		{"UnknownKey", testUnknownKey},
		{"LeafClaim", testLeafClaim},
		{"ExplicitStep", testExplicitStep},
		{"NegativeStep", testNegativeStep},
		{"CanceledClaim", testCanceledClaim},
		{"Overflow", testOverflow},
		{"ConcurrentClaims", func(t *testing.T, st idforge.Store) { testConcurrentClaims(t, st, opts) }},
		{"ReturnSegment", testReturnSegment},
		{"ReturnRace", testReturnRace},
		{"Migrate", testMigrate},
		{"UpdateKey", testUpdateKey},
		{"SerialCreate", testSerialCreate},
		{"SerialsSorted", testSerialsSorted},
		{"SerialNameTaken", testSerialNameTaken},
		{"SerialUnknown", testSerialUnknown},
		{"InvalidSerials", testInvalidSerials},
		{"SerialLimitsAccepted", testSerialLimitsAccepted},
		{"ConcurrentCreateSerial", testConcurrentCreateSerial},
		{"DefinitionCreate", testDefinitionCreate},
		{"DefinitionNameTaken", testDefinitionNameTaken},
		{"DefinitionUpdate", testDefinitionUpdate},
		{"DefinitionRetire", testDefinitionRetire},
		{"DefinitionsSorted", testDefinitionsSorted},
		{"InvalidDefinitions", testInvalidDefinitions},
		{"ConcurrentCreateDefinition", testConcurrentCreateDefinition},
		{"Ping", testPing},
		{"Close", testClose},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if opts.Blocks && slices.Contains([]string{"ExplicitStep", "Overflow", "LimitsAccepted"}, tt.name) {
				t.Skip("a store of blocks does not claim explicit steps and divides the limits of a row")
			}
			st := open(t)
			t.Cleanup(func() { st.Close() })
			tt.fn(t, st)
		})
	}
}

// segKey is a segment key as Leaf's documentation creates them.
func segKey(name string, maxID, step int64) idforge.Key {
	return idforge.Key{Name: name, Strategy: idforge.StrategySegment, MaxID: maxID, Step: step}
}

func mustCreate(t *testing.T, st idforge.Store, k idforge.Key) {
	t.Helper()
	if err := st.CreateKey(context.Background(), k); err != nil {
		t.Fatalf("CreateKey(%+v): %v", k, err)
	}
}

func mustKey(t *testing.T, st idforge.Store, name string) idforge.Key {
	t.Helper()
	k, err := st.Key(context.Background(), name)
	if err != nil {
		t.Fatalf("Key(%q): %v", name, err)
	}
	return k
}

func mustClaim(t *testing.T, st idforge.Store, key string, step int64) idforge.Segment {
	t.Helper()
	seg, err := st.ClaimSegment(context.Background(), key, step)
	if err != nil {
		t.Fatalf("ClaimSegment(%q, %d): %v", key, step, err)
	}
	return seg
}

func wantSegment(t *testing.T, got, want idforge.Segment) {
	t.Helper()
	if got != want {
		t.Fatalf("segment = %+v, want %+v", got, want)
	}
}

func wantErr(t *testing.T, err, target error, what string) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: error %v, want one wrapping %v", what, err, target)
	}
}

// checkKey compares everything but Updated, which must be recent.
func checkKey(t *testing.T, got, want idforge.Key) {
	t.Helper()
	u := got.Updated
	got.Updated, want.Updated = time.Time{}, time.Time{}
	if got != want {
		t.Errorf("key = %+v, want %+v", got, want)
	}
	// Stores keep their own clock, and SQL timestamps have whole seconds.
	if d := time.Since(u); u.IsZero() || d < -5*time.Minute || d > 5*time.Minute {
		t.Errorf("key %q: Updated = %v, want about now", want.Name, u)
	}
}

func testCreateSegmentKey(t *testing.T, st idforge.Store) {
	k := idforge.Key{Name: "orders", Strategy: idforge.StrategySegment, Step: 2000, MaxID: 1, Description: "order numbers, 订单号"}
	mustCreate(t, st, k)
	checkKey(t, mustKey(t, st, "orders"), k)
}

func testCreateSnowflakeKey(t *testing.T, st idforge.Store) {
	k := idforge.Key{Name: "events", Strategy: idforge.StrategySnowflake, Description: "event IDs"}
	mustCreate(t, st, k)
	checkKey(t, mustKey(t, st, "events"), k)

	// Step and MaxID mean nothing to a snowflake key: asking for them is
	// a mistake worth reporting.
	err := st.CreateKey(context.Background(), idforge.Key{Name: "events2", Strategy: idforge.StrategySnowflake, Step: 100, MaxID: 7})
	if !errors.Is(err, idforge.ErrInvalidArgument) {
		t.Fatalf("snowflake key with a step: %v, want ErrInvalidArgument", err)
	}
}

func testKeysSorted(t *testing.T, st idforge.Store) {
	ctx := context.Background()
	keys, err := st.Keys(ctx)
	if err != nil {
		t.Fatalf("Keys on an empty store: %v", err)
	}
	if len(keys) != 0 {
		t.Fatalf("Keys on an empty store = %+v", keys)
	}
	want := []idforge.Key{
		{Name: "A-upper", Strategy: idforge.StrategySnowflake},
		{Name: "a.dotted", Strategy: idforge.StrategySegment, Step: 10, MaxID: 5},
		{Name: "b:colon", Strategy: idforge.StrategySnowflake, Description: "b"},
		{Name: "m_under", Strategy: idforge.StrategySegment, Step: 1, MaxID: 1, Description: "m"},
		{Name: "z", Strategy: idforge.StrategySegment, Step: 3000, MaxID: 1 << 40},
	}
	for _, i := range []int{3, 0, 4, 2, 1} {
		mustCreate(t, st, want[i])
	}
	keys, err = st.Keys(ctx)
	if err != nil {
		t.Fatalf("Keys: %v", err)
	}
	if len(keys) != len(want) {
		t.Fatalf("Keys returned %d keys, want %d: %+v", len(keys), len(want), keys)
	}
	for i := range want {
		checkKey(t, keys[i], want[i])
	}
}

func testNameConflict(t *testing.T, st idforge.Store) {
	ctx := context.Background()
	seg := idforge.Key{Name: "seg", Strategy: idforge.StrategySegment, Step: 100, MaxID: 1}
	snow := idforge.Key{Name: "snow", Strategy: idforge.StrategySnowflake}
	mustCreate(t, st, seg)
	mustCreate(t, st, snow)
	for _, name := range []string{"seg", "snow"} {
		for _, strategy := range []idforge.Strategy{idforge.StrategySegment, idforge.StrategySnowflake} {
			k := idforge.Key{Name: name, Strategy: strategy}
			if strategy == idforge.StrategySegment {
				k.Step, k.MaxID = 5, 50
			}
			wantErr(t, st.CreateKey(ctx, k), idforge.ErrKeyExists, fmt.Sprintf("CreateKey(%q, %s)", name, strategy))
		}
	}
	checkKey(t, mustKey(t, st, "seg"), seg)
	checkKey(t, mustKey(t, st, "snow"), snow)
	wantSegment(t, mustClaim(t, st, "seg", 0), idforge.Segment{Start: 1, End: 101, Step: 100})
}

// testConcurrentCreate races creators of one name: exactly one wins.
func testConcurrentCreate(t *testing.T, st idforge.Store) {
	const n = 8
	errs := make(chan error, n)
	var start sync.WaitGroup
	start.Add(1)
	for i := range n {
		go func() {
			start.Wait()
			k := idforge.Key{Name: "contested", Strategy: idforge.StrategySegment, Step: int64(i + 1), MaxID: 1}
			if i%2 == 1 {
				k = idforge.Key{Name: "contested", Strategy: idforge.StrategySnowflake}
			}
			errs <- st.CreateKey(context.Background(), k)
		}()
	}
	start.Done()
	won := 0
	for range n {
		switch err := <-errs; {
		case err == nil:
			won++
		case !errors.Is(err, idforge.ErrKeyExists):
			t.Errorf("CreateKey: %v, want nil or ErrKeyExists", err)
		}
	}
	if won != 1 {
		t.Errorf("%d creators succeeded, want 1", won)
	}
	keys, err := st.Keys(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 1 {
		t.Errorf("Keys = %+v, want one key", keys)
	}
}

func testInvalidKeys(t *testing.T, st idforge.Store) {
	ok := segKey("ok", 1, 1000)
	with := func(f func(k *idforge.Key)) idforge.Key {
		k := ok
		f(&k)
		return k
	}
	tests := []struct {
		name string
		key  idforge.Key
		want error
	}{
		{"empty name", with(func(k *idforge.Key) { k.Name = "" }), idforge.ErrInvalidKey},
		{"long name", with(func(k *idforge.Key) { k.Name = strings.Repeat("n", idforge.MaxKeyLen+1) }), idforge.ErrInvalidKey},
		{"space in name", with(func(k *idforge.Key) { k.Name = "order no" }), idforge.ErrInvalidKey},
		{"slash in name", with(func(k *idforge.Key) { k.Name = "a/b" }), idforge.ErrInvalidKey},
		{"non-ASCII name", with(func(k *idforge.Key) { k.Name = "订单" }), idforge.ErrInvalidKey},
		{"quote in name", with(func(k *idforge.Key) { k.Name = "x'; DROP TABLE leaf_alloc; --" }), idforge.ErrInvalidKey},
		{"zero step", with(func(k *idforge.Key) { k.Step = 0 }), idforge.ErrInvalidArgument},
		{"negative step", with(func(k *idforge.Key) { k.Step = -1000 }), idforge.ErrInvalidArgument},
		{"step above int32", with(func(k *idforge.Key) { k.Step = math.MaxInt32 + 1 }), idforge.ErrInvalidArgument},
		{"zero start", with(func(k *idforge.Key) { k.MaxID = 0 }), idforge.ErrInvalidArgument},
		{"negative start", with(func(k *idforge.Key) { k.MaxID = -5 }), idforge.ErrInvalidArgument},
		{"min int64 start", with(func(k *idforge.Key) { k.MaxID = math.MinInt64 }), idforge.ErrInvalidArgument},
		{"max int64 start", with(func(k *idforge.Key) { k.MaxID = math.MaxInt64 }), idforge.ErrInvalidArgument},
		{"first segment past int64", with(func(k *idforge.Key) { k.MaxID = idforge.MaxSegmentID - k.Step + 2 }), idforge.ErrInvalidArgument},
		{"no strategy", with(func(k *idforge.Key) { k.Strategy = "" }), idforge.ErrInvalidArgument},
		{"unknown strategy", with(func(k *idforge.Key) { k.Strategy = "uuid" }), idforge.ErrInvalidArgument},
		{"long description", with(func(k *idforge.Key) { k.Description = strings.Repeat("d", 257) }), idforge.ErrInvalidArgument},
		{"long multibyte description", with(func(k *idforge.Key) { k.Description = strings.Repeat("号", 86) }), idforge.ErrInvalidArgument},
		{"description not UTF-8", with(func(k *idforge.Key) { k.Description = "bad \xff byte" }), idforge.ErrInvalidArgument},
	}
	for i, tt := range tests {
		if tt.key.Name == ok.Name {
			// A name of its own, so that a wrongly accepted key cannot
			// hide the next case behind ErrKeyExists.
			tt.key.Name = fmt.Sprintf("bad-%d", i)
		}
		err := st.CreateKey(context.Background(), tt.key)
		if !errors.Is(err, tt.want) {
			t.Errorf("%s: CreateKey error %v, want one wrapping %v", tt.name, err, tt.want)
		}
	}
	keys, err := st.Keys(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 0 {
		t.Errorf("invalid keys were stored: %+v", keys)
	}
}

func testLimitsAccepted(t *testing.T, st idforge.Store) {
	for _, k := range []idforge.Key{
		{Name: strings.Repeat("k", idforge.MaxKeyLen), Strategy: idforge.StrategySegment, Step: 1, MaxID: 1},
		{Name: "big-step", Strategy: idforge.StrategySegment, Step: math.MaxInt32, MaxID: 1},
		{Name: "big-start", Strategy: idforge.StrategySegment, Step: 1, MaxID: math.MaxInt64 - 1},
		{Name: "full-description", Strategy: idforge.StrategySnowflake, Description: strings.Repeat("号", 85) + "d"},
		{Name: "Aa0._:-", Strategy: idforge.StrategySnowflake},
	} {
		mustCreate(t, st, k)
		checkKey(t, mustKey(t, st, k.Name), k)
	}
	seg := mustClaim(t, st, "big-step", 0)
	wantSegment(t, seg, idforge.Segment{Start: 1, End: math.MaxInt32 + 1, Step: math.MaxInt32})
}

func testUnknownKey(t *testing.T, st idforge.Store) {
	ctx := context.Background()
	mustCreate(t, st, idforge.Key{Name: "snow", Strategy: idforge.StrategySnowflake})
	_, err := st.Key(ctx, "missing")
	wantErr(t, err, idforge.ErrUnknownKey, `Key("missing")`)
	_, err = st.ClaimSegment(ctx, "missing", 0)
	wantErr(t, err, idforge.ErrUnknownKey, `ClaimSegment("missing", 0)`)
	_, err = st.ClaimSegment(ctx, "missing", 10)
	wantErr(t, err, idforge.ErrUnknownKey, `ClaimSegment("missing", 10)`)
	if err != nil && !strings.Contains(err.Error(), "missing") {
		t.Errorf("error %q does not name the key", err)
	}
	// A snowflake key has no segment row.
	_, err = st.ClaimSegment(ctx, "snow", 0)
	wantErr(t, err, idforge.ErrUnknownKey, `ClaimSegment("snow", 0)`)
}

// testLeafClaim checks Leaf's arithmetic: a row (max_id 1, step 2000) issues
// 1..2000 first and the stored max_id is the next segment's start.
func testLeafClaim(t *testing.T, st idforge.Store) {
	mustCreate(t, st, segKey("leaf", 1, 2000))
	wantSegment(t, mustClaim(t, st, "leaf", 0), idforge.Segment{Start: 1, End: 2001, Step: 2000})
	wantSegment(t, mustClaim(t, st, "leaf", 0), idforge.Segment{Start: 2001, End: 4001, Step: 2000})
	if k := mustKey(t, st, "leaf"); k.MaxID != 4001 || k.Step != 2000 {
		t.Fatalf("after two claims key = %+v, want MaxID 4001 Step 2000", k)
	}

	// A key migrated from elsewhere starts where it says.
	mustCreate(t, st, segKey("migrated", 1_000_000, 500))
	wantSegment(t, mustClaim(t, st, "migrated", 0), idforge.Segment{Start: 1_000_000, End: 1_000_500, Step: 500})
}

func testExplicitStep(t *testing.T, st idforge.Store) {
	mustCreate(t, st, segKey("explicit", 1, 2000))
	// An explicit step overrides the stored one for this claim only; the
	// segment still reports the stored step.
	wantSegment(t, mustClaim(t, st, "explicit", 500), idforge.Segment{Start: 1, End: 501, Step: 2000})
	wantSegment(t, mustClaim(t, st, "explicit", 0), idforge.Segment{Start: 501, End: 2501, Step: 2000})
	wantSegment(t, mustClaim(t, st, "explicit", 1), idforge.Segment{Start: 2501, End: 2502, Step: 2000})
	wantSegment(t, mustClaim(t, st, "explicit", 1<<40), idforge.Segment{Start: 2502, End: 2502 + 1<<40, Step: 2000})
	if k := mustKey(t, st, "explicit"); k.MaxID != 2502+1<<40 || k.Step != 2000 {
		t.Fatalf("key = %+v, want MaxID %d Step 2000", k, 2502+1<<40)
	}
}

func testNegativeStep(t *testing.T, st idforge.Store) {
	mustCreate(t, st, segKey("neg", 1, 100))
	for _, step := range []int64{-1, -100, math.MinInt64} {
		_, err := st.ClaimSegment(context.Background(), "neg", step)
		wantErr(t, err, idforge.ErrInvalidArgument, "ClaimSegment with a negative step")
	}
	if k := mustKey(t, st, "neg"); k.MaxID != 1 {
		t.Fatalf("rejected claims moved max_id to %d", k.MaxID)
	}
}

func testCanceledClaim(t *testing.T, st idforge.Store) {
	mustCreate(t, st, segKey("ctx", 1, 100))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := st.ClaimSegment(ctx, "ctx", 0)
	wantErr(t, err, context.Canceled, "ClaimSegment with a canceled context")
	wantSegment(t, mustClaim(t, st, "ctx", 0), idforge.Segment{Start: 1, End: 101, Step: 100})
}

func testOverflow(t *testing.T, st idforge.Store) {
	ctx := context.Background()
	const top = math.MaxInt64
	mustCreate(t, st, segKey("near-top", top-1500, 1000))
	wantSegment(t, mustClaim(t, st, "near-top", 0), idforge.Segment{Start: top - 1500, End: top - 500, Step: 1000})
	for range 2 {
		_, err := st.ClaimSegment(ctx, "near-top", 0)
		wantErr(t, err, idforge.ErrSpaceExhausted, "ClaimSegment past the largest int64")
		if err != nil && !strings.Contains(err.Error(), "near-top") {
			t.Errorf("error %q does not name the key", err)
		}
		_, err = st.ClaimSegment(ctx, "near-top", math.MaxInt64)
		wantErr(t, err, idforge.ErrSpaceExhausted, "ClaimSegment(MaxInt64) past the largest int64")
	}
	if k := mustKey(t, st, "near-top"); k.MaxID != top-500 {
		t.Fatalf("refused claims changed max_id to %d, want %d", k.MaxID, int64(top-500))
	}
	// The last values up to MaxInt64−1 can still be claimed exactly.
	wantSegment(t, mustClaim(t, st, "near-top", 500), idforge.Segment{Start: top - 500, End: top, Step: 1000})
	_, err := st.ClaimSegment(ctx, "near-top", 1)
	wantErr(t, err, idforge.ErrSpaceExhausted, "ClaimSegment at the largest int64")
	if k := mustKey(t, st, "near-top"); k.MaxID != top || k.Step != 1000 {
		t.Fatalf("key = %+v, want MaxID %d", k, int64(top))
	}
	keys, err := st.Keys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 1 || keys[0].MaxID != top {
		t.Fatalf("Keys = %+v, want near-top at MaxID %d", keys, int64(top))
	}
}

// testConcurrentClaims claims from many goroutines at once, with a mix of
// explicit and stored steps: the segments must not overlap and together
// must cover [1, final max_id) without a gap.
func testConcurrentClaims(t *testing.T, st idforge.Store, opts Options) {
	mayLeaveGaps := opts.MayLeaveGaps || opts.Blocks
	const (
		workers = 16
		claims  = 20
		step    = 10
	)
	mustCreate(t, st, segKey("hot", 1, step))
	segs := make(chan idforge.Segment, workers*claims)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			ask := int64(w%3) * 7 // 0 (stored step), 7 or 14
			for range claims {
				seg, err := st.ClaimSegment(context.Background(), "hot", ask)
				if err != nil {
					errs <- err
					return
				}
				want := ask
				if want == 0 || opts.Blocks {
					want = step
				}
				if seg.Len() != want {
					errs <- fmt.Errorf("ClaimSegment(%d) returned %s, want %d IDs", ask, fmtSeg(seg), want)
					return
				}
				segs <- seg
			}
		})
	}
	wg.Wait()
	close(segs)
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		return
	}
	var all []idforge.Segment
	for s := range segs {
		all = append(all, s)
	}
	slices.SortFunc(all, func(a, b idforge.Segment) int { return cmp.Compare(a.Start, b.Start) })
	next := int64(1)
	for _, s := range all {
		switch {
		case s.Start < next:
			t.Fatalf("segment %s overlaps values up to %d", fmtSeg(s), next)
		case s.Start > next && !mayLeaveGaps:
			t.Fatalf("segment %s follows end %d: a gap", fmtSeg(s), next)
		}
		next = s.End
	}
	if k := mustKey(t, st, "hot"); k.MaxID != next && !(mayLeaveGaps && k.MaxID > next) && !opts.Blocks {
		t.Fatalf("stored max_id %d, want the last segment's end %d", k.MaxID, next)
	}
	if len(all) != workers*claims {
		t.Fatalf("%d segments, want %d", len(all), workers*claims)
	}
}

func testPing(t *testing.T, st idforge.Store) {
	if err := st.Ping(context.Background()); err != nil {
		t.Fatalf("Ping: %v", err)
	}
}

func testClose(t *testing.T, st idforge.Store) {
	ctx := context.Background()
	mustCreate(t, st, segKey("before-close", 1, 10))
	if err := st.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := st.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	_, err := st.ClaimSegment(ctx, "before-close", 0)
	wantErr(t, err, idforge.ErrClosed, "ClaimSegment after Close")
	_, err = st.Key(ctx, "before-close")
	wantErr(t, err, idforge.ErrClosed, "Key after Close")
	_, err = st.Keys(ctx)
	wantErr(t, err, idforge.ErrClosed, "Keys after Close")
	err = st.CreateKey(ctx, segKey("after-close", 1, 10))
	wantErr(t, err, idforge.ErrClosed, "CreateKey after Close")
	wantErr(t, st.Ping(ctx), idforge.ErrClosed, "Ping after Close")
	if r, ok := st.(idforge.SegmentReturner); ok {
		_, err = r.ReturnSegment(ctx, "before-close", 1, 11)
		wantErr(t, err, idforge.ErrClosed, "ReturnSegment after Close")
	}
	if m, ok := st.(idforge.Migrator); ok {
		wantErr(t, m.Migrate(ctx), idforge.ErrClosed, "Migrate after Close")
	}
	if ss, ok := st.(idforge.SerialStore); ok {
		wantErr(t, ss.CreateSerial(ctx, idforge.Serial{Name: "after-close", Template: "S{seq}"}), idforge.ErrClosed, "CreateSerial after Close")
		_, err = ss.Serial(ctx, "after-close")
		wantErr(t, err, idforge.ErrClosed, "Serial after Close")
		_, err = ss.Serials(ctx)
		wantErr(t, err, idforge.ErrClosed, "Serials after Close")
	}
	closedDefinitions(t, st)
}

func mustReturn(t *testing.T, r idforge.SegmentReturner, key string, from, to int64, want bool) {
	t.Helper()
	got, err := r.ReturnSegment(context.Background(), key, from, to)
	if err != nil {
		t.Fatalf("ReturnSegment(%q, %d, %d): %v", key, from, to, err)
	}
	if got != want {
		t.Fatalf("ReturnSegment(%q, %d, %d) = %v, want %v", key, from, to, got, want)
	}
}

// testReturnSegment checks the compare-and-set: a return succeeds while
// nobody has claimed since, and the next claim starts where it says.
func testReturnSegment(t *testing.T, st idforge.Store) {
	r, ok := st.(idforge.SegmentReturner)
	if !ok {
		t.Skip("store does not implement idforge.SegmentReturner")
	}
	ctx := context.Background()
	mustCreate(t, st, segKey("ret", 1, 100))
	wantSegment(t, mustClaim(t, st, "ret", 0), idforge.Segment{Start: 1, End: 101, Step: 100})
	// A node issued 1..40 and hands 41..100 back.
	mustReturn(t, r, "ret", 41, 101, true)
	if k := mustKey(t, st, "ret"); k.MaxID != 41 {
		t.Fatalf("after the return max_id = %d, want 41", k.MaxID)
	}
	wantSegment(t, mustClaim(t, st, "ret", 0), idforge.Segment{Start: 41, End: 141, Step: 100})

	// Another claim came after ours: ours can no longer be returned.
	wantSegment(t, mustClaim(t, st, "ret", 0), idforge.Segment{Start: 141, End: 241, Step: 100})
	wantSegment(t, mustClaim(t, st, "ret", 0), idforge.Segment{Start: 241, End: 341, Step: 100})
	mustReturn(t, r, "ret", 200, 241, false)
	mustReturn(t, r, "ret", 1, 101, false) // long stale
	if k := mustKey(t, st, "ret"); k.MaxID != 341 {
		t.Fatalf("refused returns changed max_id to %d, want 341", k.MaxID)
	}
	wantSegment(t, mustClaim(t, st, "ret", 0), idforge.Segment{Start: 341, End: 441, Step: 100})

	// Returning nothing at the top is a successful no-op; a whole segment
	// can go back.
	mustReturn(t, r, "ret", 441, 441, true)
	mustReturn(t, r, "ret", 341, 441, true)
	wantSegment(t, mustClaim(t, st, "ret", 50), idforge.Segment{Start: 341, End: 391, Step: 100})

	_, err := r.ReturnSegment(ctx, "ret", 391, 390)
	wantErr(t, err, idforge.ErrInvalidArgument, "ReturnSegment with from > to")
	_, err = r.ReturnSegment(ctx, "missing", 1, 10)
	wantErr(t, err, idforge.ErrUnknownKey, "ReturnSegment of an unknown key")
	mustCreate(t, st, idforge.Key{Name: "snow", Strategy: idforge.StrategySnowflake})
	_, err = r.ReturnSegment(ctx, "snow", 1, 10)
	wantErr(t, err, idforge.ErrUnknownKey, "ReturnSegment of a snowflake key")
	if k := mustKey(t, st, "ret"); k.MaxID != 391 {
		t.Fatalf("rejected returns changed max_id to %d, want 391", k.MaxID)
	}
}

// testReturnRace has nodes claim and return halves of their segments
// concurrently. A return only succeeds while nobody has claimed since, so
// the values each node keeps (the lower half after a successful return,
// the whole segment otherwise) must tile [1, final max_id) exactly: no
// overlap, and, since a successful return lowers max_id to where the next
// claim starts, no gap either.
func testReturnRace(t *testing.T, st idforge.Store) {
	r, ok := st.(idforge.SegmentReturner)
	if !ok {
		t.Skip("store does not implement idforge.SegmentReturner")
	}
	const (
		workers = 6
		rounds  = 15
		step    = 10
	)
	mustCreate(t, st, segKey("race", 1, step))
	kept := make(chan idforge.Segment, workers*rounds)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			ctx := context.Background()
			for i := range rounds {
				seg, err := st.ClaimSegment(ctx, "race", 0)
				if err != nil {
					errs <- err
					return
				}
				if (w+i)%2 == 0 {
					from := seg.Start + int64(w%step)
					back, err := r.ReturnSegment(ctx, "race", from, seg.End)
					if err != nil {
						errs <- err
						return
					}
					if back {
						seg.End = from
					}
				}
				kept <- seg
			}
		})
	}
	wg.Wait()
	close(kept)
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		return
	}
	var all []idforge.Segment
	for s := range kept {
		if s.Len() > 0 {
			all = append(all, s)
		}
	}
	slices.SortFunc(all, func(a, b idforge.Segment) int { return cmp.Compare(a.Start, b.Start) })
	next := int64(1)
	for _, s := range all {
		if s.Start != next {
			t.Fatalf("kept range %s follows end %d: overlap or gap", fmtSeg(s), next)
		}
		next = s.End
	}
	if k := mustKey(t, st, "race"); k.MaxID != next {
		t.Fatalf("stored max_id %d, want the end of the kept ranges %d", k.MaxID, next)
	}
}

// testMigrate runs Migrate twice on a store in use: keys and their
// positions survive.
func testMigrate(t *testing.T, st idforge.Store) {
	m, ok := st.(idforge.Migrator)
	if !ok {
		t.Skip("store does not implement idforge.Migrator")
	}
	seg := segKey("kept", 1, 10)
	seg.Description = "survives"
	mustCreate(t, st, seg)
	snow := idforge.Key{Name: "snow", Strategy: idforge.StrategySnowflake, Description: "also"}
	mustCreate(t, st, snow)
	wantSegment(t, mustClaim(t, st, "kept", 0), idforge.Segment{Start: 1, End: 11, Step: 10})
	for i := range 2 {
		if err := m.Migrate(context.Background()); err != nil {
			t.Fatalf("Migrate #%d: %v", i+1, err)
		}
	}
	seg.MaxID = 11
	checkKey(t, mustKey(t, st, "kept"), seg)
	checkKey(t, mustKey(t, st, "snow"), snow)
	wantSegment(t, mustClaim(t, st, "kept", 0), idforge.Segment{Start: 11, End: 21, Step: 10})
	mustCreate(t, st, segKey("after", 5, 5))
	wantSegment(t, mustClaim(t, st, "after", 0), idforge.Segment{Start: 5, End: 10, Step: 5})
}

func fmtSeg(s idforge.Segment) string {
	return fmt.Sprintf("[%d, %d)", s.Start, s.End)
}
