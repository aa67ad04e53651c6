package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/idforge/idforge/client"
	"github.com/idforge/idforge/internal/strictjson"
)

// cmdQuotas administers a server's quotas through its HTTP API:
//
//	idforge quotas list|show NAME|define NAME [flags]|retire NAME --node ADDR [--token T]
func cmdQuotas(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	if len(args) == 0 {
		return usageErr("quotas needs a subcommand: list, show, define or retire")
	}
	sub := args[0]
	fs := newFlagSet("quotas "+sub, stderr)
	node := fs.String("node", "", "the server: host:port or an http(s) URL; env IDFORGE_NODE")
	token := fs.String("token", "", "token (define and retire need an admin token); env IDFORGE_TOKEN")
	useTLS := fs.Bool("tls", false, "talk TLS (system roots) to a host:port address")
	var q client.Quota
	var keys, tokens, formats string
	if sub == "define" {
		fs.StringVar(&keys, "keys", "", "comma-separated keys, prefixes ending in * or *: the keys it applies to (default every key)")
		fs.StringVar(&tokens, "tokens", "", "comma-separated token names: the callers it applies to, each counted apart (default every caller)")
		fs.Int64Var(&q.Limit, "limit", 0, "IDs allowed per period (counted in IDs, not calls)")
		fs.StringVar(&q.Per, "per", "", "the period: second, minute, hour, day or month")
		fs.BoolVar(&q.Closed, "closed", false, "refuse every call of the keys")
		fs.StringVar(&formats, "formats", "", "comma-separated formats allowed: default, decimal, hex, base62, sqids")
		fs.StringVar(&q.Counter, "counter", "", "counter store URL shared by the nodes (default: each node counts alone)")
		fs.StringVar(&q.Description, "description", "", "free text")
	}
	want, what := 1, "one NAME"
	switch sub {
	case "list":
		want, what = 0, "no arguments"
	case "show", "define", "retire":
	default:
		return usageErr("unknown quotas subcommand %q (want list, show, define or retire)", sub)
	}
	pos, err := parseArgs(fs, args[1:], want, what)
	if err != nil {
		return err
	}
	addr := *node
	if addr == "" {
		addr = getenv("IDFORGE_NODE")
	}
	if addr == "" {
		return usageErr("quotas %s needs --node ADDR (or IDFORGE_NODE)", sub)
	}
	opts := []client.Option{}
	if t := tokenFrom(*token, getenv); t != "" {
		opts = append(opts, client.WithToken(t))
	}
	if *useTLS {
		opts = append(opts, client.WithTLS(&tls.Config{MinVersion: tls.VersionTLS12}))
	}
	c, err := client.NewQuotas(addr, opts...)
	if err != nil {
		return exitErr(err)
	}
	defer c.Close()
	show := func(q client.Quota, err error) error {
		if err != nil {
			return exitErr(err)
		}
		enc := strictjson.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(q)
	}
	switch sub {
	case "show":
		return show(c.Get(ctx, pos[0]))
	case "retire":
		return show(c.Retire(ctx, pos[0]))
	case "define":
		q.Name, q.Keys, q.Tokens, q.Formats = pos[0], splitList(keys), splitList(tokens), splitList(formats)
		return show(c.Define(ctx, q))
	}
	list, err := c.List(ctx)
	if err != nil {
		return exitErr(err)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "QUOTA\tKEYS\tTOKENS\tRULE\tFROM\tSTATE")
	for _, q := range list {
		rule := fmt.Sprintf("%d per %s", q.Limit, q.Per)
		switch {
		case q.Closed:
			rule = "closed"
		case q.Limit == 0:
			rule = "formats " + strings.Join(q.Formats, ",")
		case len(q.Formats) > 0:
			rule += ", formats " + strings.Join(q.Formats, ",")
		}
		state := "live"
		if q.Retired {
			state = "retired"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", q.Name, orAll(q.Keys), orAll(q.Tokens), rule, q.Origin, state)
	}
	return tw.Flush()
}

// splitList splits a comma-separated flag value; empty gives nil.
func splitList(s string) []string {
	if s == "" {
		return nil
	}
	parts := strings.Split(s, ",")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}

func orAll(list []string) string {
	if len(list) == 0 {
		return "*"
	}
	return strings.Join(list, ",")
}
