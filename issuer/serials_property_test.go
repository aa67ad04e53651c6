package issuer

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/fakeclock"
	"github.com/idforge/idforge/segment"
	"github.com/idforge/idforge/sequence"
	"github.com/idforge/idforge/sequence/sqlrow"
	"github.com/idforge/idforge/serial"
	"github.com/idforge/idforge/snowflake"
	"github.com/idforge/idforge/store/memstore"
)

// The property every serial definition must have: a template the issuer
// accepts never issues the same serial twice, however its parameters and
// the clock change between requests, and every answer is either serials
// or the error for a space that ran out (a width too narrow for the next
// number). A template it refuses is refused with a *serial.SyntaxError
// wrapping idforge.ErrInvalidArgument that says what is wrong.
//
// The templates are drawn from the template grammar: static text, dates
// of many layouts and zones, seq parts over segment keys (small segments,
// some near a width's end), a snowflake key and real per-period counters
// (SQLite-backed sequence.Counter), with and without width= and pad=,
// parameters with every kind of constraint, checksums and random
// characters. Each accepted template issues three batches, between which
// the clock moves (by a second, a day, a month, or back an hour) and the
// parameter values change, well past one segment of its keys.
//
// The number of cases is propertyCases: 500 by default, 100 with -short,
// IDFORGE_PROPERTY_CASES to run more (CI may set 20000, about 15 s).
func TestSerialUniquenessProperty(t *testing.T) {
	w := newSerialWorlds(t)
	cases := propertyCases(t)
	r := rand.New(rand.NewPCG(20250413, 12))
	accepted, byParam, byPeriod := 0, 0, 0
	for c := range cases {
		sc := genSerialCase(randChooser{r})
		if w.check(t, c, sc) {
			accepted++
			if strings.Contains(sc.def.Template, ",by=") {
				byParam++
			}
			if perPeriodBy.MatchString(sc.def.Template) {
				byPeriod++
			}
		}
	}
	t.Logf("%d of %d random templates accepted and checked, %d with a counter chosen by a parameter, %d of them per period", accepted, cases, byParam, byPeriod)
	if (byParam == 0 || byPeriod == 0) && cases >= 100 {
		t.Fatal("no template with a counter chosen by a parameter (or none on a per-period counter) was accepted: the generator no longer exercises by=")
	}
	// A generator that produces only refusals would prove nothing.
	if accepted < cases/5 {
		t.Fatalf("only %d of %d templates were accepted: the generator no longer exercises issuing", accepted, cases)
	}
}

// perPeriodBy matches a seq with by= on one of the per-period counters.
var perPeriodBy = regexp.MustCompile(`@\{seq:(daily|daily_sh|persec|monthly)[^}]*,by=`)

// FuzzSerialUniqueness is the property of TestSerialUniquenessProperty
// with the choices that build the template (and its requests) taken from
// the fuzzer's bytes, so that mutation explores the grammar:
//
//	go test -run '^$' -fuzz FuzzSerialUniqueness -fuzztime 60s ./issuer/
func FuzzSerialUniqueness(f *testing.F) {
	// More seeds are in testdata/fuzz/FuzzSerialUniqueness, each named
	// after the template its bytes build.
	f.Add([]byte{})
	f.Add([]byte{2, 0, 5, 1, 3, 2, 0, 7, 1, 4, 2, 9, 8, 1})
	w := newSerialWorlds(f)
	var n atomic.Int64
	f.Fuzz(func(t *testing.T, choices []byte) {
		w.check(t, int(n.Add(1)), genSerialCase(&byteChooser{b: choices}))
	})
}

// propertyCases is how many random templates the property test checks.
func propertyCases(t *testing.T) int {
	if s := os.Getenv("IDFORGE_PROPERTY_CASES"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("IDFORGE_PROPERTY_CASES=%q: want a positive number", s)
		}
		return n
	}
	if testing.Short() {
		return 100
	}
	return 500
}

// A chooser makes the choices that build a case: intn returns a number in
// [0, n).
type chooser interface{ intn(n int) int }

type randChooser struct{ r *rand.Rand }

func (c randChooser) intn(n int) int { return c.r.IntN(n) }

// byteChooser takes its choices from a fuzzer's bytes; 0 once they run
// out.
type byteChooser struct{ b []byte }

func (c *byteChooser) intn(n int) int {
	if len(c.b) == 0 {
		return 0
	}
	v := int(c.b[0])
	c.b = c.b[1:]
	return v % n
}

// serialCase is one random serial definition and the requests made of it.
type serialCase struct {
	def     idforge.Serial
	batches []serialBatch
}

type serialBatch struct {
	count  int
	step   time.Duration // the clock moves by this much before the batch
	params map[string]string
}

// paramRule is what a param part accepts, to make valid values for it.
type paramRule struct {
	name    string
	chars   string // the characters values are made of
	width   int    // exact length, or the most with padding
	padded  bool
	maxLen  int
	anyFrom int // values have at least this many characters
}

// The pieces random templates are built from. The sources are named in
// newSerialWorlds.
var (
	propStatics = []string{"SN-", "-", "QJ", "0", "12", "A", "订单", "@@", "/", "x-1"}
	propLayouts = []string{"yyyyMMdd", "yyMMddHHmmss", "yyyy-MM-dd", "yyyyMd", "HHmmss", "yyyyDDD", "yyyy",
		"yyyyMM", "yyMMddHHmm", "M/d", "yyyyMMddHH", "hh", "yyyyMMddHHmmssSSS", "D"}
	propZones   = []string{"", ",tz=Asia/Shanghai", ",tz=UTC", ",tz=+08:00"}
	propSources = []string{"k1", "k1", "k2", "k3", "k3", "snow", "daily", "daily_sh", "persec", "monthly"}
	propPads    = []string{"", "", "", ",pad=0", ",pad=*", ",pad=7"}
	propSteps   = []time.Duration{0, time.Second, time.Minute, time.Hour, 24 * time.Hour, 32 * 24 * time.Hour, -time.Hour, 500 * time.Millisecond}
	propCharSet = map[string]string{"": "1A2-", "digits": "123", "upper": "ABC", "hex": "1a2b"}
)

// genSerialCase draws a template from the grammar, and three batches of
// requests with valid parameters.
func genSerialCase(c chooser) serialCase {
	var b strings.Builder
	var rules []paramRule
	parts := 1 + c.intn(5)
	for i := range parts {
		kind := c.intn(8)
		if i == parts-1 && c.intn(2) == 0 {
			kind = 2 // often end in a seq: the most common business shape
		}
		switch kind {
		case 0:
			b.WriteString(propStatics[c.intn(len(propStatics))])
		case 1:
			fmt.Fprintf(&b, "@{date:%s%s}", propLayouts[c.intn(len(propLayouts))], propZones[c.intn(len(propZones))])
		case 2, 3:
			fmt.Fprintf(&b, "@{seq:%s", propSources[c.intn(len(propSources))])
			if c.intn(3) > 0 {
				fmt.Fprintf(&b, ",width=%d%s", 1+c.intn(8), propPads[c.intn(len(propPads))])
			}
			if kind == 3 && len(rules) > 0 {
				// The counter chosen by the last parameter before it
				// (JD's job numbers per counting unit): every value
				// counts from 1 in its own key, or, on a per-period
				// counter, from 1 in every period.
				fmt.Fprintf(&b, ",by=%s", rules[len(rules)-1].name)
			}
			b.WriteString("}")
		case 4:
			r := paramRule{name: fmt.Sprintf("p%d", i)}
			sets := []string{"", "digits", "upper", "hex"}
			set := sets[c.intn(len(sets))]
			r.chars = propCharSet[set]
			fmt.Fprintf(&b, "@{param:%s", r.name)
			if set != "" {
				fmt.Fprintf(&b, ",chars=%s", set)
			}
			switch c.intn(3) {
			case 0:
				r.width = 1 + c.intn(4)
				r.maxLen, r.anyFrom = r.width, r.width
				fmt.Fprintf(&b, ",width=%d", r.width)
			case 1:
				r.width, r.padded = 1+c.intn(4), true
				r.maxLen, r.anyFrom = r.width, 1
				fmt.Fprintf(&b, ",width=%d,pad=%c", r.width, r.chars[0])
			default:
				r.maxLen, r.anyFrom = 1+c.intn(4), 1
				fmt.Fprintf(&b, ",max=%d", r.maxLen)
			}
			b.WriteString("}")
			rules = append(rules, r)
		case 5:
			algos := []string{"mod", "luhn", "iso7064"}
			ofs := []string{"", ",of=seq", ",of=all"}
			fmt.Fprintf(&b, "@{checksum:%s%s}", algos[c.intn(len(algos))], ofs[c.intn(len(ofs))])
		case 7:
			// JD's shape: a date that shows a per-period counter's
			// period, a unit, and the counter per unit per period
			// (010-6541-00001 restarting daily).
			k := [][2]string{{"daily", "yyyyMMdd"}, {"daily_sh", "yyyyMMdd,tz=Asia/Shanghai"}, {"persec", "yyMMddHHmmss"}, {"monthly", "yyyyMM"}}[c.intn(4)]
			r := paramRule{name: fmt.Sprintf("p%d", i), chars: propCharSet["digits"], width: 1 + c.intn(4)}
			r.maxLen, r.anyFrom = r.width, r.width
			if c.intn(4) > 0 { // without, the period is not shown: refused
				fmt.Fprintf(&b, "@{date:%s}-", k[1])
			}
			fmt.Fprintf(&b, "@{param:%s,chars=digits,width=%d}-@{seq:%s,by=%s,width=%d}", r.name, r.width, k[0], r.name, 1+c.intn(8))
			rules = append(rules, r)
		case 6:
			sets := []string{"", ",chars=upper", ",chars=hex"}
			fmt.Fprintf(&b, "@{random:%d%s}", 1+c.intn(4), sets[c.intn(len(sets))])
		}
	}
	zones := []string{"", "Asia/Shanghai"}
	sc := serialCase{def: idforge.Serial{Name: "prop", Template: b.String(), TimeZone: zones[c.intn(len(zones))]}}
	if sc.def.Template == "" {
		sc.def.Template = "x"
	}
	for i := range 3 {
		batch := serialBatch{count: 1 + c.intn(150), step: propSteps[c.intn(len(propSteps))], params: map[string]string{}}
		for _, r := range rules {
			// Often a value one character shorter than the last one:
			// the character it loses is the one a neighbouring number
			// of varying length could take over (A12 + 3, A1 + 23).
			if prev := ""; i > 0 {
				prev = sc.batches[i-1].params[r.name]
				if len(prev) > r.anyFrom && c.intn(2) == 0 {
					batch.params[r.name] = prev[:len(prev)-1]
					continue
				}
			}
			n := r.anyFrom + c.intn(r.maxLen-r.anyFrom+1)
			v := make([]byte, n)
			for k := range v {
				v[k] = r.chars[c.intn(len(r.chars))]
			}
			batch.params[r.name] = string(v)
		}
		sc.batches = append(sc.batches, batch)
	}
	return sc
}

// serialWorlds make a fresh issuer for every case, all sharing one
// snowflake generator and one SQLite database for the counters.
type serialWorlds struct {
	snow     *snowflake.Generator
	counters *sqlrow.CounterStore
}

func newSerialWorlds(tb testing.TB) *serialWorlds {
	tb.Helper()
	snow, err := snowflake.New(snowflake.Settings{Worker: 1, Logger: quiet})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { snow.Close() })
	db, err := sql.Open("sqlite", filepath.Join(tb.TempDir(), "counters.db")+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(OFF)")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	cs, err := sqlrow.NewCounterStore(db, sqlrow.CounterStoreConfig{})
	if err != nil {
		tb.Fatal(err)
	}
	return &serialWorlds{snow: snow, counters: cs}
}

// check defines sc in a fresh issuer and, when it is accepted, issues its
// batches; it reports whether the template was accepted.
func (w *serialWorlds) check(t *testing.T, c int, sc serialCase) bool {
	t.Helper()
	ctx := context.Background()
	clk := fakeclock.New(time.Date(2025, 4, 13, 23, 59, 58, 0, time.UTC))
	st := memstore.New()
	for _, k := range []idforge.Key{
		{Name: "k1", Strategy: idforge.StrategySegment, Step: 20, MaxID: 1},
		{Name: "k2", Strategy: idforge.StrategySegment, Step: 20, MaxID: 985}, // 15 numbers before 3 digits run out
		{Name: "k3", Strategy: idforge.StrategySegment, Step: 7, MaxID: 99_950},
		{Name: "snow", Strategy: idforge.StrategySnowflake},
	} {
		if err := st.CreateKey(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	shanghai, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Skip("no time zone data:", err)
	}
	counters := map[string]idforge.PeriodCounter{}
	for name, spec := range map[string]struct {
		period sequence.Period
		loc    *time.Location
	}{"daily": {sequence.Day, time.UTC}, "daily_sh": {sequence.Day, shanghai}, "persec": {sequence.Second, time.UTC}, "monthly": {sequence.Month, time.UTC}} {
		// Counter names are unique per case: the counters start afresh.
		ctr, err := sequence.NewCounter(ctx, w.counters, sequence.CounterSettings{
			Name: fmt.Sprintf("c%d_%s", c, name), Period: spec.period, Location: spec.loc, Clock: clk, OverCap: sequence.OverCapRefuse,
		})
		if err != nil {
			t.Fatal(err)
		}
		defer ctr.Close()
		counters[name] = ctr
	}
	iss := New(st, w.snow, Settings{Logger: quiet, Clock: clk, Counters: counters, Segment: segment.Settings{MaxStep: 20, Logger: quiet}})
	defer iss.Close()

	if err := iss.CreateSerial(ctx, sc.def); err != nil {
		var se *serial.SyntaxError
		if !errors.As(err, &se) || !errors.Is(err, idforge.ErrInvalidArgument) || se.Msg == "" || se.Col < 1 || se.Col > len(sc.def.Template)+1 {
			t.Fatalf("template %q: refused with %v (%T), want a *serial.SyntaxError wrapping ErrInvalidArgument", sc.def.Template, err, err)
		}
		return false
	}
	seen := map[string]int{}
	for b, batch := range sc.batches {
		clk.Add(batch.step)
		values, err := iss.NextSerial(ctx, sc.def.Name, batch.count, batch.params)
		if err != nil {
			// The errors an accepted template may answer with: the
			// width has no room for the next number, or a checksum over
			// text with no digits in it (parameter values without
			// digits) has nothing to check.
			spaceOut := errors.Is(err, idforge.ErrSpaceExhausted) && idforge.ErrorCode(err) == "space_exhausted"
			noDigits := errors.Is(err, idforge.ErrInvalidArgument) && strings.Contains(err.Error(), "has no digits")
			if !spaceOut && !noDigits {
				t.Fatalf("template %q, batch %d (count %d, params %v): %v (code %s), want serials or space_exhausted",
					sc.def.Template, b, batch.count, batch.params, err, idforge.ErrorCode(err))
			}
			continue
		}
		if len(values) < 1 || len(values) > batch.count {
			t.Fatalf("template %q, batch %d: %d serials for count %d", sc.def.Template, b, len(values), batch.count)
		}
		for _, v := range values {
			if prev, dup := seen[v]; dup {
				t.Fatalf("template %q issued %q twice (batches %d and %d; params %v)", sc.def.Template, v, prev, b, batch.params)
			}
			seen[v] = b
		}
	}
	return true
}
