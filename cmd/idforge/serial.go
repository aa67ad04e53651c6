package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/node"
	"github.com/idforge/idforge/sequence/tickets"
	"github.com/idforge/idforge/serial"
)

// paramFlags collects repeated --param NAME=VALUE flags.
type paramFlags map[string]string

func (p paramFlags) String() string { return fmt.Sprint(map[string]string(p)) }

func (p paramFlags) Set(v string) error {
	name, value, ok := strings.Cut(v, "=")
	if !ok || name == "" {
		return fmt.Errorf("want NAME=VALUE, got %q", v)
	}
	p[name] = value
	return nil
}

// cmdSerial issues serial numbers (idforge serial NAME), or explains a
// template (idforge serial check TEMPLATE).
func cmdSerial(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	if len(args) > 0 && args[0] == "check" {
		return cmdSerialCheck(ctx, args[1:], stdout, stderr)
	}
	fs := newFlagSet("serial", stderr)
	nf := newNodeFlags(fs, false)
	count := fs.Int("n", 1, "how many serials")
	params := paramFlags{}
	fs.Var(params, "param", "a template parameter, NAME=VALUE (repeatable)")
	pos, err := parseArgs(fs, args, 1, "one NAME (or: serial check TEMPLATE)")
	if err != nil {
		return err
	}
	if *count < 1 || *count > idforge.MaxCount {
		return usageErr("-n %d: want 1..%d", *count, idforge.MaxCount)
	}
	return withNode(ctx, nf, getenv, stderr, func(n *node.Node) error {
		values, err := n.Issuer().NextSerial(ctx, pos[0], *count, params)
		if err != nil {
			return err
		}
		for _, v := range values {
			fmt.Fprintln(stdout, v)
		}
		return nil
	})
}

// cmdSerialCheck parses a template and explains it: its parts, the order
// they are evaluated in, its maximum length, the counter that makes it
// unique and an example value. It touches no store: every @{seq:…} is a
// stand-in key that answers 1 (so a per-period counter's dates are
// checked only when a node compiles the serial). A template it refuses
// (bad syntax, or no proof that it never repeats) exits with status 1
// and the reason; a misused command exits with status 2.
func cmdSerialCheck(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("serial check", stderr)
	tz := fs.String("tz", "UTC", "time zone of the dates")
	params := paramFlags{}
	fs.Var(params, "param", "an example parameter, NAME=VALUE (repeatable)")
	pos, err := parseArgs(fs, args, 1, "one TEMPLATE (quote it)")
	if err != nil {
		return err
	}
	loc, err := time.LoadLocation(*tz)
	if err != nil {
		return usageErr("--tz %q: %v", *tz, err)
	}
	tmpl, err := serial.Parse(ctx, pos[0], serial.Options{Location: loc, Resolver: serial.ResolverFunc(func(context.Context, string) (serial.Source, error) {
		return serial.Source{Generator: standIn{}}, nil
	})})
	if err != nil {
		return fmt.Errorf("template refused: %w", err)
	}
	fmt.Fprint(stdout, tmpl.Explain().String())
	for _, p := range tmpl.Params() {
		if _, ok := params[p]; !ok {
			fmt.Fprintf(stdout, "example: give --param %s=… to render one\n", p)
			return nil
		}
	}
	example, err := tmpl.Next(ctx, params)
	if err != nil {
		return exitErr(err)
	}
	fmt.Fprintf(stdout, "example: %s\n", example)
	return nil
}

// standIn answers 1 for every source a checked template names.
type standIn struct{}

func (standIn) Next(context.Context) (int64, error) { return 1, nil }

var _ idforge.Generator = standIn{}

// cmdTickets shows (status) or grows (expand) a set of Flickr-style ticket
// servers: idforge tickets status URL…; idforge tickets expand --to N URL….
func cmdTickets(ctx context.Context, args []string, stdout, stderr io.Writer, _ func(string) string) error {
	if len(args) == 0 {
		return usageErr("tickets needs a subcommand: status or expand")
	}
	fs := newFlagSet("tickets "+args[0], stderr)
	to := 0
	if args[0] == "expand" {
		fs.IntVar(&to, "to", 0, "the new number of servers (the URLs list them all, old ones first)")
	}
	servers, err := parseFlags(fs, args[1:])
	if err != nil {
		return err
	}
	if len(servers) == 0 {
		return usageErr("tickets %s needs the servers' URLs (mysql://…), in their order", args[0])
	}
	switch args[0] {
	case "status":
		states, err := tickets.Status(ctx, servers)
		if err != nil {
			return exitErr(err)
		}
		for _, st := range states {
			fmt.Fprintf(stdout, "%+v\n", st)
		}
		return nil
	case "expand":
		if to != len(servers) {
			return usageErr("--to %d, but %d server URLs given: list every server of the new set, old ones first", to, len(servers))
		}
		res, err := tickets.Expand(ctx, servers, to, tickets.WithProgress(func(step string) { fmt.Fprintln(stderr, step) }))
		if err != nil {
			return exitErr(err)
		}
		fmt.Fprintf(stdout, "%+v\n", res)
		return nil
	}
	return usageErr("unknown tickets subcommand %q (want status or expand)", args[0])
}
