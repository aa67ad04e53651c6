package verify

import (
	"fmt"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idforge/idforge/snowflake"
)

// Kind is what a Target issues.
type Kind string

// The kinds of targets.
const (
	// Segment is a segment key: IDs unique across nodes and strictly
	// increasing per client of a node.
	Segment Kind = "segment"
	// Snowflake is a snowflake key: IDs unique, each node's IDs carrying
	// worker IDs no other node's carry, times within the allowed skew.
	Snowflake Kind = "snowflake"
	// Serial is a serial-number definition: values unique and of the
	// definition's template.
	Serial Kind = "serial"
)

// Check names one property a run checks.
type Check string

// The checks. Each violation names one.
const (
	// Unique: no value answered twice, by one node or by two.
	Unique Check = "unique"
	// Increasing: a segment key's IDs strictly increase in the order one
	// client of one node received them.
	Increasing Check = "increasing"
	// Worker: no two nodes issue snowflake IDs with the same datacenter
	// and worker ID, and all nodes decode IDs with the same layout. A
	// worker ID that moves from one node to another within a run (a
	// lease taken over after its node died) is reported too: it is
	// safe only when the two nodes' times did not overlap.
	Worker Check = "worker"
	// Skew: a snowflake ID's time lies between when it was asked for and
	// when it arrived, give or take the allowed skew and one tick.
	Skew Check = "skew"
	// Template: a serial has the shape of its definition's template.
	Template Check = "template"
)

// A Violation is one answer that broke a check.
type Violation struct {
	Check  Check  `json:"check"`
	Target string `json:"target"`
	// Node is the name of the node that answered; Client the index of
	// the client (of that node and target) that received it, -1 for the
	// first ID Run asks a node for to learn its layout.
	Node   string `json:"node"`
	Client int    `json:"client"`
	// Value is the value in question, Detail what is wrong with it.
	Value  string `json:"value"`
	Detail string `json:"detail"`
}

func (v Violation) String() string {
	from := fmt.Sprintf("client %d", v.Client)
	if v.Client < 0 {
		from = "its first answer"
	}
	return fmt.Sprintf("%s %s: %s from %s (%s): %s", v.Check, v.Target, v.Value, v.Node, from, v.Detail)
}

// Checker checks answers as they arrive, keeping what it must remember in
// compact sets (see NewRangeSet and NewHashSet). Run feeds it; a program
// that drives the nodes its own way can feed it directly. It is safe for
// concurrent use.
type Checker struct {
	targets  []*targetState
	nodes    []string
	skew     time.Duration
	examples int
	now      func() time.Time

	mu      sync.Mutex
	layout  *snowflake.Layout // the first node's layout
	layoutN int               // the node it came from
	workers map[[2]int64]int  // datacenter, worker → node
	workerS map[[3]int64]bool // datacenter, worker, node seen
}

// targetState is one target's share of a Checker.
type targetState struct {
	t       Target
	seen    IDSet
	pattern *regexp.Regexp

	values     atomic.Int64
	requests   atomic.Int64
	mu         sync.Mutex
	errors     map[string]int64
	last       map[[2]int]int64 // node, client → the last segment ID
	violations map[Check]int64
	examples   []Violation
	layouts    map[int]snowflake.Layout // node → layout (snowflake targets)
}

// CheckerOptions configure NewChecker.
type CheckerOptions struct {
	// Nodes name the nodes, for reports; observations give a node as
	// its index here.
	Nodes []string
	// Targets are what is checked; observations give a target as its
	// index here.
	Targets []Target
	// MaxSkew is how far a snowflake ID's time may lie outside the time
	// it was asked for and received (default DefaultMaxSkew).
	MaxSkew time.Duration
	// Examples is how many violations of each check are kept per target
	// (default 5).
	Examples int
}

// DefaultMaxSkew is the default MaxSkew: one second.
const DefaultMaxSkew = time.Second

// NewChecker returns a Checker of targets on nodes. A serial target's
// Template, when set, must parse (see Target).
func NewChecker(o CheckerOptions) (*Checker, error) {
	c := &Checker{nodes: o.Nodes, skew: o.MaxSkew, examples: o.Examples, now: time.Now,
		workers: map[[2]int64]int{}, workerS: map[[3]int64]bool{}}
	if c.skew <= 0 {
		c.skew = DefaultMaxSkew
	}
	if c.examples <= 0 {
		c.examples = 5
	}
	for _, t := range o.Targets {
		ts := &targetState{t: t, errors: map[string]int64{}, last: map[[2]int]int64{},
			violations: map[Check]int64{}, layouts: map[int]snowflake.Layout{}}
		switch t.Kind {
		case Segment:
			ts.seen = NewRangeSet()
		case Snowflake, Serial:
			ts.seen = NewHashSet()
		default:
			return nil, fmt.Errorf("verify: target %q: unknown kind %q (want segment, snowflake or serial)", t.Name, t.Kind)
		}
		if t.Kind == Serial && t.Template != "" {
			re, err := t.pattern()
			if err != nil {
				return nil, err
			}
			ts.pattern = re
		}
		c.targets = append(c.targets, ts)
	}
	return c, nil
}

// violate records a violation.
func (ts *targetState) violate(c *Checker, v Violation) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.violations[v.Check]++
	if ts.violations[v.Check] <= int64(c.examples) {
		ts.examples = append(ts.examples, v)
	}
}

// SetLayout tells the checker which snowflake layout node decodes
// target's IDs with (Run asks each node). IDs of a snowflake target from a
// node without a layout are checked for uniqueness only. Nodes whose
// layouts differ are a Worker violation: their IDs can collide whatever
// their worker IDs.
func (c *Checker) SetLayout(target, node int, l snowflake.Layout) {
	ts := c.targets[target]
	ts.mu.Lock()
	ts.layouts[node] = l
	ts.mu.Unlock()
	c.mu.Lock()
	first, firstNode := c.layout, c.layoutN
	if first == nil {
		c.layout, c.layoutN = &l, node
	}
	c.mu.Unlock()
	if first != nil && !first.Equal(l) {
		ts.violate(c, Violation{Check: Worker, Target: ts.t.Name, Node: c.nodes[node], Value: l.String(),
			Detail: fmt.Sprintf("the node decodes with layout %s, %s with %s: IDs of different layouts can collide", l, c.nodes[firstNode], first)})
	}
}

// Failed records a request of target to node that was answered with an
// error (code: idforge's error code, or what stood in for one). Errors
// are not violations: a clear error is what idforge promises when it
// cannot issue.
func (c *Checker) Failed(target int, code string) {
	ts := c.targets[target]
	ts.requests.Add(1)
	ts.mu.Lock()
	ts.errors[code]++
	ts.mu.Unlock()
}

// answered counts a request of target answered with n values, and
// returns the target and a violation naming who answered, to fill in.
func (c *Checker) answered(target, node, client, n int) (*targetState, Violation) {
	ts := c.targets[target]
	ts.requests.Add(1)
	ts.values.Add(int64(n))
	return ts, Violation{Target: ts.t.Name, Node: c.nodes[node], Client: client}
}

// IDs checks IDs of a segment or snowflake target that node answered to
// one request of one of its clients, sent at sent and answered at
// received.
func (c *Checker) IDs(target, node, client int, ids []int64, sent, received time.Time) {
	ts, v := c.answered(target, node, client, len(ids))
	for _, id := range ids {
		if !ts.seen.Add(uint64(id)) {
			v.Check, v.Value, v.Detail = Unique, strconv.FormatInt(id, 10), "answered before"
			ts.violate(c, v)
		}
	}
	switch ts.t.Kind {
	case Segment:
		c.increasing(ts, node, client, ids, v)
	case Snowflake:
		ts.mu.Lock()
		l, ok := ts.layouts[node]
		ts.mu.Unlock()
		if ok {
			c.snowflake(ts, l, node, ids, sent, received, v)
		}
	}
}

// increasing checks that ids continue the client's strictly increasing
// sequence.
func (c *Checker) increasing(ts *targetState, node, client int, ids []int64, v Violation) {
	k := [2]int{node, client}
	ts.mu.Lock()
	last, had := ts.last[k]
	ts.last[k] = ids[len(ids)-1]
	ts.mu.Unlock()
	for _, id := range ids {
		if had && id <= last {
			v.Check, v.Value, v.Detail = Increasing, strconv.FormatInt(id, 10), fmt.Sprintf("after %d", last)
			ts.violate(c, v)
		}
		last, had = id, true
	}
}

// snowflake decodes ids with node's layout and checks their worker IDs
// and times.
func (c *Checker) snowflake(ts *targetState, l snowflake.Layout, node int, ids []int64, sent, received time.Time, v Violation) {
	lo, hi := sent.Add(-c.skew-l.Unit), received.Add(c.skew)
	for _, id := range ids {
		p, err := l.Explain(id)
		v.Value = strconv.FormatInt(id, 10)
		if err != nil {
			v.Check, v.Detail = Worker, fmt.Sprintf("the node's layout %s cannot decode it: %v", l, err)
			ts.violate(c, v)
			continue
		}
		if p.Time.Before(lo) || p.Time.After(hi) {
			v.Check, v.Detail = Skew, fmt.Sprintf("its time %s is outside %s..%s (asked for then, ±%s and a tick)",
				p.Time.Format(time.RFC3339Nano), sent.UTC().Format(time.RFC3339Nano), received.UTC().Format(time.RFC3339Nano), c.skew)
			ts.violate(c, v)
		}
		w := [2]int64{p.Datacenter, p.Worker}
		c.mu.Lock()
		seen := c.workerS[[3]int64{w[0], w[1], int64(node)}]
		owner, owned := c.workers[w]
		if !owned {
			c.workers[w] = node
		}
		c.workerS[[3]int64{w[0], w[1], int64(node)}] = true
		c.mu.Unlock()
		if owned && owner != node && !seen {
			v.Check, v.Detail = Worker, fmt.Sprintf("datacenter %d worker %d, which %s issues with too", w[0], w[1], c.nodes[owner])
			ts.violate(c, v)
		}
	}
}

// Serials checks serials of a serial target that node answered to one
// request of one of its clients.
func (c *Checker) Serials(target, node, client int, values []string) {
	ts, v := c.answered(target, node, client, len(values))
	for _, s := range values {
		if !ts.seen.Add(stringHash(s)) {
			v.Check, v.Value, v.Detail = Unique, s, "answered before (compared by 64-bit hash)"
			ts.violate(c, v)
		}
		if ts.pattern != nil && !ts.pattern.MatchString(s) {
			v.Check, v.Value, v.Detail = Template, s, fmt.Sprintf("does not have the shape of %s", ts.t.Template)
			ts.violate(c, v)
		}
	}
}

// Report summarizes what the checker saw so far.
func (c *Checker) Report() *Report {
	r := &Report{Nodes: c.nodes, Passed: true}
	for _, ts := range c.targets {
		ts.mu.Lock()
		tr := TargetReport{Name: ts.t.Name, Kind: ts.t.Kind, Values: ts.values.Load(), Requests: ts.requests.Load(),
			Errors: map[string]int64{}, Violations: map[Check]int64{}, Examples: append([]Violation(nil), ts.examples...),
			SetBytes: ts.seen.Bytes(), TemplateChecked: ts.pattern != nil}
		for k, n := range ts.errors {
			tr.Errors[k] = n
			r.Errors += n
		}
		for k, n := range ts.violations {
			tr.Violations[k] = n
			r.Violations += n
		}
		ts.mu.Unlock()
		r.Values += tr.Values
		r.Requests += tr.Requests
		r.SetBytes += tr.SetBytes
		r.Targets = append(r.Targets, tr)
	}
	c.mu.Lock()
	for w := range c.workerS {
		r.Workers = append(r.Workers, WorkerUse{Node: c.nodes[w[2]], Datacenter: w[0], Worker: w[1]})
	}
	c.mu.Unlock()
	sortWorkers(r.Workers)
	r.Passed = r.Violations == 0 && r.Values > 0
	return r
}
