package verify

import (
	"strings"
	"testing"
	"time"

	"github.com/idforge/idforge/snowflake"
)

func newTestChecker(t *testing.T, targets ...Target) *Checker {
	t.Helper()
	c, err := NewChecker(CheckerOptions{Nodes: []string{"n0", "n1", "n2"}, Targets: targets, MaxSkew: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// wantViolations checks a report's violation counts and that each
// counted check has an example naming it.
func wantViolations(t *testing.T, r *Report, want map[Check]int64) {
	t.Helper()
	var total int64
	for _, tr := range r.Targets {
		for c, n := range tr.Violations {
			if want[c] != n {
				t.Errorf("%s: %d %s violations, want %d (examples %v)", tr.Name, n, c, want[c], tr.Examples)
			}
			total += n
		}
	}
	for c, n := range want {
		found := false
		for _, tr := range r.Targets {
			found = found || tr.Violations[c] == n
		}
		if !found {
			t.Errorf("no %s violations, want %d", c, n)
		}
	}
	if r.Passed != (total == 0 && r.Values > 0) {
		t.Errorf("Passed = %v with %d violations", r.Passed, total)
	}
}

func TestSegmentChecks(t *testing.T) {
	now := time.Now()
	c := newTestChecker(t, Target{Name: "order", Kind: Segment})
	c.IDs(0, 0, 0, []int64{10, 11, 12}, now, now)
	c.IDs(0, 0, 1, []int64{13, 14}, now, now)
	c.IDs(0, 1, 0, []int64{1001, 1002}, now, now)
	wantViolations(t, c.Report(), nil)

	// Node 2 answers an ID node 0 answered: the store row was lowered.
	c.IDs(0, 2, 0, []int64{12}, now, now)
	// Client 0 of node 0 goes backwards, by an ID never seen before.
	c.IDs(0, 0, 0, []int64{5}, now, now)
	// Within one batch too.
	c.IDs(0, 1, 1, []int64{2001, 2000}, now, now)
	r := c.Report()
	wantViolations(t, r, map[Check]int64{Unique: 1, Increasing: 2})
	if ex := r.Targets[0].Examples; len(ex) != 3 || ex[0].Value != "12" || ex[0].Node != "n2" || ex[0].Check != Unique {
		t.Errorf("examples = %v", ex)
	}
	var b strings.Builder
	r.WriteText(&b)
	if !strings.Contains(b.String(), "unique FAIL (1)") || !strings.Contains(b.String(), "FAIL: 3 violations") {
		t.Errorf("report:\n%s", b.String())
	}
}

func TestSnowflakeChecks(t *testing.T) {
	l, err := snowflake.Preset("twitter")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	make := func(at time.Time, worker, seq int64) int64 {
		id, err := l.Make(snowflake.Parts{Time: at, Worker: worker, Sequence: seq})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	c := newTestChecker(t, Target{Name: "msg", Kind: Snowflake})
	for n := range 3 {
		c.SetLayout(0, n, l)
	}
	c.IDs(0, 0, 0, []int64{make(now, 1, 0), make(now, 1, 1)}, now, now)
	c.IDs(0, 1, 0, []int64{make(now, 2, 0)}, now, now)
	wantViolations(t, c.Report(), nil)

	// Node 2 issues with node 0's worker ID: once reported, however
	// many IDs it issues with it.
	c.IDs(0, 2, 0, []int64{make(now, 1, 5), make(now, 1, 6)}, now, now)
	// Node 1's clock is a minute ahead.
	c.IDs(0, 1, 0, []int64{make(now.Add(time.Minute), 2, 0)}, now, now)
	// The same ID twice.
	c.IDs(0, 1, 0, []int64{make(now, 2, 0)}, now, now)
	r := c.Report()
	wantViolations(t, r, map[Check]int64{Worker: 1, Skew: 1, Unique: 1})
	if len(r.Workers) != 3 {
		t.Errorf("workers = %v", r.Workers)
	}

	// A node with another layout.
	c = newTestChecker(t, Target{Name: "msg", Kind: Snowflake})
	sony, _ := snowflake.Preset("sonyflake")
	c.SetLayout(0, 0, l)
	c.SetLayout(0, 1, sony)
	c.IDs(0, 0, 0, []int64{make(now, 1, 0)}, now, now)
	wantViolations(t, c.Report(), map[Check]int64{Worker: 1})
}

func TestSerialChecks(t *testing.T) {
	c := newTestChecker(t, Target{Name: "inv", Kind: Serial, Template: "INV-@{seq:inv,width=6}"})
	c.Serials(0, 0, 0, []string{"INV-000001", "INV-000002"})
	c.Serials(0, 1, 0, []string{"INV-000003"})
	wantViolations(t, c.Report(), nil)
	c.Serials(0, 2, 0, []string{"INV-000002", "INV-00004", "inv-000005"})
	wantViolations(t, c.Report(), map[Check]int64{Unique: 1, Template: 2})

	if _, err := NewChecker(CheckerOptions{Targets: []Target{{Name: "x", Kind: Serial, Template: "X@{random:3}"}}}); err == nil {
		t.Error("a template that cannot prove uniqueness was accepted")
	}
	if _, err := NewChecker(CheckerOptions{Targets: []Target{{Name: "x", Kind: "uuid"}}}); err == nil {
		t.Error("an unknown kind was accepted")
	}
}

// A run with no value answered did not pass, even without violations.
func TestNothingAnsweredFails(t *testing.T) {
	c := newTestChecker(t, Target{Name: "order", Kind: Segment})
	c.Failed(0, "unavailable")
	r := c.Report()
	if r.Passed || r.Errors != 1 {
		t.Fatalf("Passed %v, Errors %d", r.Passed, r.Errors)
	}
	var b strings.Builder
	r.WriteText(&b)
	if !strings.Contains(b.String(), "nothing was verified") {
		t.Errorf("report:\n%s", b.String())
	}
}
