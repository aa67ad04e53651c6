package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/node"
)

// cmdSerialGapless runs a gapless serial's steps on the store, as a node
// does: serial reserve NAME [--param …], serial commit NAME ID, serial
// void NAME ID REASON, serial audit NAME [--from N] [--to N].
func cmdSerialGapless(ctx context.Context, step string, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	fs := newFlagSet("serial "+step, stderr)
	nf := newNodeFlags(fs, false)
	params := paramFlags{}
	from, to := new(int64), new(int64)
	want, usage := map[string]int{"reserve": 1, "commit": 2, "void": 3, "audit": 1}[step], map[string]string{
		"reserve": "one NAME", "commit": "NAME and a reservation ID", "void": "NAME, a reservation ID and a REASON", "audit": "one NAME"}[step]
	switch step {
	case "reserve":
		fs.Var(params, "param", "a template parameter, NAME=VALUE (repeatable)")
	case "audit":
		from = fs.Int64("from", 1, "the first number")
		to = fs.Int64("to", 0, "the last number (0: up to 1000 numbers, to the last handed out)")
	}
	pos, err := parseArgs(fs, args, want, usage)
	if err != nil {
		return err
	}
	return withNode(ctx, nf, getenv, stderr, func(n *node.Node) error {
		iss := n.Issuer()
		var r idforge.Reservation
		switch step {
		case "reserve":
			r, err = iss.Reserve(ctx, pos[0], params)
		case "commit":
			r, err = iss.Commit(ctx, pos[0], pos[1])
		case "void":
			r, err = iss.Void(ctx, pos[0], pos[1], pos[2])
		case "audit":
			rs, last, err := iss.Audit(ctx, pos[0], *from, *to)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "NUMBER\tVALUE\tSTATE\tREASON\tSINCE")
			for _, r := range rs {
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", r.Number, r.Value, r.State, r.Reason, r.Updated.Format(time.RFC3339Nano))
			}
			fmt.Fprintln(tw, "last handed out:\t"+strconv.FormatInt(last, 10))
			return tw.Flush()
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "reservation=%s\nnumber=%d\nvalue=%s\nstate=%s\nexpires=%s\n", r.ID, r.Number, r.Value, r.State, r.Expires.Format(time.RFC3339Nano))
		return nil
	})
}
