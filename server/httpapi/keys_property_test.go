package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/httpwire"
	"github.com/idforge/idforge/issuer"
	"github.com/idforge/idforge/obfuscate"
	"github.com/idforge/idforge/segment"
	"github.com/idforge/idforge/snowflake"
	"github.com/idforge/idforge/store/memstore"
)

// keyDef is one key definition a user can make: a strategy, a start and a
// step (sent over POST /v1/keys), and a format spec (from the
// configuration, "" for none).
type keyDef struct {
	strategy    idforge.Strategy
	start, step int64
	format      string
}

// keyStrategies are the strategies a key can be created with.
var keyStrategies = []idforge.Strategy{idforge.StrategySegment, idforge.StrategySnowflake, idforge.StrategyUUIDv7, idforge.StrategyULID, idforge.StrategyUUIDv4}

// keyFormats are format specs of every kind: text stages alone, and
// permutations from the narrowest to the widest.
var keyFormats = []string{
	"", "decimal:min=20", "hex", "base62:min=8", "sqids", "sqids:min=10,alphabet=abcdefghijkmnpqrstuvwxyz23456789",
	"feistel:bits=1", "feistel:bits=8", "feistel:bits=12+hex:min=3", "feistel:bits=16+base62", "feistel:bits=40+base62:min=7",
	"feistel:bits=62+sqids", "feistel:bits=63", "feistel:bits=63+hex",
}

// formatKey is the permutation key of the definitions' feistel formats.
var formatKey = []byte("a property-test key, 16+ bytes")

// maxIssuedPerKey bounds how many IDs one definition issues, so that the
// plain go test stays fast; with the small steps most definitions have it
// is several segments.
const maxIssuedPerKey = 1200

// checkKeyDef is the property every key definition must have: POST
// /v1/keys refuses it with 400 exactly when its first segment cannot be
// issued (checked against an independent computation in big integers),
// and a definition that is accepted issues, over GET /v1/ids, a batch well
// past one segment (or up to the last ID it can show, then answers
// space_exhausted) with every value distinct, in order, within its range,
// and no 500; the batch that crosses the last ID answers the IDs that
// fit.
func checkKeyDef(t *testing.T, d keyDef, batch int) keyOutcome {
	t.Helper()
	// The body says what the definition says; the rest of the check
	// works on the key it means: a segment key's step or start of 0 is
	// its default, on every path that defines a key.
	body := fmt.Sprintf(`{"key":"k","strategy":%q,"step":%d,"start":%d}`, d.strategy, d.step, d.start)
	if d.strategy != idforge.StrategySegment && d.step == 0 && d.start == 0 {
		body = fmt.Sprintf(`{"key":"k","strategy":%q}`, d.strategy)
	}
	if d.strategy == idforge.StrategySegment {
		if d.step == 0 {
			d.step = issuer.DefaultStep
		}
		if d.start == 0 {
			d.start = issuer.DefaultStart
		}
	}
	var format *obfuscate.Format
	if d.format != "" {
		f, err := obfuscate.ParseFormat(d.format)
		if err != nil {
			return outcomeUnparsed // the format parser has fuzz targets of its own
		}
		if f.Bits() > 0 {
			if f, err = f.WithKey(formatKey); err != nil {
				t.Fatal(err)
			}
		}
		format = &f
	}
	st := memstore.New()
	gen, err := snowflake.New(snowflake.Settings{Worker: 1, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer gen.Close()
	set := issuer.Settings{Logger: quiet, Segment: segment.Settings{RetryMin: time.Millisecond, RetryMax: 2 * time.Millisecond}}
	if d.step > 0 && d.step <= idforge.MaxStep {
		// Every claim exactly one step long, so that where the key runs
		// out of space is known in advance.
		set.Segment.MinStep, set.Segment.MaxStep = d.step, d.step
	}
	if format != nil {
		set.Formats = map[string]obfuscate.Format{"k": *format}
	}
	iss := issuer.New(st, gen, set)
	defer iss.Close()
	h := New(iss, Options{Logger: quiet})
	// Any 500 fails, but for a key out of space: which status
	// space_exhausted answers with is the error vocabulary's business,
	// held by its own test; this one checks the code.
	do := func(method, target, body string) (int, string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(method, target, strings.NewReader(body)))
		if rec.Code == http.StatusInternalServerError && !strings.Contains(rec.Body.String(), `"code":"space_exhausted"`) {
			t.Fatalf("%+v: %s %s: 500 %s", d, method, target, rec.Body)
		}
		return rec.Code, rec.Body.String()
	}

	status, resp := do("POST", "/v1/keys", body)
	last, fits := firstSegmentFits(d, format)
	if !fits {
		if status != 400 || errorCode(t, resp) != "invalid_argument" {
			t.Fatalf("%+v: POST /v1/keys = %d %s, want 400 invalid_argument", d, status, resp)
		}
		if status, resp := do("GET", "/v1/keys/k", ""); status != 404 {
			t.Fatalf("%+v: a refused key was stored: %d %s", d, status, resp)
		}
		return outcomeRefused
	}
	if status != 201 {
		t.Fatalf("%+v: POST /v1/keys = %d %s, want 201", d, status, resp)
	}

	// How many IDs the key can issue: a segment key's claims are exactly
	// one step and must end by the largest int64, and its IDs must not
	// pass what its format shows.
	capacity := int64(math.MaxInt64)
	if d.strategy == idforge.StrategySegment {
		capacity = min((math.MaxInt64-d.start)/d.step*d.step, last-d.start+1)
	}
	want := int64(maxIssuedPerKey)
	if d.strategy == idforge.StrategySegment {
		want = min(want, 3*d.step+7)
	}
	want = min(want, capacity)
	text := obfuscate.Format{}
	if format != nil {
		text = *format
	}
	seen := make(map[string]bool, want)
	prev := int64(0)
	for issued := int64(0); issued < want; {
		// A key that will run out is asked for whole batches, so that the
		// last one crosses its end: it must answer the IDs that fit.
		n := int64(batch)
		if want < capacity {
			n = min(n, want-issued)
		}
		status, resp := do("GET", "/v1/ids/k?count="+strconv.FormatInt(n, 10), "")
		var got httpwire.IDs
		if status != 200 || json.Unmarshal([]byte(resp), &got) != nil || int64(len(got.IDs)) != min(n, capacity-issued) {
			t.Fatalf("%+v: %d IDs after %d issued (%d left): %d %s", d, n, issued, capacity-issued, status, resp)
		}
		for _, s := range got.IDs {
			if seen[s] {
				t.Fatalf("%+v: %q issued twice", d, s)
			}
			seen[s] = true
			if d.strategy.IssuesStrings() {
				continue
			}
			raw, err := text.Decode(s)
			if err != nil {
				t.Fatalf("%+v: %q does not decode in its own format: %v", d, s, err)
			}
			if d.strategy == idforge.StrategySegment && raw != d.start+issued {
				t.Fatalf("%+v: ID %d is %d, want %d (one node issues a segment key's IDs in order from its start)", d, issued, raw, d.start+issued)
			}
			if raw <= prev {
				t.Fatalf("%+v: ID %d after %d: not increasing", d, raw, prev)
			}
			prev = raw
			issued++
		}
		if d.strategy.IssuesStrings() {
			issued += n
		}
	}
	if want < capacity {
		return outcomeIssued
	}
	// Everything the key can show was issued: it is out of space, and
	// says so with its own code rather than a wrong answer.
	status, resp = do("GET", "/v1/ids/k", "")
	if status < 400 || errorCode(t, resp) != "space_exhausted" {
		t.Fatalf("%+v: past the last ID: %d %s, want space_exhausted", d, status, resp)
	}
	if _, err := iss.NextN(context.Background(), "k", 1); !errors.Is(err, idforge.ErrSpaceExhausted) {
		t.Fatalf("%+v: past the last ID: %v, want ErrSpaceExhausted", d, err)
	}
	return outcomeExhausted
}

// keyOutcome is how a key definition ended in checkKeyDef.
type keyOutcome int

const (
	outcomeUnparsed  keyOutcome = iota // its format spec does not parse
	outcomeRefused                     // POST /v1/keys answered 400
	outcomeIssued                      // it issued the batch
	outcomeExhausted                   // it issued every ID it can, then answered space_exhausted
)

// firstSegmentFits is the rule for a definition (its 0s replaced by the
// defaults), worked out in big integers apart from the code under test:
// a segment key's step is 1 to idforge.MaxStep, its start at least 1, and
// its first segment [start, start+step) ends by the largest ID it can
// issue (one below the largest int64, since a claim's end is stored; no
// more than its format shows); other strategies take no step or start, a snowflake key only a
// permutation of all 63 bits, uuidv7 and ulid keys no format. It returns
// that largest ID too.
func firstSegmentFits(d keyDef, format *obfuscate.Format) (last int64, fits bool) {
	lastID := new(big.Int).Sub(big.NewInt(math.MaxInt64), big.NewInt(1))
	if format != nil && format.Bits() > 0 {
		shown := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), uint(format.Bits())), big.NewInt(1))
		if shown.Cmp(lastID) < 0 {
			lastID = shown
		}
	}
	switch d.strategy {
	case idforge.StrategySegment:
		end := new(big.Int).Add(big.NewInt(d.start), big.NewInt(d.step))
		end.Sub(end, big.NewInt(1))
		return lastID.Int64(), d.step >= 1 && d.step <= idforge.MaxStep && d.start >= 1 && end.Cmp(lastID) <= 0
	case idforge.StrategySnowflake:
		return 0, d.step == 0 && d.start == 0 && (format == nil || format.Bits() == 0 || format.Bits() == 63)
	}
	return 0, d.step == 0 && d.start == 0 && format == nil
}

// edgeInt64 returns a value near one of the edges a key's start or step
// meets, or a random one.
func edgeInt64(r *rand.Rand, step int64, bits int) int64 {
	top := int64(math.MaxInt64)
	if bits > 0 && bits < 63 {
		top = 1<<bits - 1
	}
	switch r.IntN(10) {
	case 0:
		return []int64{0, -1, math.MinInt64, math.MaxInt64, math.MaxInt64 - 1, idforge.MaxStep, idforge.MaxStep + 1}[r.IntN(7)]
	case 1, 2, 3:
		// Around the last start that fits: ±2.
		return math.MaxInt64 - step - 2 + r.Int64N(5) - 1
	case 4, 5:
		// Around the last start a permuted format can show.
		return top - step - 2 + r.Int64N(5) + 1
	case 6:
		return r.Int64()
	}
	return 1 + r.Int64N(1000)
}

// TestKeyDefinitionsIssue generates key definitions around every edge
// (start and step near the int64 limits and a format's width, every
// strategy and format kind) and checks each with checkKeyDef.
func TestKeyDefinitionsIssue(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 2))
	outcomes := map[keyOutcome]int{}
	// 240 cases take about a second; fewer (as -short once ran) reach
	// no exhausted key at all, so the count is the same everywhere.
	const runs = 240
	for i := range runs {
		d := keyDef{strategy: keyStrategies[r.IntN(len(keyStrategies))], format: keyFormats[r.IntN(len(keyFormats))]}
		if i%3 == 0 {
			d.strategy = idforge.StrategySegment
		}
		bits := 0
		if f, err := obfuscate.ParseFormat(d.format); err == nil {
			bits = f.Bits()
		}
		if d.strategy == idforge.StrategySegment || r.IntN(4) == 0 {
			d.step = 1 + r.Int64N(300)
			if r.IntN(4) == 0 {
				d.step = edgeInt64(r, 0, 0)
			}
			d.start = edgeInt64(r, d.step, bits)
		}
		if d.step > 0 && bits == 0 && r.IntN(2) == 0 {
			d.format = "" // plain keys near the int64 limit are the case of most interest
		}
		outcomes[checkKeyDef(t, d, 1+r.IntN(400))]++
	}
	// The generator must keep reaching every outcome, or it tests less
	// than it seems to.
	for _, o := range []keyOutcome{outcomeRefused, outcomeIssued, outcomeExhausted} {
		if outcomes[o] < runs/20 {
			t.Errorf("only %d of %d definitions ended as outcome %d: %v", outcomes[o], runs, o, outcomes)
		}
	}
	t.Logf("outcomes (refused, issued, exhausted): %d, %d, %d", outcomes[outcomeRefused], outcomes[outcomeIssued], outcomes[outcomeExhausted])
}

// FuzzKeys runs checkKeyDef on fuzzed definitions: go test -fuzz FuzzKeys.
func FuzzKeys(f *testing.F) {
	for _, d := range []keyDef{
		{idforge.StrategySegment, 1, 1000, ""},
		{idforge.StrategySegment, math.MaxInt64, 1000, ""},
		{idforge.StrategySegment, math.MaxInt64 - 1000, 1000, ""},
		{idforge.StrategySegment, math.MaxInt64 - 1001, 1000, ""},
		{idforge.StrategySegment, math.MaxInt64 - 250, 100, "hex"},
		{idforge.StrategySegment, 1, idforge.MaxStep, ""},
		{idforge.StrategySegment, 0, 10, ""},
		{idforge.StrategySegment, 5, -10, ""},
		{idforge.StrategySegment, 156, 100, "feistel:bits=8"},
		{idforge.StrategySegment, 157, 100, "feistel:bits=8"},
		{idforge.StrategySegment, 1, 1000, "feistel:bits=8"},
		{idforge.StrategySegment, 1<<40 - 300, 100, "feistel:bits=40+base62:min=7"},
		{idforge.StrategySegment, math.MaxInt64 - 300, 100, "feistel:bits=63+sqids"},
		{idforge.StrategySnowflake, 0, 0, "feistel:bits=63+base62"},
		{idforge.StrategySnowflake, 0, 0, "feistel:bits=40"},
		{idforge.StrategySnowflake, 1, 10, ""},
		{idforge.StrategyUUIDv7, 0, 0, ""},
		{idforge.StrategyULID, 0, 0, "hex"},
		{idforge.StrategyUUIDv4, 0, 0, ""},
	} {
		sel := uint8(0)
		for i, s := range keyStrategies {
			if s == d.strategy {
				sel = uint8(i)
			}
		}
		f.Add(sel, d.start, d.step, d.format, uint16(100))
	}
	f.Fuzz(func(t *testing.T, sel uint8, start, step int64, format string, batch uint16) {
		d := keyDef{strategy: keyStrategies[int(sel)%len(keyStrategies)], start: start, step: step, format: format}
		checkKeyDef(t, d, 1+int(batch)%idforge.MaxCount)
	})
}
