package verify

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/client"
	"github.com/idforge/idforge/serial"
	"github.com/idforge/idforge/snowflake"
)

// Target is one thing a run asks the nodes for.
type Target struct {
	// Name is the key's or the serial definition's name.
	Name string `json:"name"`
	Kind Kind   `json:"kind"`
	// Params fill a serial template's @{param:…} fields.
	Params map[string]string `json:"params,omitempty"`
	// Template is a serial definition's template, and TimeZone its time
	// zone; with an empty Template the values' shape is not checked.
	Template string `json:"template,omitempty"`
	TimeZone string `json:"time_zone,omitempty"`
}

// pattern is the regular expression the target's serials match.
func (t Target) pattern() (*regexp.Regexp, error) {
	opts := serial.Options{Resolver: anySource{}}
	if t.TimeZone != "" {
		loc, err := time.LoadLocation(t.TimeZone)
		if err != nil {
			return nil, fmt.Errorf("verify: serial %q: time zone %q: %w", t.Name, t.TimeZone, err)
		}
		opts.Location = loc
	}
	tp, err := serial.Parse(context.Background(), t.Template, opts)
	if err != nil {
		return nil, fmt.Errorf("verify: serial %q: %w", t.Name, err)
	}
	return tp.Pattern(), nil
}

// anySource resolves every seq name to a generator that is never asked
// for a number: parsing a template only to learn its shape needs sources
// that exist.
type anySource struct{}

func (anySource) Resolve(context.Context, string) (serial.Source, error) {
	return serial.Source{Generator: unused{}}, nil
}

type unused struct{}

func (unused) Next(context.Context) (int64, error) {
	return 0, errors.New("verify: a template parsed for its shape issues nothing")
}

// Node is one node of the cluster under test.
type Node struct {
	// Name identifies the node in reports (its address).
	Name string
	// Client talks to this node only: give it one address and no
	// retries, so that every answer is the named node's.
	Client client.Client
}

// Config configures Run.
type Config struct {
	Nodes   []Node
	Targets []Target
	// Clients is the number of concurrent clients per node and target
	// (default 2).
	Clients int
	// Batch is how many values a client asks for at once (default 10;
	// 1 asks one at a time).
	Batch int
	// Duration bounds the run (default 10 s when Count is 0); Count, when
	// positive, ends it once that many values were answered. The run ends
	// at whichever comes first, or when ctx ends.
	Duration time.Duration
	Count    int64
	// MaxSkew and Examples are CheckerOptions'.
	MaxSkew  time.Duration
	Examples int
	// Progress, when set, is called about every ProgressEvery (default
	// 200 ms) while the run lasts, and once at its end.
	Progress      func(Progress)
	ProgressEvery time.Duration
}

// Progress is a run's state while it runs.
type Progress struct {
	Elapsed    time.Duration
	Values     int64
	Errors     int64
	Violations int64
	// Duration and Count are the run's bounds, for a bar.
	Duration time.Duration
	Count    int64
}

// Run drives the nodes with concurrent clients for every target until
// its bounds, checks every answer, and returns the report. It only asks
// for IDs and serials, and (once per node) for the layout of a snowflake
// target's first ID. The error is for a run that could not start; what
// the nodes answered, violations included, is in the report.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if len(cfg.Nodes) == 0 || len(cfg.Targets) == 0 {
		return nil, fmt.Errorf("%w: verify: need at least one node and one target", idforge.ErrInvalidArgument)
	}
	if cfg.Clients <= 0 {
		cfg.Clients = 2
	}
	if cfg.Batch <= 0 {
		cfg.Batch = 10
	}
	if cfg.Batch > idforge.MaxCount {
		return nil, fmt.Errorf("%w: verify: batch %d is above %d", idforge.ErrInvalidCount, cfg.Batch, idforge.MaxCount)
	}
	if cfg.Duration <= 0 && cfg.Count <= 0 {
		cfg.Duration = 10 * time.Second
	}
	if cfg.ProgressEvery <= 0 {
		cfg.ProgressEvery = 200 * time.Millisecond
	}
	names := make([]string, len(cfg.Nodes))
	for i, n := range cfg.Nodes {
		names[i] = n.Name
	}
	c, err := NewChecker(CheckerOptions{Nodes: names, Targets: cfg.Targets, MaxSkew: cfg.MaxSkew, Examples: cfg.Examples})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", idforge.ErrInvalidArgument, err)
	}
	if cfg.Duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.Duration)
		defer cancel()
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	start := time.Now()

	var total atomic.Int64
	var wg sync.WaitGroup
	for ti, t := range cfg.Targets {
		for ni, n := range cfg.Nodes {
			wg.Go(func() {
				if t.Kind == Snowflake {
					learnLayout(ctx, c, ti, ni, n.Client, t.Name)
				}
				var clients sync.WaitGroup
				for ci := range cfg.Clients {
					clients.Go(func() {
						d := driver{c: c, target: ti, node: ni, client: ci, t: t, cl: n.Client, batch: cfg.Batch}
						for ctx.Err() == nil {
							got := d.once(ctx)
							if cfg.Count > 0 && total.Add(int64(got)) >= cfg.Count {
								stop()
							}
						}
					})
				}
				clients.Wait()
			})
		}
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	progress := func() {
		if cfg.Progress == nil {
			return
		}
		r := c.Report()
		cfg.Progress(Progress{Elapsed: time.Since(start), Values: r.Values, Errors: r.Errors, Violations: r.Violations,
			Duration: cfg.Duration, Count: cfg.Count})
	}
	tick := time.NewTicker(cfg.ProgressEvery)
	defer tick.Stop()
	for running := true; running; {
		select {
		case <-done:
			running = false
		case <-tick.C:
			progress()
		}
	}
	progress()
	r := c.Report()
	r.Started, r.Elapsed = start.UTC(), time.Since(start)
	return r, nil
}

// learnLayout asks node for one ID of a snowflake target and for the
// layout it decodes it with, and tells the checker.
func learnLayout(ctx context.Context, c *Checker, target, node int, cl client.Client, key string) {
	for ctx.Err() == nil {
		sent := time.Now()
		id, err := cl.Next(ctx, key)
		if err == nil {
			var ex client.Explanation
			if ex, err = cl.Explain(ctx, id); err == nil {
				var l snowflake.Layout
				if l, err = snowflake.ParseLayout(ex.Layout); err == nil {
					c.SetLayout(target, node, l)
					c.IDs(target, node, -1, []int64{id}, sent, time.Now())
					return
				}
			}
		}
		if ctx.Err() != nil {
			return
		}
		c.Failed(target, errorCode(err))
		pause(ctx)
	}
}

// driver is one client of one node asking for one target.
type driver struct {
	c                    *Checker
	target, node, client int
	t                    Target
	cl                   client.Client
	batch                int
}

// once makes one request and returns how many values it got.
func (d *driver) once(ctx context.Context) int {
	sent := time.Now()
	var n int
	var err error
	if d.t.Kind == Serial {
		var vals []string
		if vals, err = d.cl.NextSerial(ctx, d.t.Name, d.batch, d.t.Params); err == nil {
			d.c.Serials(d.target, d.node, d.client, vals)
			n = len(vals)
		}
	} else {
		var ids []int64
		if d.batch == 1 {
			var id int64
			id, err = d.cl.Next(ctx, d.t.Name)
			ids = []int64{id}
		} else {
			ids, err = d.cl.NextN(ctx, d.t.Name, d.batch)
		}
		if err == nil {
			d.c.IDs(d.target, d.node, d.client, ids, sent, time.Now())
			n = len(ids)
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			return 0 // the run ended mid-request
		}
		d.c.Failed(d.target, errorCode(err))
		pause(ctx)
	}
	return n
}

// pause waits a little after a failed request, so that a node that is
// down is not spun on.
func pause(ctx context.Context) {
	t := time.NewTimer(20 * time.Millisecond)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// errorCode names an error for the report: idforge's code when a node
// answered with one, the HTTP status when something else answered, and
// "transport" when nothing did.
func errorCode(err error) string {
	var e *client.Error
	switch {
	case errors.As(err, &e) && e.Code != "":
		return string(e.Code)
	case e != nil && e.HTTPStatus != 0:
		return fmt.Sprintf("http_%d", e.HTTPStatus)
	case e != nil:
		return "grpc_" + e.GRPCCode.String()
	case errors.Is(err, context.DeadlineExceeded):
		return string(idforge.CodeTimeout)
	}
	return "transport"
}
