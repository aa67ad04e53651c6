// Package doctor checks what in a node's configuration, its store and
// the running nodes will hurt later: a listener exposed without tokens
// or TLS, a data directory others can write, a layout that runs out, too
// few worker IDs, clocks apart, a missing schema, segment steps too small
// for the rate, a definition changed since its first use. It changes
// nothing, and returns findings; `idforge doctor` prints them.
package doctor

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/auth"
	"github.com/idforge/idforge/internal/dsn"
	"github.com/idforge/idforge/internal/httpwire"
	"github.com/idforge/idforge/issuer"
	"github.com/idforge/idforge/node"
	"github.com/idforge/idforge/sequence"
	"github.com/idforge/idforge/snowflake"
	"github.com/idforge/idforge/store"
)

// Status is how a check came out.
type Status string

// The statuses of a finding.
const (
	OK   Status = "ok"
	Warn Status = "warn"
	Fail Status = "fail"
	// Skip: the check could not be made.
	Skip Status = "skip"
)

// A Finding is one check's outcome: what was found and, unless it is OK,
// the fix.
type Finding struct {
	Status  Status `json:"status"`
	Check   string `json:"check"`
	Message string `json:"message"`
	Fix     string `json:"fix,omitempty"`
}

// Config is what the checks look at.
type Config struct {
	// Node is the node the configuration describes, as node.Open takes
	// it: its data directory, store (opened with Node.OpenStore), layout,
	// worker source, segment budget, keys, sources and plugins.
	Node node.Settings
	// HTTP and GRPC are the listen addresses ("" for none); Tokens says
	// that API tokens are configured, TLS that a certificate is.
	HTTP, GRPC  string
	Tokens, TLS bool
	// Nodes are running nodes' base URLs, asked with Token for their
	// rates, worker IDs and clocks.
	Nodes []string
	Token string
	// ClusterSize is how many nodes the cluster will run; 0 means
	// len(Nodes).
	ClusterSize int
}

// Thresholds of the checks.
const (
	// layoutWarnBefore: a layout that runs out within this is a warning
	// (deploy/prometheus alerts on the same year).
	layoutWarnBefore = 365 * 24 * time.Hour
	// defaultOutageBudget is the store outage a key's buffer should
	// survive when the segment settings set no budget; a buffer that
	// lasts less than minOutage is a failure.
	defaultOutageBudget = time.Minute
	minOutage           = 5 * time.Second
	// clockWarn and clockFail bound the clock offset to another node.
	clockWarn = 100 * time.Millisecond
	clockFail = time.Second
)

// runningNode is what a running node said about itself (GET /v1/keys),
// between sent and received.
type runningNode struct {
	url            string
	err            error
	sent, received time.Time
	httpwire.Keys
}

type doctor struct {
	Config
	layout   snowflake.Layout
	nodes    []runningNode
	now      time.Time
	findings []Finding
}

func (d *doctor) add(status Status, check, fix, format string, args ...any) {
	d.findings = append(d.findings, Finding{Status: status, Check: check, Message: fmt.Sprintf(format, args...), Fix: fix})
}

// Run makes every check and returns the findings, in a fixed order.
func Run(ctx context.Context, c Config) []Finding {
	d := &doctor{Config: c, now: time.Now()}
	for _, u := range c.Nodes {
		n := runningNode{url: u, sent: time.Now()}
		n.Keys, n.err = httpwire.AllKeys(ctx, u, c.Token)
		n.received = time.Now()
		d.nodes = append(d.nodes, n)
	}
	d.ClusterSize = cmp.Or(d.ClusterSize, len(d.nodes))
	d.checkExposure()
	d.checkDataDir()
	var err error
	if d.layout, err = snowflake.ParseLayout(cmp.Or(c.Node.Layout, "twitter")); err != nil {
		d.add(Fail, "layout", "fix the layout spec", "%v", err)
	} else {
		d.checkLayout()
		d.checkWorkers()
	}
	d.checkClocks()
	d.checkStore(ctx)
	return d.findings
}

// checkExposure: a listener beyond loopback needs tokens (serve refuses
// to start without), and tokens need TLS there.
func (d *doctor) checkExposure() {
	for _, l := range []struct{ setting, addr string }{{"http", d.HTTP}, {"grpc", d.GRPC}} {
		if l.addr == "" {
			continue
		}
		err := auth.CheckExposure(l.addr, d.Tokens)
		switch {
		case errors.Is(err, auth.ErrExposed):
			d.add(Fail, "exposure", "configure a token ([auth] tokens in the config file, or IDFORGE_TOKEN), or listen on 127.0.0.1",
				"%s listens on %s, beyond loopback, with no token: serve refuses to start like this", l.setting, l.addr)
		case err != nil:
			d.add(Fail, "exposure", "give host:port, e.g. 127.0.0.1:8080", "%s address %q: %v", l.setting, l.addr, err)
		case auth.CheckExposure(l.addr, false) == nil:
			d.add(OK, "exposure", "", "%s listens on %s (loopback only)", l.setting, l.addr)
		case !d.TLS:
			d.add(Warn, "exposure", "set tls.cert and tls.key (or --tls-cert, --tls-key), or terminate TLS in front of the node",
				"%s listens on %s with tokens but without TLS: tokens and IDs cross the network in clear text", l.setting, l.addr)
		default:
			d.add(OK, "exposure", "", "%s listens on %s with tokens and TLS", l.setting, l.addr)
		}
	}
}

// checkDataDir: the data directory holds the node's lock, worker ID and
// time fence (and the default SQLite store): it must be a directory this
// user can write and nobody else can.
func (d *doctor) checkDataDir() {
	dir := d.Node.DataDir
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		parent := filepath.Dir(filepath.Clean(dir))
		if !writable(parent) {
			d.add(Fail, "data-dir", fmt.Sprintf("create it: mkdir -m 700 %s (as the user idforge runs as)", dir),
				"%s does not exist and %s is not writable, so serve cannot create it", dir, parent)
			return
		}
		d.add(Warn, "data-dir", fmt.Sprintf("nothing to do if this is a new node; otherwise point --data at the node's directory (mkdir -m 700 %s)", dir),
			"%s does not exist yet: the first start creates it", dir)
		return
	case err != nil:
		d.add(Fail, "data-dir", "check the path and its parents' permissions", "%s: %v", dir, err)
		return
	case !st.IsDir():
		d.add(Fail, "data-dir", "point --data at a directory", "%s is not a directory", dir)
		return
	}
	mode := st.Mode().Perm()
	switch {
	case !writable(dir):
		d.add(Fail, "data-dir", fmt.Sprintf("chown the directory to the user idforge runs as, then chmod 700 %s", dir),
			"%s (%s) is not writable by this user: the node cannot keep its lock, worker ID or time fence", dir, mode)
	case mode&0o002 != 0:
		d.add(Fail, "data-dir", "chmod 700 "+dir,
			"%s (%s) is writable by every user: anyone can replace the worker ID or the time fence, and IDs can repeat", dir, mode)
	case mode&0o027 != 0:
		// The node creates it 0750: its group may read, nobody else.
		d.add(Warn, "data-dir", "chmod 750 "+dir, "%s (%s) is open to more users than idforge's own group", dir, mode)
	default:
		d.add(OK, "data-dir", "", "%s (%s)", dir, mode)
	}
}

// checkLayout: when the snowflake layout's time bits run out.
func (d *doctor) checkLayout() {
	l := d.layout
	exp := l.Expires()
	left := exp.Sub(d.now)
	fix := "a layout cannot change under keys that issued with it: plan a move to a layout with a later epoch or more time bits (idforge layouts lists them) before then"
	switch {
	case left <= 0:
		d.add(Fail, "layout", fix, "layout %s ran out of time bits on %s: snowflake keys refuse with layout_expired", layoutName(l), exp.Format("2006-01-02"))
	case left < layoutWarnBefore:
		d.add(Warn, "layout", fix, "layout %s runs out of time bits on %s, in %d days", layoutName(l), exp.Format("2006-01-02"), int(left.Hours()/24))
	default:
		d.add(OK, "layout", "", "layout %s runs out of time bits on %s (%.0f years left)", layoutName(l), exp.Format("2006-01-02"), left.Hours()/24/365.25)
	}
	for _, n := range d.nodes {
		if n.err != nil || n.Snowflake == nil {
			continue
		}
		if nl, err := snowflake.ParseLayout(n.Snowflake.Layout); err == nil && !nl.Equal(l) {
			d.add(Fail, "layout", "give every node the same layout",
				"%s runs layout %s, this configuration %s: IDs of different layouts can collide", n.url, nl, l)
		}
	}
}

func layoutName(l snowflake.Layout) string {
	if l.Name != "" && l.Name != "custom" {
		return l.Name
	}
	return l.String()
}

// checkWorkers: worker IDs left for the cluster, and none shared.
func (d *doctor) checkWorkers() {
	l := d.layout
	perDC := l.MaxWorker() + 1
	capacity := perDC * (l.MaxDatacenter() + 1)
	w := d.Node.Worker
	if n, err := strconv.ParseInt(strings.TrimPrefix(w, "static://"), 10, 64); err == nil {
		if n < 0 || n > l.MaxWorker() {
			d.add(Fail, "workers", fmt.Sprintf("choose a worker ID in 0..%d, or a layout with more worker bits", l.MaxWorker()),
				"worker ID %d does not fit layout %s (0..%d)", n, layoutName(l), l.MaxWorker())
		}
	}
	if dc := d.Node.Datacenter; dc < 0 || dc > l.MaxDatacenter() {
		d.add(Fail, "workers", fmt.Sprintf("choose a datacenter ID in 0..%d", l.MaxDatacenter()),
			"datacenter ID %d does not fit layout %s (0..%d)", dc, layoutName(l), l.MaxDatacenter())
	}
	owners := map[[2]int64]string{}
	for _, n := range d.nodes {
		if n.err != nil || n.Snowflake == nil {
			continue
		}
		k := [2]int64{n.Snowflake.Datacenter, n.Snowflake.Worker}
		if other, ok := owners[k]; ok {
			d.add(Fail, "workers", "give each node its own worker ID (a coordinator such as etcd:// or the SQL store hands them out)",
				"%s and %s both issue as datacenter %d worker %d: their snowflake IDs collide", other, n.url, k[0], k[1])
		}
		owners[k] = n.url
	}
	source := "the file in the data directory"
	if w != "" {
		source = dsn.RedactedString(w)
	}
	switch size := int64(d.ClusterSize); {
	case size == 0:
		d.add(Warn, "workers", "pass --cluster-size N or every node with --node URL",
			"layout %s has %d worker IDs (%d per datacenter); cluster size unknown", layoutName(l), capacity, perDC)
	case size > capacity:
		d.add(Fail, "workers", "choose a layout with more worker bits before adding nodes",
			"%d nodes but layout %s has only %d worker IDs", size, layoutName(l), capacity)
	case size*2 > capacity:
		d.add(Warn, "workers", "leave room for rolling restarts and growth (a leased worker ID is held until its lease ends): a layout with more worker bits",
			"%d nodes use %d of the %d worker IDs of layout %s; %d left", size, size, capacity, layoutName(l), capacity-size)
	default:
		d.add(OK, "workers", "", "%d nodes, %d of %d worker IDs left (layout %s, worker source %s)", size, capacity-size, capacity, layoutName(l), source)
	}
}

// checkClocks: each node's clock against this machine's.
func (d *doctor) checkClocks() {
	if len(d.nodes) == 0 {
		d.add(Skip, "clock", "", "no --node given: clock offsets not measured")
		return
	}
	for _, n := range d.nodes {
		if n.err != nil {
			d.add(Fail, "node", "check the URL, the token and that the node runs", "%s: %v", n.url, n.err)
			continue
		}
		if n.Snowflake == nil {
			d.add(Skip, "clock", "", "%s: no clock reading", n.url)
			continue
		}
		rtt := n.received.Sub(n.sent)
		offset := n.Snowflake.Now.Sub(n.sent.Add(rtt / 2))
		abs := max(offset, -offset)
		ahead := "ahead of"
		if offset < 0 {
			ahead = "behind"
		}
		msg := fmt.Sprintf("%s is %s %s this machine (±%s)", n.url, abs.Round(time.Millisecond), ahead, (rtt / 2).Round(time.Millisecond))
		fix := "run NTP (chrony) on every node and this machine"
		switch {
		case abs-rtt/2 > clockFail:
			d.add(Fail, "clock", fix, "%s: snowflake IDs of different nodes sort out of time order and serial dates disagree", msg)
		case abs-rtt/2 > clockWarn:
			d.add(Warn, "clock", fix, "%s", msg)
		default:
			d.add(OK, "clock", "", "%s", msg)
		}
	}
}

// checkStore: the store opens with idforge's tables, each segment key's
// step against the rate it is used at, and the recorded fingerprints
// against the configuration.
func (d *doctor) checkStore(ctx context.Context) {
	url := cmp.Or(d.Node.Store, node.DefaultStoreURL(d.Node.DataDir))
	name := dsn.RedactedString(url)
	if d.Node.Store == "" {
		// The default SQLite file: opening it would create it.
		if _, err := os.Stat(filepath.Join(d.Node.DataDir, "idforge.db")); err != nil {
			d.add(Warn, "store", "nothing to do for a new node; otherwise point --data or --store at the node's store",
				"%s does not exist yet: the first start creates it", name)
			d.add(Skip, "fingerprints", "", "no store yet: nothing recorded")
			return
		}
	}
	open := d.Node.OpenStore
	if open == nil {
		open = store.Open
	}
	st, err := open(ctx, url, store.Options{DataDir: d.Node.DataDir, Logger: d.Node.Logger})
	if err != nil {
		d.add(Fail, "store", "create the database and run `idforge migrate`, or fix --store", "%v", err)
		return
	}
	defer st.Close()
	if err := st.Ping(ctx); err != nil {
		d.add(Fail, "store", "check the database server and the URL", "%s: %v", name, err)
		return
	}
	d.checkDatabases(st)
	keys, err := st.Keys(ctx)
	if err != nil {
		d.add(Fail, "schema", "run `idforge migrate`", "%s: reading keys: %v", name, err)
		return
	}
	schema := "keys readable"
	if ss, ok := st.(idforge.SerialStore); ok {
		if _, err := ss.Serials(ctx); err != nil {
			d.add(Fail, "schema", "run `idforge migrate`", "%s: reading serial definitions: %v", name, err)
			return
		}
		schema += ", serial definitions readable"
	}
	if _, ok := st.(idforge.Migrator); ok {
		d.add(OK, "schema", "", "%s: every table idforge uses is there (%s); the schema has no version number: `idforge migrate` records the tables it creates", name, schema)
	} else {
		d.add(OK, "schema", "", "%s keeps no schema (%s)", name, schema)
	}
	// Which keys are retired, as every node reads it (issuer.Issuer.Keys).
	iss := issuer.New(st, nil, issuer.Settings{Logger: d.Node.Logger})
	states, _ := iss.Keys(ctx)
	iss.Close()
	retired := map[string]bool{}
	for _, k := range states {
		retired[k.Name] = k.Retired
	}
	for _, k := range keys {
		switch {
		case k.Strategy != idforge.StrategySegment:
		case retired[k.Name]:
			d.add(OK, "step "+k.Name, "", "retired: it issues nothing more, so its step needs no check")
		default:
			d.checkStep(k)
		}
	}
	d.checkFingerprints(ctx, st, name)
}

// checkDatabases: each database of a store of several (store/shards)
// answers; one down leaves the others issuing.
func (d *doctor) checkDatabases(st idforge.Store) {
	ss, ok := sequence.StatusOf(st)
	if !ok {
		return
	}
	for _, m := range ss.Members {
		if m.Admitted() {
			d.add(OK, "database "+m.Name, "", "answers")
		} else {
			d.add(Warn, "database "+m.Name, "start it or fix its URL: the other databases issue meanwhile", "does not answer: %s", m.LastError)
		}
	}
}

// checkStep: how long a store outage a segment key's buffers survive at
// the rate the nodes measure.
func (d *doctor) checkStep(k idforge.Key) {
	budget := cmp.Or(d.Node.Segment.SurviveOutage, defaultOutageBudget)
	check := "step " + k.Name
	fix := fmt.Sprintf("raise the key's step (UPDATE leaf_alloc SET step = … WHERE biz_tag = '%s'), or set segment.survive_outage = \"%s\" and let the nodes size segments themselves", k.Name, budget)
	asked := 0
	worst, worstRate, worstNode, worstStep := -1.0, 0.0, "", k.Step
	for _, n := range d.nodes {
		if n.err != nil {
			continue
		}
		asked++
		for _, nk := range n.Keys.Keys {
			if nk.Key != k.Name || nk.Segment == nil || nk.Segment.Rate <= 0 {
				continue
			}
			if worst < 0 || nk.Segment.BufferedSeconds < worst {
				worst, worstRate, worstNode, worstStep = nk.Segment.BufferedSeconds, nk.Segment.Rate, n.url, nk.Segment.Step
			}
		}
	}
	switch {
	case asked == 0:
		d.add(Warn, check, "pass --node URL of each running node: they measure the rate",
			"step %d; rate unknown: the store records no rate, and no node was asked", k.Step)
	case worst < 0:
		d.add(OK, check, "", "step %d; idle on the nodes asked (no rate measured)", k.Step)
	default:
		secs := time.Duration(worst * float64(time.Second)).Round(time.Second)
		msg := fmt.Sprintf("step %d: at %.0f IDs/s on %s its buffer survives a store outage of %s (budget %s)", worstStep, worstRate, worstNode, secs, budget)
		switch {
		case secs < minOutage:
			d.add(Fail, check, fix, "%s", msg)
		case secs < budget:
			d.add(Warn, check, fix, "%s", msg)
		default:
			d.add(OK, check, "", "%s", msg)
		}
	}
}

// checkFingerprints: every fingerprint recorded in the store against the
// configuration, by the rules a node refuses to start by
// (node.CheckFingerprints).
func (d *doctor) checkFingerprints(ctx context.Context, st idforge.Store, name string) {
	if _, ok := st.(idforge.DefinitionStore); !ok {
		d.add(Skip, "fingerprints", "", "%s keeps no definitions: changes that could repeat values are not guarded", name)
		return
	}
	checks, err := node.CheckFingerprints(ctx, st, d.Node)
	switch {
	case errors.Is(err, idforge.ErrInvalidArgument):
		d.add(Warn, "fingerprints", "run `idforge migrate`", "%s: %v", name, err)
		return
	case err != nil:
		d.add(Fail, "fingerprints", "check the database server and the configuration", "%s: %v", name, err)
		return
	case len(checks) == 0:
		d.add(OK, "fingerprints", "", "none recorded yet: the first start records the layout, sources and key formats it uses")
	}
	for _, c := range checks {
		switch {
		case c.Unused:
			d.add(OK, "fingerprint "+c.Name, "", "recorded as %s; not in this configuration (defined through the API, or no longer used)", c.Recorded)
		case c.Err != nil:
			d.add(Fail, "fingerprint "+c.Name, "restore the definition as recorded, or follow the safe migration above: serve refuses to start like this", "%v", c.Err)
		default:
			d.add(OK, "fingerprint "+c.Name, "", "the configuration matches: %s", c.Recorded)
		}
	}
}
