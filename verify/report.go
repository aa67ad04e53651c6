package verify

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// Report is what a run saw. It marshals to JSON as the CLI's --json prints
// it.
type Report struct {
	Started time.Time     `json:"started"`
	Elapsed time.Duration `json:"elapsed_ns"`
	Nodes   []string      `json:"nodes"`
	// Values, Requests and Errors add up the targets'; Violations counts
	// every violation, Examples only the first few of each target.
	Values     int64          `json:"values"`
	Requests   int64          `json:"requests"`
	Errors     int64          `json:"errors"`
	Violations int64          `json:"violations"`
	Targets    []TargetReport `json:"targets"`
	// Workers are the snowflake datacenter and worker IDs each node's
	// IDs carried.
	Workers []WorkerUse `json:"workers,omitempty"`
	// SetBytes is the memory the sets of seen values held at the end.
	SetBytes int64 `json:"set_bytes"`
	// Passed is true when values were answered and none broke a check.
	Passed bool `json:"passed"`
}

// TargetReport is one target's share of a Report.
type TargetReport struct {
	Name     string `json:"name"`
	Kind     Kind   `json:"kind"`
	Values   int64  `json:"values"`
	Requests int64  `json:"requests"`
	// Errors counts failed requests by error code (see errorCode).
	Errors     map[string]int64 `json:"errors"`
	Violations map[Check]int64  `json:"violations"`
	Examples   []Violation      `json:"examples,omitempty"`
	SetBytes   int64            `json:"set_bytes"`
	// TemplateChecked says whether serials were checked against their
	// template (a serial target without one is checked for uniqueness
	// only).
	TemplateChecked bool `json:"template_checked,omitempty"`
}

// WorkerUse is a datacenter and worker ID seen in a node's IDs.
type WorkerUse struct {
	Node       string `json:"node"`
	Datacenter int64  `json:"datacenter"`
	Worker     int64  `json:"worker"`
}

func sortWorkers(ws []WorkerUse) {
	slices.SortFunc(ws, func(a, b WorkerUse) int {
		return cmp.Or(cmp.Compare(a.Node, b.Node), cmp.Compare(a.Datacenter, b.Datacenter), cmp.Compare(a.Worker, b.Worker))
	})
}

// WriteText writes the report for a person: a line per target with its
// checks, the worker IDs per node, the first violations and the verdict.
func (r *Report) WriteText(w io.Writer) error {
	secs := r.Elapsed.Seconds()
	if secs <= 0 {
		secs = 1
	}
	fmt.Fprintf(w, "verified %d values from %d nodes in %s (%.0f/s), %d requests, %d errors\n",
		r.Values, len(r.Nodes), r.Elapsed.Round(time.Millisecond), float64(r.Values)/secs, r.Requests, r.Errors)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TARGET\tKIND\tVALUES\tERRORS\tCHECKS")
	for _, t := range r.Targets {
		var checks []string
		for _, c := range checksOf(t) {
			if n := t.Violations[c]; n > 0 {
				checks = append(checks, fmt.Sprintf("%s FAIL (%d)", c, n))
			} else {
				checks = append(checks, string(c)+" ok")
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", t.Name, t.Kind, t.Values, errorsText(t.Errors), strings.Join(checks, ", "))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(r.Workers) > 0 {
		byNode := map[string][]string{}
		for _, u := range r.Workers {
			byNode[u.Node] = append(byNode[u.Node], fmt.Sprintf("%d/%d", u.Datacenter, u.Worker))
		}
		fmt.Fprintln(w, "snowflake datacenter/worker IDs by node:")
		for _, n := range slices.Sorted(maps.Keys(byNode)) {
			fmt.Fprintf(w, "  %s: %s\n", n, strings.Join(byNode[n], " "))
		}
	}
	for _, t := range r.Targets {
		for _, v := range t.Examples {
			fmt.Fprintf(w, "VIOLATION %s\n", v)
		}
	}
	switch {
	case r.Violations > 0:
		fmt.Fprintf(w, "FAIL: %d violations\n", r.Violations)
	case r.Values == 0:
		fmt.Fprintln(w, "FAIL: no value was answered, so nothing was verified")
	default:
		fmt.Fprintln(w, "PASS")
	}
	return nil
}

// checksOf lists the checks a target's kind runs.
func checksOf(t TargetReport) []Check {
	switch t.Kind {
	case Segment:
		return []Check{Unique, Increasing}
	case Snowflake:
		return []Check{Unique, Worker, Skew}
	}
	if t.TemplateChecked {
		return []Check{Unique, Template}
	}
	return []Check{Unique}
}

func errorsText(errs map[string]int64) string {
	if len(errs) == 0 {
		return "0"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(errs)) {
		parts = append(parts, fmt.Sprintf("%s:%d", k, errs[k]))
	}
	return strings.Join(parts, " ")
}
