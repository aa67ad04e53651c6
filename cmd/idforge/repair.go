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
	"github.com/idforge/idforge/internal/wait"
	"github.com/idforge/idforge/sequence"
	"github.com/idforge/idforge/sequence/autoinc"
	"github.com/idforge/idforge/sequence/sqlrow"
	"github.com/idforge/idforge/sequence/tickets"
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
	fs.Var(&sequences, "sequence", "a database of sequence sources or per-period counters, as their URL (repeatable): sqlrow+mysql://…?table=…, mysql://… or postgres://… "+
		"(row sources, counters), autoinc+mysql://…?tables=4 (auto-increment tables), tickets+mysql://…?also=… (ticket servers): "+
		"raised above --floor (counters to --counter-floor), and its fence accepts the new server")
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
			if _, err := repairSequence(ctx, u, floor, counterFloor, true); err != nil {
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
			said, err := repairSequence(ctx, u, floor, counterFloor, false)
			if err != nil {
				return exitErr(inContext(err, "repair %s", dsn.RedactedString(u)))
			}
			fmt.Fprintf(stdout, "%s: %s\n", dsn.RedactedString(u), said)
		}
		return nil
	})
}

// repairSequence raises the sequence database(s) a --sequence URL names
// above floor (per-period counters to counterFloor), by the URL's scheme:
// autoinc+… auto-increment tables, tickets+… ticket servers, otherwise
// sqlrow rows and counters; unless noAccept, their fences accept the
// server they reach. It returns what it did, to print.
func repairSequence(ctx context.Context, rawURL string, floor int64, counterFloor sequence.Mark, noAccept bool) (string, error) {
	scheme, _, _ := strings.Cut(strings.ToLower(rawURL), "://")
	switch {
	case strings.HasPrefix(scheme, "autoinc+"):
		states, err := autoinc.RepairFailoverURL(ctx, rawURL, autoinc.Repair{Floor: floor, NoAccept: noAccept})
		if err != nil {
			return "", err
		}
		var on []string
		for _, st := range states {
			on = append(on, strconv.Quote(st.Current))
		}
		return fmt.Sprintf("auto-increment tables issue values above %d; values are handed out on %s from now on", floor, strings.Join(on, ", ")), nil
	case strings.HasPrefix(scheme, "tickets+"):
		done, err := tickets.RepairFailover(ctx, []string{rawURL}, tickets.Repair{Floor: floor, NoAccept: noAccept})
		if err != nil {
			return "", err
		}
		var said []string
		for _, d := range done {
			said = append(said, fmt.Sprintf("ticket server %s issues tickets above %d on %q", d.Server, d.Base, d.Before.Current))
		}
		return strings.Join(said, "; ") + " from now on", nil
	}
	before, err := sqlrow.RepairFailoverURL(ctx, rawURL, sqlrow.Repair{Floor: floor, CounterFloor: counterFloor, NoAccept: noAccept})
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("sequence rows at %d or above, counters at %s or above; values are handed out on %q from now on", floor, counterFloor, before.Current), nil
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
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	base := strings.TrimSuffix(node, "/")
	if _, err := url.Parse(base); err != nil {
		return usageErr("--from-nodes %q: %v", node, err)
	}
	// Every page of keys, following next.
	path := "/v1/keys"
	for path != "" {
		var page struct {
			Keys []claimedKey `json:"keys"`
			Next string       `json:"next"`
		}
		if _, _, _, err := getJSON(ctx, base, path, token, &page); err != nil {
			return fmt.Errorf("read the claims of node %s: %w", node, err)
		}
		if err := addClaimed(node, floors, page.Keys); err != nil {
			return err
		}
		path = ""
		if page.Next != "" {
			path = "/v1/keys?after=" + url.QueryEscape(page.Next)
		}
	}
	return nil
}

// claimedKey is what readClaimed reads of a key on GET /v1/keys.
type claimedKey struct {
	Key     string `json:"key"`
	Segment *struct {
		ClaimedUpTo string `json:"claimed_up_to"`
	} `json:"segment"`
}

// addClaimed adds one page of a node's keys to floors.
func addClaimed(node string, floors map[string]int64, keys []claimedKey) error {
	for _, k := range keys {
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
