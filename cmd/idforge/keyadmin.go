package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/idforge/idforge"
)

// cmdKeysUpdate is `idforge keys update KEY [--step N] [--description D]
// [--min-step N] [--max-step N]`: what a flag sets changes, nothing else
// (issuer.Issuer.UpdateKey).
func cmdKeysUpdate(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	fs := newFlagSet("keys update", stderr)
	nf := newStoreFlags(fs)
	var step, minStep, maxStep int64
	var desc string
	fs.Int64Var(&step, "step", 0, "segment keys: the stored step, 1 to 2147483647")
	fs.StringVar(&desc, "description", "", "free text (\"\" clears it)")
	fs.Int64Var(&minStep, "min-step", 0, "segment keys: the key's own smallest claim; 0: the node's")
	fs.Int64Var(&maxStep, "max-step", 0, "segment keys: the key's own largest claim; 0: the node's")
	pos, err := parseArgs(fs, args, 1, "one KEY")
	if err != nil {
		return err
	}
	var c idforge.KeyChange
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "step":
			c.Step = &step
		case "description":
			c.Description = &desc
		case "min-step":
			c.MinStep = &minStep
		case "max-step":
			c.MaxStep = &maxStep
		}
	})
	return withCatalog(ctx, nf, getenv, stderr, func(cat *catalog) error {
		k, err := cat.issuer.UpdateKey(ctx, pos[0], c)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "updated key %q: step %d, min_step %d, max_step %d (0: the node's), description %q\n",
			k.Name, k.Step, k.Bounds.MinStep, k.Bounds.MaxStep, k.Description)
		return nil
	})
}

// cmdKeysRetire is `idforge keys retire KEY` (issuer.Issuer.RetireKey).
func cmdKeysRetire(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	fs := newFlagSet("keys retire", stderr)
	nf := newStoreFlags(fs)
	pos, err := parseArgs(fs, args, 1, "one KEY")
	if err != nil {
		return err
	}
	return withCatalog(ctx, nf, getenv, stderr, func(cat *catalog) error {
		if err := cat.issuer.RetireKey(ctx, pos[0]); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "retired key %q: it issues nothing more (running nodes stop at their next claim, or within refresh_keys), and its name is never created again\n", pos[0])
		return nil
	})
}
