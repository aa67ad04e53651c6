package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/idforge/idforge/auth"
	"github.com/idforge/idforge/doctor"
)

// cmdDoctor reads the configuration (the flags and file of serve), the
// store and, with --node, running nodes, and prints what will hurt later
// (package doctor). It changes nothing. Exit status 1 when a check fails.
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
	s, err := cfg.settings(newLogger(stderr, "error"), "", getenv)
	if err != nil {
		return usageError{err}
	}
	c := doctor.Config{Node: s, HTTP: cfg.HTTP, GRPC: cfg.GRPC, TLS: cfg.TLS.Cert != "",
		Tokens: auth.FromEnv(cfg.Auth).Configured(), Token: tokenFrom(*token, getenv), ClusterSize: *size}
	for _, u := range nodeURLs {
		c.Nodes = append(c.Nodes, nodeURL(u, false))
	}
	findings := doctor.Run(ctx, c)
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(map[string]any{"findings": findings}); err != nil {
			return err
		}
	} else {
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		for _, f := range findings {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", f.Status, f.Check, f.Message)
			if f.Fix != "" {
				fmt.Fprintf(tw, "\t\tfix: %s\n", f.Fix)
			}
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	failed := 0
	for _, f := range findings {
		if f.Status == doctor.Fail {
			failed++
		}
	}
	if failed > 0 {
		return fmt.Errorf("doctor: %d of the checks failed", failed)
	}
	return nil
}
