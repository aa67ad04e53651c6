package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/strictjson"
	"github.com/idforge/idforge/issuer"
	"github.com/idforge/idforge/node"
)

// cmdSources runs `idforge sources list|show|create|retire`.
func cmdSources(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	return cmdDefinitions(ctx, issuer.KindSource, args, stdout, stderr, getenv)
}

// cmdCounters runs `idforge counters list|show|create|retire`.
func cmdCounters(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	return cmdDefinitions(ctx, issuer.KindCounter, args, stdout, stderr, getenv)
}

// cmdDefinitions is sources and counters: they differ in kind and in the
// fields create takes.
func cmdDefinitions(ctx context.Context, kind string, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	plural := kind + "s"
	if len(args) == 0 {
		return usageErr("%s needs a subcommand: list, show, create or retire", plural)
	}
	fs := newFlagSet(plural+" "+args[0], stderr)
	nf := newStoreFlags(fs)
	switch args[0] {
	case "list":
		if _, err := parseArgs(fs, args[1:], 0, "no arguments"); err != nil {
			return err
		}
		return withCatalog(ctx, nf, getenv, stderr, func(c *catalog) error {
			defs, err := c.issuer.ListDefined(ctx, kind)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tORIGIN\tSTATE\tDEFINITION\tDESCRIPTION")
			for _, d := range defs {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", d.Name, d.Origin, state(d), d.Spec, d.Description)
			}
			return tw.Flush()
		})
	case "show", "retire":
		pos, err := parseArgs(fs, args[1:], 1, "one NAME")
		if err != nil {
			return err
		}
		return withCatalog(ctx, nf, getenv, stderr, func(c *catalog) error {
			if args[0] == "retire" {
				if err := c.issuer.Retire(ctx, kind, pos[0]); err != nil {
					return err
				}
			}
			d, err := c.issuer.Defined(ctx, kind, pos[0])
			if err != nil {
				return err
			}
			showDefined(stdout, d)
			return nil
		})
	case "create":
		return cmdDefine(ctx, kind, fs, nf, args[1:], stdout, stderr, getenv)
	}
	return usageErr("unknown %s subcommand %q (want list, show, create or retire)", plural, args[0])
}

// cmdDefine runs `idforge sources|counters create NAME`: the fields of a
// [[sources]] or [[counters]] entry as flags.
func cmdDefine(ctx context.Context, kind string, fs *flag.FlagSet, nf *nodeFlags, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	var src node.Source
	var balance listFlag
	var description string
	fs.StringVar(&src.URL, "url", "", "the "+kind+"'s URL")
	fs.StringVar(&description, "description", "", "free text")
	if kind == issuer.KindSource {
		fs.Var(&balance, "balance", "a member of a balanced source (give it 2^n times, at least twice) instead of --url")
		fs.StringVar(&src.DatePacked, "date-packed", "", "a counter URL (with tz=) whose counts are packed with their period, (yyMMddHHmmss << bits) | count, instead of --url")
		fs.IntVar(&src.Bits, "bits", 0, "date-packed: the count's bits (cap 2^bits-1 a period)")
		fs.IntVar(&src.Expand, "expand", 0, "hand out v << N | 0…2^N−1 for every value v (0 to 32)")
		fs.DurationVar(&src.RescueAfter, "rescue-after", 0, "balance: how long an ejected member waits (default 5m)")
		fs.DurationVar(&src.SlowThreshold, "slow-threshold", 0, "balance: a slower call counts against a member (default 200ms)")
		fs.IntVar(&src.SlowCount, "slow-count", 0, "balance: slow calls within --slow-window that eject a member (default 3)")
		fs.DurationVar(&src.SlowWindow, "slow-window", 0, "balance: (default 60s)")
	}
	pos, err := parseArgs(fs, args, 1, "one NAME")
	if err != nil {
		return err
	}
	src.Balance = balance
	var spec []byte
	if kind == issuer.KindSource {
		spec, _ = strictjson.Marshal(src)
	} else {
		spec, _ = strictjson.Marshal(node.Counter{URL: src.URL})
	}
	d := idforge.Definition{Kind: kind, Name: pos[0], Spec: string(spec), Description: description}
	return withCatalog(ctx, nf, getenv, stderr, func(c *catalog) error {
		if err := c.issuer.Define(ctx, d); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "created %s %q\n", kind, d.Name)
		return nil
	})
}

// listFlag is a flag given any number of times.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// state is a definition's state as the lists show it.
func state(d issuer.Defined) string {
	if d.Retired {
		return "retired"
	}
	return "live"
}

// showDefined prints one definition, a field a line.
func showDefined(w io.Writer, d issuer.Defined) {
	fmt.Fprintf(w, "name: %s\nkind: %s\norigin: %s\nstate: %s\ndefinition: %s\n", d.Name, d.Kind, d.Origin, state(d), d.Spec)
	if d.Description != "" {
		fmt.Fprintf(w, "description: %s\n", d.Description)
	}
	if !d.Updated.IsZero() {
		fmt.Fprintf(w, "updated: %s\n", d.Updated.UTC().Format(time.RFC3339))
	}
}
