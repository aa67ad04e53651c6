package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/auth"
	"github.com/idforge/idforge/internal/dsn"
	"github.com/idforge/idforge/snowflake"
	"github.com/idforge/idforge/store"
)

// A finding is one line of `idforge doctor`: a check's status (ok, warn,
// fail, or skip when it could not be made), what was found and the fix.
type finding struct {
	Status  string `json:"status"`
	Check   string `json:"check"`
	Message string `json:"message"`
	Fix     string `json:"fix,omitempty"`
}

// The statuses of a finding.
const (
	statusOK   = "ok"
	statusWarn = "warn"
	statusFail = "fail"
	statusSkip = "skip"
)

// Thresholds of the doctor's checks.
const (
	// layoutWarnBefore: a layout that runs out within this is a warning
	// (deploy/prometheus alerts on the same year).
	layoutWarnBefore = 365 * 24 * time.Hour
	// defaultOutageBudget is the store outage a key's buffer should
	// survive when segment.survive_outage sets no budget; a buffer that
	// lasts less than minOutage is a failure.
	defaultOutageBudget = time.Minute
	minOutage           = 5 * time.Second
	// clockWarn and clockFail bound the clock offset to another node.
	clockWarn = 100 * time.Millisecond
	clockFail = time.Second
)

// nodeState is what a running node says about itself (GET /v1/keys).
type nodeState struct {
	url      string
	err      error
	sent     time.Time
	received time.Time
	date     string
	Keys     []struct {
		Key      string `json:"key"`
		Strategy string `json:"strategy"`
		Step     int64  `json:"step"`
		Segment  *struct {
			Rate            float64 `json:"rate"`
			BufferedSeconds float64 `json:"buffered_seconds"`
			Step            int64   `json:"step"`
		} `json:"segment"`
	} `json:"keys"`
	Snowflake *struct {
		Layout     string    `json:"layout"`
		Worker     int64     `json:"worker"`
		Datacenter int64     `json:"datacenter"`
		Now        time.Time `json:"now"`
	} `json:"snowflake"`
	// Next is the after of the next page of keys, "" on the last.
	Next string `json:"next"`
}

// doctor collects findings.
type doctor struct {
	cfg         Config
	nodes       []*nodeState
	clusterSize int
	now         time.Time
	findings    []finding
}

func (d *doctor) add(status, check, fix, format string, args ...any) {
	d.findings = append(d.findings, finding{Status: status, Check: check, Message: fmt.Sprintf(format, args...), Fix: fix})
}

// cmdDoctor reads the configuration (the flags and file of serve), the
// store and, with --node, running nodes, and lists what will hurt later.
// It changes nothing. Exit status 1 when a check fails.
func cmdDoctor(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	fs := newFlagSet("doctor", stderr)
	nf := newNodeFlags(fs, true)
	var nodeURLs repeatedFlag
	fs.Var(&nodeURLs, "node", "a running node to ask for rates, worker IDs and its clock (repeatable: every node of the cluster)")
	token := fs.String("token", "", "bearer token for --node (default: IDFORGE_TOKEN, else IDFORGE_ISSUE_TOKEN)")
	size := fs.Int("cluster-size", 0, "how many nodes the cluster will run (default: the number of --node)")
	asJSON := fs.Bool("json", false, "print the findings as JSON")
	if _, err := parseArgs(fs, args, 0, "no arguments, only flags"); err != nil {
		return err
	}
	if *size < 0 {
		return usageErr("--cluster-size %d: want a positive number", *size)
	}
	cfg, err := nf.load(getenv)
	if err != nil {
		return err
	}
	d := &doctor{cfg: cfg, clusterSize: *size, now: time.Now()}
	tok := tokenFrom(*token, getenv)
	for _, u := range nodeURLs {
		d.nodes = append(d.nodes, askNode(ctx, nodeURL(u, false), tok))
	}
	if d.clusterSize == 0 {
		d.clusterSize = len(d.nodes)
	}
	d.checkExposure()
	d.checkDataDir()
	d.checkLayout()
	d.checkWorkers()
	d.checkClocks()
	d.checkStore(ctx, stderr)
	d.add(statusSkip, "fingerprints", "",
		"definitions whose fingerprint changed: not recorded: this idforge keeps no fingerprints of key and serial definitions, so there is nothing to compare")

	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(map[string]any{"findings": d.findings}); err != nil {
			return err
		}
	} else {
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		for _, f := range d.findings {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", f.Status, f.Check, f.Message)
			if f.Fix != "" {
				fmt.Fprintf(tw, "\t\tfix: %s\n", f.Fix)
			}
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	fails := 0
	for _, f := range d.findings {
		if f.Status == statusFail {
			fails++
		}
	}
	if fails > 0 {
		return fmt.Errorf("doctor: %d of the checks failed", fails)
	}
	return nil
}

// askNode reads a node's keys, snowflake generator and clock.
func askNode(ctx context.Context, base, token string) *nodeState {
	n := &nodeState{url: base}
	var h http.Header
	h, n.sent, n.received, n.err = getJSON(ctx, base, "/v1/keys", token, n)
	if h != nil {
		n.date = h.Get("Date")
	}
	// The clock is judged by the first page; the keys come from every one.
	for n.err == nil && n.Next != "" {
		var more nodeState
		_, _, _, n.err = getJSON(ctx, base, "/v1/keys?after="+url.QueryEscape(n.Next), token, &more)
		n.Keys, n.Next = append(n.Keys, more.Keys...), more.Next
	}
	return n
}

// checkExposure: a listener beyond loopback needs tokens (serve refuses
// to start without), and tokens need TLS there.
func (d *doctor) checkExposure() {
	tokens := auth.FromEnv(d.cfg.Auth).Configured()
	for _, l := range []struct{ setting, addr string }{{"http", d.cfg.HTTP}, {"grpc", d.cfg.GRPC}} {
		if l.addr == "" {
			continue
		}
		err := auth.CheckExposure(l.addr, tokens)
		switch {
		case errors.Is(err, auth.ErrExposed):
			d.add(statusFail, "exposure", "configure a token ([auth] tokens in the config file, or IDFORGE_TOKEN), or listen on 127.0.0.1",
				"%s listens on %s, beyond loopback, with no token: serve refuses to start like this", l.setting, l.addr)
		case err != nil:
			d.add(statusFail, "exposure", "give host:port, e.g. 127.0.0.1:8080", "%s address %q: %v", l.setting, l.addr, err)
		case auth.CheckExposure(l.addr, false) == nil:
			d.add(statusOK, "exposure", "", "%s listens on %s (loopback only)", l.setting, l.addr)
		case d.cfg.TLS.Cert == "":
			d.add(statusWarn, "exposure", "set tls.cert and tls.key (or --tls-cert, --tls-key), or terminate TLS in front of the node",
				"%s listens on %s with tokens but without TLS: tokens and IDs cross the network in clear text", l.setting, l.addr)
		default:
			d.add(statusOK, "exposure", "", "%s listens on %s with tokens and TLS", l.setting, l.addr)
		}
	}
}

// checkDataDir: the data directory holds the node's lock, worker ID and
// time fence (and the default SQLite store): it must be a directory this
// user can write and nobody else can.
func (d *doctor) checkDataDir() {
	dir := d.cfg.Data
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		parent := filepath.Dir(filepath.Clean(dir))
		if syscall.Access(parent, 2 /* W_OK */) != nil {
			d.add(statusFail, "data-dir", fmt.Sprintf("create it: mkdir -m 700 %s (as the user idforge runs as)", dir),
				"%s does not exist and %s is not writable, so serve cannot create it", dir, parent)
			return
		}
		d.add(statusWarn, "data-dir", fmt.Sprintf("nothing to do if this is a new node; otherwise point --data at the node's directory (mkdir -m 700 %s)", dir),
			"%s does not exist yet: the first start creates it", dir)
		return
	case err != nil:
		d.add(statusFail, "data-dir", "check the path and its parents' permissions", "%s: %v", dir, err)
		return
	case !st.IsDir():
		d.add(statusFail, "data-dir", "point --data at a directory", "%s is not a directory", dir)
		return
	}
	mode := st.Mode().Perm()
	switch {
	case syscall.Access(dir, 2 /* W_OK */) != nil:
		d.add(statusFail, "data-dir", fmt.Sprintf("chown the directory to the user idforge runs as, then chmod 700 %s", dir),
			"%s (%s) is not writable by this user: the node cannot keep its lock, worker ID or time fence", dir, mode)
	case mode&0o002 != 0:
		d.add(statusFail, "data-dir", "chmod 700 "+dir,
			"%s (%s) is writable by every user: anyone can replace the worker ID or the time fence, and IDs can repeat", dir, mode)
	case mode&0o027 != 0:
		// The node creates it 0750: its group may read, nobody else.
		d.add(statusWarn, "data-dir", "chmod 750 "+dir, "%s (%s) is open to more users than idforge's own group", dir, mode)
	default:
		d.add(statusOK, "data-dir", "", "%s (%s)", dir, mode)
	}
}

// checkLayout: when the snowflake layout's time bits run out.
func (d *doctor) checkLayout() {
	l, err := snowflake.ParseLayout(d.cfg.Snowflake.Layout)
	if err != nil { // load checked it; kept for safety
		d.add(statusFail, "layout", "fix the layout spec", "%v", err)
		return
	}
	exp := l.Expires()
	left := exp.Sub(d.now)
	fix := "a layout cannot change under keys that issued with it: plan a move to a layout with a later epoch or more time bits (idforge layouts lists them) before then"
	switch {
	case left <= 0:
		d.add(statusFail, "layout", fix, "layout %s ran out of time bits on %s: snowflake keys refuse with layout_expired", layoutName(l), exp.Format("2006-01-02"))
	case left < layoutWarnBefore:
		d.add(statusWarn, "layout", fix, "layout %s runs out of time bits on %s, in %d days", layoutName(l), exp.Format("2006-01-02"), int(left.Hours()/24))
	default:
		d.add(statusOK, "layout", "", "layout %s runs out of time bits on %s (%.0f years left)", layoutName(l), exp.Format("2006-01-02"), left.Hours()/24/365.25)
	}
	for _, n := range d.nodes {
		if n.err != nil || n.Snowflake == nil {
			continue
		}
		if nl, err := snowflake.ParseLayout(n.Snowflake.Layout); err == nil && !nl.Equal(l) {
			d.add(statusFail, "layout", "give every node the same layout",
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
	l, err := snowflake.ParseLayout(d.cfg.Snowflake.Layout)
	if err != nil {
		return
	}
	perDC := l.MaxWorker() + 1
	capacity := perDC * (l.MaxDatacenter() + 1)
	w := d.cfg.Snowflake.Worker
	if n, err := strconv.ParseInt(strings.TrimPrefix(w, "static://"), 10, 64); err == nil {
		if n < 0 || n > l.MaxWorker() {
			d.add(statusFail, "workers", fmt.Sprintf("choose a worker ID in 0..%d, or a layout with more worker bits", l.MaxWorker()),
				"worker ID %d does not fit layout %s (0..%d)", n, layoutName(l), l.MaxWorker())
		}
	}
	if dc := d.cfg.Snowflake.Datacenter; dc < 0 || dc > l.MaxDatacenter() {
		d.add(statusFail, "workers", fmt.Sprintf("choose a datacenter ID in 0..%d", l.MaxDatacenter()),
			"datacenter ID %d does not fit layout %s (0..%d)", dc, layoutName(l), l.MaxDatacenter())
	}
	owners := map[[2]int64]string{}
	for _, n := range d.nodes {
		if n.err != nil || n.Snowflake == nil {
			continue
		}
		k := [2]int64{n.Snowflake.Datacenter, n.Snowflake.Worker}
		if other, ok := owners[k]; ok {
			d.add(statusFail, "workers", "give each node its own worker ID (a coordinator such as etcd:// or the SQL store hands them out)",
				"%s and %s both issue as datacenter %d worker %d: their snowflake IDs collide", other, n.url, k[0], k[1])
		}
		owners[k] = n.url
	}
	switch size := int64(d.clusterSize); {
	case size == 0:
		d.add(statusWarn, "workers", "pass --cluster-size N or every node with --node URL",
			"layout %s has %d worker IDs (%d per datacenter); cluster size unknown", layoutName(l), capacity, perDC)
	case size > capacity:
		d.add(statusFail, "workers", "choose a layout with more worker bits before adding nodes",
			"%d nodes but layout %s has only %d worker IDs", size, layoutName(l), capacity)
	case size*2 > capacity:
		d.add(statusWarn, "workers", "leave room for rolling restarts and growth (a leased worker ID is held until its lease ends): a layout with more worker bits",
			"%d nodes use %d of the %d worker IDs of layout %s; %d left", size, size, capacity, layoutName(l), capacity-size)
	default:
		d.add(statusOK, "workers", "", "%d nodes, %d of %d worker IDs left (layout %s, worker source %s)", size, capacity-size, capacity, layoutName(l), workerSource(w))
	}
}

func workerSource(w string) string {
	if w == "" {
		return "the file in the data directory"
	}
	return dsn.RedactedString(w)
}

// checkClocks: each node's clock against this machine's.
func (d *doctor) checkClocks() {
	if len(d.nodes) == 0 {
		d.add(statusSkip, "clock", "", "no --node given: clock offsets not measured")
		return
	}
	for _, n := range d.nodes {
		if n.err != nil {
			d.add(statusFail, "node", "check the URL, the token and that the node runs", "%s: %v", n.url, n.err)
			continue
		}
		rtt := n.received.Sub(n.sent)
		mid := n.sent.Add(rtt / 2)
		var offset time.Duration
		switch {
		case n.Snowflake != nil:
			offset = n.Snowflake.Now.Sub(mid)
		case n.date != "":
			t, err := http.ParseTime(n.date)
			if err != nil {
				d.add(statusSkip, "clock", "", "%s: no clock reading (Date %q)", n.url, n.date)
				continue
			}
			// Date has whole seconds: it is late by up to one.
			offset = t.Add(500 * time.Millisecond).Sub(mid)
			rtt += time.Second
		default:
			d.add(statusSkip, "clock", "", "%s: no clock reading", n.url)
			continue
		}
		abs := max(offset, -offset)
		msg := fmt.Sprintf("%s is %s %s this machine (±%s)", n.url, abs.Round(time.Millisecond), aheadBehind(offset), (rtt / 2).Round(time.Millisecond))
		fix := "run NTP (chrony) on every node and this machine"
		switch {
		case abs-rtt/2 > clockFail:
			d.add(statusFail, "clock", fix, "%s: snowflake IDs of different nodes sort out of time order and serial dates disagree", msg)
		case abs-rtt/2 > clockWarn:
			d.add(statusWarn, "clock", fix, "%s", msg)
		default:
			d.add(statusOK, "clock", "", "%s", msg)
		}
	}
}

func aheadBehind(d time.Duration) string {
	if d < 0 {
		return "behind"
	}
	return "ahead of"
}

// checkStore: the store opens with idforge's tables, and each segment
// key's step against the rate it is used at.
func (d *doctor) checkStore(ctx context.Context, stderr io.Writer) {
	url := d.cfg.storeURL(d.cfg.Data)
	name := dsn.RedactedString(url)
	if d.cfg.Store == "" {
		// The default SQLite file: opening it would create it.
		if _, err := os.Stat(filepath.Join(d.cfg.Data, "idforge.db")); err != nil {
			d.add(statusWarn, "store", "nothing to do for a new node; otherwise point --data or --store at the node's store",
				"%s does not exist yet: the first start creates it", name)
			return
		}
	}
	st, err := openStore(ctx, url, store.Options{DataDir: d.cfg.Data, Logger: newLogger(stderr, "error")})
	if err != nil {
		d.add(statusFail, "store", "create the database and run `idforge migrate`, or fix --store", "%v", err)
		return
	}
	defer st.Close()
	if err := st.Ping(ctx); err != nil {
		d.add(statusFail, "store", "check the database server and the URL", "%s: %v", name, err)
		return
	}
	keys, err := st.Keys(ctx)
	if err != nil {
		d.add(statusFail, "schema", "run `idforge migrate`", "%s: reading keys: %v", name, err)
		return
	}
	schema := "keys readable"
	if ss, ok := st.(idforge.SerialStore); ok {
		if _, err := ss.Serials(ctx); err != nil {
			d.add(statusFail, "schema", "run `idforge migrate`", "%s: reading serial definitions: %v", name, err)
			return
		}
		schema += ", serial definitions readable"
	}
	if _, ok := st.(idforge.Migrator); ok {
		d.add(statusOK, "schema", "", "%s: every table idforge uses is there (%s); the schema has no version number: `idforge migrate` records the tables it creates", name, schema)
	} else {
		d.add(statusOK, "schema", "", "%s keeps no schema (%s)", name, schema)
	}
	for _, k := range keys {
		if k.Strategy == idforge.StrategySegment {
			d.checkStep(k)
		}
	}
}

// checkStep: how long a store outage a segment key's buffers survive at
// the rate the nodes measure.
func (d *doctor) checkStep(k idforge.Key) {
	budget := time.Duration(d.cfg.Segment.SurviveOutage)
	if budget <= 0 {
		budget = defaultOutageBudget
	}
	check := "step " + k.Name
	fix := fmt.Sprintf("raise the key's step (UPDATE leaf_alloc SET step = … WHERE biz_tag = '%s'), or set segment.survive_outage = \"%s\" and let the nodes size segments themselves", k.Name, budget)
	asked := 0
	worst, worstRate, worstNode, worstStep := -1.0, 0.0, "", k.Step
	for _, n := range d.nodes {
		if n.err != nil {
			continue
		}
		asked++
		for _, nk := range n.Keys {
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
		d.add(statusWarn, check, "pass --node URL of each running node: they measure the rate",
			"step %d; rate unknown: the store records no rate, and no node was asked", k.Step)
	case worst < 0:
		d.add(statusOK, check, "", "step %d; idle on the nodes asked (no rate measured)", k.Step)
	default:
		secs := time.Duration(worst * float64(time.Second)).Round(time.Second)
		msg := fmt.Sprintf("step %d: at %.0f IDs/s on %s its buffer survives a store outage of %s (budget %s)", worstStep, worstRate, worstNode, secs, budget)
		switch {
		case secs < minOutage:
			d.add(statusFail, check, fix, "%s", msg)
		case secs < budget:
			d.add(statusWarn, check, fix, "%s", msg)
		default:
			d.add(statusOK, check, "", "%s", msg)
		}
	}
}
