package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/httpwire"
	"github.com/idforge/idforge/internal/strictjson"
	"github.com/idforge/idforge/issuer"
	"github.com/idforge/idforge/node"
	"github.com/idforge/idforge/snowflake"
)

// maxNext bounds 'idforge next -n'.
const maxNext = 1_000_000

func cmdNext(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	fs := newFlagSet("next", stderr)
	nf := newNodeFlags(fs, false)
	count := fs.Int("n", 1, "how many IDs")
	pos, err := parseArgs(fs, args, 1, "one KEY")
	if err != nil {
		return err
	}
	if *count < 1 || *count > maxNext {
		return usageErr("-n %d: want 1..%d", *count, maxNext)
	}
	return withNode(ctx, nf, getenv, stderr, func(n *node.Node) error {
		ids, err := n.Issuer().TakeStrings(ctx, pos[0], *count)
		if err != nil {
			return err
		}
		for _, id := range ids {
			fmt.Fprintln(stdout, id)
		}
		return nil
	})
}

// withNode opens the configured node, runs fn on it and closes it.
func withNode(ctx context.Context, nf *nodeFlags, getenv func(string) string, stderr io.Writer, fn func(*node.Node) error) error {
	cfg, err := nf.load(getenv)
	if err != nil {
		return err
	}
	if scheme, _, _ := strings.Cut(cfg.Snowflake.Worker, "://"); scheme == "zk" || scheme == "zookeeper" {
		// ZooKeeper worker IDs are permanent per node identity, and every
		// run of a command is a new identity: each run would use one up.
		return usageErr("a one-shot command cannot take a ZooKeeper worker ID (they are never reused, and each run would use one up): " +
			"ask a server, or pass --worker with a number no server uses")
	}
	return withOpen(func() (*node.Node, error) {
		return openNode(ctx, cfg, newLogger(stderr, cfg.LogLevel), cfg.owner(""), getenv)
	}, fn)
}

// loadLayout loads the configuration of a command that decodes or builds
// IDs without opening a node, and returns its snowflake layout.
func loadLayout(nf *nodeFlags, getenv func(string) string) (snowflake.Layout, error) {
	cfg, err := nf.load(getenv)
	if err != nil {
		return snowflake.Layout{}, err
	}
	layout, err := snowflake.ParseLayout(cfg.Snowflake.Layout)
	return layout, exitErr(err)
}

func cmdExplain(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	fs := newFlagSet("explain", stderr)
	nf := newLayoutFlags(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	source := fs.String("source", "", "decode a number of this date-packed source (the config file's, or the store's) instead of a snowflake ID")
	pos, err := parseArgs(fs, args, 1, "one ID")
	if err != nil {
		return err
	}
	if *source != "" {
		return explainPacked(ctx, nf, getenv, stdout, stderr, *source, pos[0], *asJSON)
	}
	layout, err := loadLayout(nf, getenv)
	if err != nil {
		return err
	}
	id, err := strconv.ParseInt(pos[0], 10, 64)
	if err != nil || id < 0 {
		return usageErr("ID %q is not a non-negative 64-bit decimal number", pos[0])
	}
	p, err := layout.Explain(id)
	if err != nil {
		return exitErr(err)
	}
	if *asJSON {
		enc := strictjson.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{
			"id": strconv.FormatInt(id, 10), "layout": layout.String(), "time": p.Time,
			"unix_ms": p.Time.UnixMilli(), "ticks": p.Ticks, "datacenter": p.Datacenter,
			"worker": p.Worker, "sequence": p.Sequence, "fixed": p.Fixed, "expires": layout.Expires(),
		})
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "id\t%d\n", id)
	fmt.Fprintf(tw, "layout\t%s\n", layout)
	fmt.Fprintf(tw, "time\t%s\n", p.Time.Format(time.RFC3339Nano))
	fmt.Fprintf(tw, "unix_ms\t%d\n", p.Time.UnixMilli())
	fmt.Fprintf(tw, "ticks\t%d\n", p.Ticks)
	if layout.MaxDatacenter() > 0 {
		fmt.Fprintf(tw, "datacenter\t%d\n", p.Datacenter)
	}
	fmt.Fprintf(tw, "worker\t%d\n", p.Worker)
	fmt.Fprintf(tw, "sequence\t%d\n", p.Sequence)
	for _, f := range layout.Fields {
		if f.Kind == snowflake.KindFixed {
			v := p.Fixed[f.Name]
			if m := layout.Meaning(f.Name, v); m != "" {
				fmt.Fprintf(tw, "%s\t%d (%s)\n", f.Name, v, m)
			} else {
				fmt.Fprintf(tw, "%s\t%d\n", f.Name, v)
			}
		}
	}
	fmt.Fprintf(tw, "expires\t%s (the layout's time bits run out)\n", layout.Expires().Format(time.RFC3339))
	return tw.Flush()
}

// explainPacked decodes id, a number of the date-packed source name, into
// the period it was counted in and its count, as the API does: a source
// of the file without opening anything, one of the API through the store.
func explainPacked(ctx context.Context, nf *nodeFlags, getenv func(string) string, stdout, stderr io.Writer, name, arg string, asJSON bool) error {
	id, err := strconv.ParseInt(arg, 10, 64)
	if err != nil {
		return usageErr("number %q is not a 64-bit decimal number", arg)
	}
	cfg, err := nf.load(getenv)
	if err != nil {
		return err
	}
	var u idforge.Unpacked
	if i := slices.IndexFunc(cfg.Sources, func(sc SourceConfig) bool { return sc.Name == name }); i >= 0 {
		spec, _ := cfg.Sources[i].source().MarshalJSON()
		u, err = issuer.ExplainPacked(issuer.Defined{Definition: idforge.Definition{Kind: issuer.KindSource, Name: name, Spec: string(spec)}}, id)
	} else {
		err = withOpen(func() (*catalog, error) { return openCatalog(ctx, cfg, stderr) }, func(c *catalog) (err error) {
			u, err = c.issuer.ExplainPacked(ctx, name, id)
			return err
		})
	}
	if err != nil {
		return exitErr(err)
	}
	if asJSON {
		enc := strictjson.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(httpwire.NewUnpacked(u))
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "id\t%d\n", id)
	fmt.Fprintf(tw, "source\t%s (date-packed)\n", name)
	fmt.Fprintf(tw, "time\t%s (the %s counted in, %s)\n", u.Time.Format(time.RFC3339), u.Period, u.Zone)
	fmt.Fprintf(tw, "count\t%d\n", u.Count)
	fmt.Fprintf(tw, "bits\t%d (at most %d a %s)\n", u.Bits, int64(1)<<u.Bits-1, u.Period)
	return tw.Flush()
}

// cmdMake forges an ID from its fields (Vesta's makeId), for tests,
// migrations and range queries ("every ID issued after 08:00").
func cmdMake(_ context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	fs := newFlagSet("make", stderr)
	nf := newLayoutFlags(fs)
	at := fs.String("time", "", "time: RFC 3339 or unix milliseconds (required)")
	var p snowflake.Parts
	fs.Int64Var(&p.Worker, "worker", 0, "worker ID")
	fs.Int64Var(&p.Datacenter, "datacenter", 0, "datacenter ID")
	fs.Int64Var(&p.Sequence, "sequence", 0, "sequence number")
	if _, err := parseArgs(fs, args, 0, "no arguments, only flags"); err != nil {
		return err
	}
	if *at == "" {
		return usageErr("make needs --time")
	}
	if ms, err := strconv.ParseInt(*at, 10, 64); err == nil {
		p.Time = time.UnixMilli(ms)
	} else if p.Time, err = time.Parse(time.RFC3339Nano, *at); err != nil {
		return usageErr("--time %q: want RFC 3339 or unix milliseconds", *at)
	}
	layout, err := loadLayout(nf, getenv)
	if err != nil {
		return err
	}
	id, err := layout.Make(p)
	if err != nil {
		return exitErr(err)
	}
	fmt.Fprintln(stdout, id)
	return nil
}

func cmdLayouts(_ context.Context, _ []string, stdout, _ io.Writer, _ func(string) string) error {
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PRESET\tIDS/S PER WORKER\tWORKERS\tEXPIRES\tSPEC")
	for _, name := range snowflake.Presets() {
		l, err := snowflake.Preset(name)
		if err != nil {
			return err
		}
		workers := (l.MaxWorker() + 1) * (l.MaxDatacenter() + 1)
		fmt.Fprintf(tw, "%s\t%.0f\t%d\t%s\t%s\n", name, l.CapPerSecond(), workers, l.Expires().Format("2006-01-02"), l)
	}
	return tw.Flush()
}

func cmdKeys(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	if len(args) == 0 {
		return usageErr("keys needs a subcommand: create, list, update, retire or repair")
	}
	switch args[0] {
	case "create":
		return cmdKeysCreate(ctx, args[1:], stdout, stderr, getenv)
	case "list":
		return cmdKeysList(ctx, args[1:], stdout, stderr, getenv)
	case "repair":
		return cmdKeysRepair(ctx, args[1:], stdout, stderr, getenv)
	case "update":
		return cmdKeysUpdate(ctx, args[1:], stdout, stderr, getenv)
	case "retire":
		return cmdKeysRetire(ctx, args[1:], stdout, stderr, getenv)
	}
	return usageErr("unknown keys subcommand %q (want create, list, update, retire or repair)", args[0])
}

func cmdKeysCreate(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	fs := newFlagSet("keys create", stderr)
	nf := newStoreFlags(fs)
	var kc KeyConfig
	fs.StringVar(&kc.Strategy, "strategy", "segment", "segment, snowflake, uuidv7, ulid or uuidv4")
	fs.Int64Var(&kc.Step, "step", 0, "segment length claimed at once (segment keys; default 1000)")
	fs.Int64Var(&kc.Start, "start", 0, "first ID issued (segment keys; default 1)")
	fs.StringVar(&kc.Description, "description", "", "free text")
	fs.StringVar(&kc.Order, "order", "", "segment keys: node (default) or global, every ID above those returned before, on any node (a store round trip per request)")
	pos, err := parseArgs(fs, args, 1, "one KEY")
	if err != nil {
		return err
	}
	kc.Name = pos[0]
	k, err := kc.key()
	if err != nil {
		return exitErr(err)
	}
	return withCatalog(ctx, nf, getenv, stderr, func(c *catalog) error {
		if err := c.issuer.CreateKey(ctx, k); err != nil {
			return err
		}
		if k.Order == idforge.OrderGlobal {
			fmt.Fprintf(stdout, "created %s key %q in global order\n", k.Strategy, k.Name)
			return nil
		}
		fmt.Fprintf(stdout, "created %s key %q\n", k.Strategy, k.Name)
		return nil
	})
}

func cmdKeysList(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	fs := newFlagSet("keys list", stderr)
	nf := newStoreFlags(fs)
	if _, err := parseArgs(fs, args, 0, "no arguments"); err != nil {
		return err
	}
	return withCatalog(ctx, nf, getenv, stderr, func(c *catalog) error {
		keys, err := c.issuer.Keys(ctx)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "KEY\tSTRATEGY\tORDER\tSTATUS\tSTEP\tMAX_ID\tDESCRIPTION")
		for _, k := range keys {
			order, step, maxID := "-", "-", "-"
			if k.Strategy == idforge.StrategySegment {
				order, step, maxID = string(k.Order), strconv.FormatInt(k.Step, 10), strconv.FormatInt(k.MaxID, 10)
			}
			status := "live"
			if k.Retired {
				status = "retired"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", k.Name, k.Strategy, order, status, step, maxID, k.Description)
		}
		return tw.Flush()
	})
}
