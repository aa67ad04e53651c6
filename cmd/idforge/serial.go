package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/issuer"
	"github.com/idforge/idforge/node"
	"github.com/idforge/idforge/sequence/tickets"
	"github.com/idforge/idforge/store/memstore"
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

// cmdSerial issues serial numbers (idforge serial NAME), explains a
// template (idforge serial check TEMPLATE), or runs a gapless serial's
// steps (idforge serial reserve|commit|void|audit NAME …).
func cmdSerial(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	if len(args) > 0 && args[0] == "check" {
		return cmdSerialCheck(ctx, args[1:], stdout, stderr, getenv)
	}
	if len(args) > 0 && strings.Contains(" reserve commit void audit ", " "+args[0]+" ") {
		return cmdSerialGapless(ctx, args[0], args[1:], stdout, stderr, getenv)
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

// cmdSerialCheck checks a template as POST /v1/serials does
// (issuer.Compile) and explains it: its parts, the order they are
// evaluated in, its maximum length, the counter that makes it unique and
// an example value. With --config or --store (or their environment
// variables) it checks against the definitions the server sees: the
// store's keys and sources, the configuration's and the store's
// counters. Without, every name it draws from stands for a key.
// The example always draws from such stand-ins, never from the store. A
// template it refuses (bad syntax, or no proof that it never repeats)
// exits with status 1 and the reason; a misused command exits with
// status 2.
func cmdSerialCheck(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	fs := newFlagSet("serial check", stderr)
	nf := newStoreFlags(fs)
	tz := fs.String("tz", "UTC", "time zone of the dates")
	params := paramFlags{}
	fs.Var(params, "param", "an example parameter, NAME=VALUE (repeatable)")
	pos, err := parseArgs(fs, args, 1, "one TEMPLATE (quote it)")
	if err != nil {
		return err
	}
	if _, err := time.LoadLocation(*tz); err != nil {
		return usageErr("--tz %q: %v", *tz, err)
	}
	def := idforge.Serial{Name: "check", Template: pos[0], TimeZone: *tz}
	standIns := issuer.New(standInStore{memstore.New()}, nil, issuer.Settings{Logger: newLogger(stderr, "error")})
	defer standIns.Close()
	example, err := standIns.Compile(ctx, def)
	tmpl := example
	if err == nil && nf.config+nf.store+getenv("IDFORGE_CONFIG")+getenv("IDFORGE_STORE") != "" {
		cfg, err := nf.load(getenv)
		if err != nil {
			return err
		}
		c, err := openCatalog(ctx, cfg, stderr)
		if err != nil {
			return exitErr(err)
		}
		defer c.Close()
		tmpl, err = c.issuer.Compile(ctx, def)
		if err != nil {
			return fmt.Errorf("template refused: %w", err)
		}
	}
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
	value, err := example.Next(ctx, params)
	if err != nil {
		return exitErr(err)
	}
	fmt.Fprintf(stdout, "example: %s\n", value)
	return nil
}

// standInStore is a store in memory in which every name is a segment key
// counting from 1: what `serial check` draws an example from.
type standInStore struct{ *memstore.Store }

func (s standInStore) Key(ctx context.Context, name string) (idforge.Key, error) {
	err := s.CreateKey(ctx, idforge.Key{Name: name, Strategy: idforge.StrategySegment, Step: issuer.DefaultStep, MaxID: 1})
	if err != nil && !errors.Is(err, idforge.ErrKeyExists) {
		return idforge.Key{}, err
	}
	return s.Store.Key(ctx, name)
}

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
