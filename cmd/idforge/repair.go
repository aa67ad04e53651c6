package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/dsn"
	"github.com/idforge/idforge/internal/httpwire"
	"github.com/idforge/idforge/internal/wait"
	"github.com/idforge/idforge/sequence"
	sqlworker "github.com/idforge/idforge/worker/sql"
)

// cmdKeysRepair puts a store that failed over back into service: it
// raises the keys above every ID handed out and records the server the
// store now reaches as the one claims are made on. Like migrate, it only
// talks to the store (and the nodes it reads the floor from).
func cmdKeysRepair(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	fs := newFlagSet("keys repair", stderr)
	nf := newStoreFlags(fs)
	var (
		floor     int64
		keys      commaListFlag
		fromNodes commaListFlag
		token     string
		waitFor   time.Duration
		force     bool
		sequences repeatedFlag
		counter   string
	)
	fs.Int64Var(&floor, "floor", 0, "raise every key (or the --key ones) to at least this max_id: above every ID ever handed out")
	fs.Var(&keys, "key", "repair only these keys (comma-separated, repeatable; default every segment key)")
	fs.Var(&fromNodes, "from-nodes", "base URLs of the live nodes (comma-separated): the floor is at least the highest claimed_up_to they report per key")
	fs.StringVar(&token, "token", "", "admin token for --from-nodes, when the nodes require one; env IDFORGE_TOKEN")
	fs.DurationVar(&waitFor, "wait", sqlworker.DefaultStaleAfter,
		"wait this long before accepting the new server, so that every node holding a worker-ID lease in this database has seen the fail-over and stopped: the SQL worker URL's stale_after")
	fs.BoolVar(&force, "force", false, "repair even when the store does not report a fail-over")
	fs.Var(&sequences, "sequence", "a database of sequence sources or per-period counters, as their URL (repeatable): "+
		schemeList(sequence.RepairSchemes())+": raised above --floor (counters to --counter-floor), and its fence accepts the new server")
	fs.StringVar(&counter, "counter-floor", "", "with --sequence: STAMP/N, a period stamp and a count at or above every count the per-period counters made "+
		"(rows of earlier periods move to it; a STAMP of 0 keeps each row's period)")
	if _, err := parseArgs(fs, args, 0, "no arguments"); err != nil {
		return err
	}
	if floor < 0 {
		return usageErr("--floor %d is negative", floor)
	}
	if floor == 0 && len(fromNodes) == 0 {
		return usageErr("keys repair needs --floor N or --from-nodes URL,...: the keys must be raised above every ID ever handed out")
	}
	var counterFloor sequence.Mark
	if counter != "" {
		stamp, n, ok := strings.Cut(counter, "/")
		var err1, err2 error
		counterFloor.Stamp, err1 = strconv.ParseInt(stamp, 10, 64)
		counterFloor.N, err2 = strconv.ParseInt(n, 10, 64)
		if !ok || err1 != nil || err2 != nil || counterFloor.Stamp < 0 || counterFloor.N < 1 {
			return usageErr("--counter-floor %q: want STAMP/N, a period stamp (0 or more) and a count (1 or more)", counter)
		}
	}
	if token == "" {
		token = getenv("IDFORGE_TOKEN")
	}
	floors := map[string]int64{}
	for _, node := range fromNodes {
		if err := readClaimed(ctx, node, token, floors); err != nil {
			return err
		}
	}
	return withAdminStore(ctx, nf, getenv, stderr, func(st idforge.Store, url string) error {
		r, ok := st.(idforge.FailoverRepairer)
		if !ok {
			return usageErr("%s has no fail-over fence; nothing to repair", dsn.RedactedString(url))
		}
		state, err := r.FailoverState(ctx)
		if err != nil {
			return exitErr(inContext(err, "repair %s", dsn.RedactedString(url)))
		}
		if !state.FailedOver() && !force {
			fmt.Fprintf(stdout, "%s has not failed over: claims are made on %s, the server it reaches; nothing to repair (--force repairs anyway)\n",
				dsn.RedactedString(url), state.Current)
			return nil
		}
		fmt.Fprintf(stdout, "%s: claims were made on %q; it now reaches %q\n", dsn.RedactedString(url), state.Recorded, state.Current)
		if waitFor > 0 {
			fmt.Fprintf(stdout, "waiting %s so that every node holding a worker-ID lease has seen the fail-over and stopped using it\n", waitFor)
			if err := wait.For(ctx, waitFor); err != nil {
				return err
			}
		}
		// One floor for all the keys, the highest asked for: a key the
		// nodes reported less of is raised too, which only leaves a gap.
		for key, f := range floors {
			if len(keys) == 0 || slices.Contains(keys, key) {
				floor = max(floor, f)
			}
		}
		// The sequence rows are raised before any fence accepts the new
		// server (the store's and theirs may be the same database's), and
		// their fences accepted after: nothing is handed out from a row
		// not yet raised.
		for _, u := range sequences {
			if _, err := sequence.RepairFailover(ctx, u, sequence.Repair{Floor: floor, CounterFloor: counterFloor, NoAccept: true}); err != nil {
				return exitErr(inContext(err, "repair %s", dsn.RedactedString(u)))
			}
		}
		done, err := r.RepairFailover(ctx, floor, keys)
		if err != nil {
			return exitErr(inContext(err, "repair %s", dsn.RedactedString(url)))
		}
		for _, k := range done.Raised {
			fmt.Fprintf(stdout, "raised key %q from max_id %d to %d\n", k.Key, k.From, k.To)
		}
		fmt.Fprintf(stdout, "claims are made on %q from now on; every key is at max_id %d or above\n", done.Server, floor)
		for _, u := range sequences {
			said, err := sequence.RepairFailover(ctx, u, sequence.Repair{Floor: floor, CounterFloor: counterFloor})
			if err != nil {
				return exitErr(inContext(err, "repair %s", dsn.RedactedString(u)))
			}
			fmt.Fprintf(stdout, "%s: %s\n", dsn.RedactedString(u), said)
		}
		return nil
	})
}

// commaListFlag is a comma-separated, repeatable flag.
type commaListFlag []string

var _ flag.Value = (*commaListFlag)(nil)

func (l *commaListFlag) String() string { return strings.Join(*l, ",") }

func (l *commaListFlag) Set(v string) error {
	for _, item := range strings.Split(v, ",") {
		if item = strings.TrimSpace(item); item != "" {
			*l = append(*l, item)
		}
	}
	return nil
}

// readClaimed adds to floors the claimed_up_to of every segment key a
// node reports on GET /v1/keys.
func readClaimed(ctx context.Context, node, token string, floors map[string]int64) error {
	base := strings.TrimSuffix(node, "/")
	if _, err := url.Parse(base); err != nil {
		return usageErr("--from-nodes %q: %v", node, err)
	}
	keys, err := httpwire.AllKeys(ctx, base, token)
	if err != nil {
		return fmt.Errorf("read the claims of node %s: %w", node, err)
	}
	for _, k := range keys.Keys {
		if k.Segment == nil || k.Segment.ClaimedUpTo == "" {
			continue
		}
		n, err := strconv.ParseInt(k.Segment.ClaimedUpTo, 10, 64)
		if err != nil {
			return fmt.Errorf("read the claims of node %s: key %q: claimed_up_to %q: %w", node, k.Key, k.Segment.ClaimedUpTo, err)
		}
		floors[k.Key] = max(floors[k.Key], n)
	}
	return nil
}
