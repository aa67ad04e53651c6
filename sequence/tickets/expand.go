package tickets

import (
	"context"
	"crypto/rand"
	"crypto/sha1"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/sqldb"
)

// DefaultHeadroom is the headroom Expand gives each running server when
// it caps it, unless WithHeadroom says otherwise.
const DefaultHeadroom = 1_000_000

// MaxServers is the largest number of ticket servers:
// auto_increment_increment is at most 65535.
const MaxServers = 65535

// ExpandOption adjusts Expand.
type ExpandOption func(*expandOptions)

type expandOptions struct {
	headroom int64
	progress func(string)
}

// WithHeadroom sets how many tickets a running server may still issue,
// under its old configuration, between being capped and being switched
// (default DefaultHeadroom). A server that reaches its ceiling meanwhile
// stops issuing until it is switched; it never exceeds it.
func WithHeadroom(n int64) ExpandOption {
	return func(o *expandOptions) { o.headroom = n }
}

// WithProgress has Expand report each step it applies, for a CLI.
func WithProgress(f func(step string)) ExpandOption {
	return func(o *expandOptions) { o.progress = f }
}

// ServerState describes one ticket server.
type ServerState struct {
	// Server is the server's address and database, without password.
	Server string
	// Configured reports whether the server has a configuration row; an
	// unconfigured server issues nothing.
	Configured bool
	// Servers (N, its auto_increment_increment) and Position (i, its
	// auto_increment_offset): the server issues tickets ≡ i (mod N).
	Servers, Position int64
	// Base: the server issues tickets above it.
	Base int64
	// Ceiling: the server issues tickets up to it; 0 means no ceiling.
	// Only an expansion in progress (or interrupted) sets one.
	Ceiling int64
	// Gen changes with every change of the configuration.
	Gen int64
	// Cluster identifies the set of servers the server belongs to; Expand
	// chooses it when it configures a set and refuses to mix sets.
	Cluster string
	// MaxTicket is the largest ticket in the table: the last one issued.
	MaxTicket int64
}

// ExpandResult reports what Expand did.
type ExpandResult struct {
	// Before and After are the servers' states, in the order given.
	Before, After []ServerState
	// Base is the new configuration's floor: every ticket issued from now
	// on is above it. Zero when nothing changed.
	Base int64
	// Changed is false when the servers already had the configuration
	// asked for, and Expand did nothing.
	Changed bool
}

// admin is an open server for Expand and Status.
type admin struct {
	spec
	db       *sql.DB
	lock     *sql.Conn // holds the expansion lock
	lockName string
}

// Status returns the state of every server the URLs name (each URL's own
// server, then those of its also parameter), in that order.
func Status(ctx context.Context, servers []string) ([]ServerState, error) {
	as, err := openAdmins(servers)
	if err != nil {
		return nil, err
	}
	defer closeAdmins(as)
	return states(ctx, as)
}

// Expand moves a set of Flickr-style ticket servers to newN servers, or
// configures fresh ones, while they keep issuing, so that no ticket can
// repeat before, during or after the change.
//
// servers lists every server of the new set (each URL names its own
// server and, through its also parameter, more): first the current ones
// in their order, then the new ones. Server number p (from 1) issues
// tickets ≡ p (mod newN). newN must equal the number of servers listed:
// it guards against a list that silently lost or gained a server.
//
// A change of a server's configuration row (see the package
// documentation) takes the row's exclusive lock, so it waits for the
// inserts in flight, which hold it shared, and every later insert sees it.
// The procedure:
//
//  1. Lock: take a named lock (GET_LOCK) on every server, so that two
//     expansions cannot interleave; create the tables (and the failover
//     fence, see the package documentation) where missing;
//     check the set: a configured server must sit at its position, all
//     servers of the current configuration (positions 1 … N) must be
//     listed, and newN must not shrink the set.
//  2. Cap: on every configured server, in one transaction, read the
//     largest ticket t and set ceiling = t + headroom (unless a ceiling is
//     set already). From then on each running server issues at most its
//     ceiling under its old stride, whoever its clients are.
//  3. B is the largest ceiling, base and ticket of any server.
//  4. Switch, new servers first: on each server, in one transaction,
//     insert the ticket x_p (the smallest number above B and above its own
//     largest ticket with x_p ≡ p (mod newN)), which moves its
//     auto-increment counter past x_p, and set N = newN, i = p, base =
//     x_p, no ceiling, a new generation. Its clients reload and issue
//     x_p + newN, x_p + 2·newN, ….
//
// Why nothing repeats: a ticket issued under an old configuration is at
// most its server's ceiling ≤ B, whether it was issued before, during or
// after step 2; one issued under the new configuration is above B.
// Within the new configuration, servers issue distinct residues modulo
// newN. Within the old one, nothing changed. A client that read an old
// configuration cannot insert under it once it changed (its REPLACE
// inserts nothing and it reloads), and the client-side checks refuse any
// ticket outside the configuration it was issued under.
//
// Every server keeps issuing throughout, except one that reaches its
// ceiling before it is switched (raise the headroom) and each server while
// its row is locked. If Expand stops part-way, every state it leaves is
// safe, and running it again with the same list finishes the job (B also
// covers the bases an earlier run chose). With newN equal to the current
// N it does nothing; with only fresh servers, it configures them. Servers
// a Flickr set-up configured by hand (my.cnf, clients that do not check
// the configuration row) must have those clients stopped before Expand
// adopts them; clients use the servers they list until restarted with
// the new list.
//
// It returns an error wrapping idforge.ErrInvalidArgument when the list
// is inconsistent (nothing is changed then), and otherwise the first
// failure, after which Expand can be run again.
func Expand(ctx context.Context, servers []string, newN int, opts ...ExpandOption) (ExpandResult, error) {
	o := expandOptions{headroom: DefaultHeadroom, progress: func(string) {}}
	for _, f := range opts {
		f(&o)
	}
	if o.headroom < 1 {
		return ExpandResult{}, fmt.Errorf("%w: tickets expand: headroom %d is below 1", idforge.ErrInvalidArgument, o.headroom)
	}
	as, err := openAdmins(servers)
	if err != nil {
		return ExpandResult{}, err
	}
	defer closeAdmins(as)
	n := int64(newN)
	if newN < 1 || newN > MaxServers || len(as) != newN {
		return ExpandResult{}, fmt.Errorf("%w: tickets expand: %d servers listed for a set of %d; list every server of the new set (1 to %d)",
			idforge.ErrInvalidArgument, len(as), newN, MaxServers)
	}

	// 1. Lock, create, check.
	for _, a := range as {
		if err := a.takeLock(ctx); err != nil {
			return ExpandResult{}, err
		}
		if err := a.names.migrate(ctx, a.db); err != nil {
			return ExpandResult{}, fmt.Errorf("ticket server %s: %w", a.where, err)
		}
	}
	before, err := states(ctx, as)
	if err != nil {
		return ExpandResult{}, err
	}
	res := ExpandResult{Before: before}
	cluster, err := check(before, n)
	if err != nil {
		return res, err
	}
	if cluster == "" {
		var id [8]byte
		rand.Read(id[:])
		cluster = hex.EncodeToString(id[:])
	}
	done := true
	for p, st := range before {
		done = done && st.Configured && st.Servers == n && st.Position == int64(p+1) && st.Ceiling == 0
	}
	if done {
		res.After = before
		return res, nil
	}
	res.Changed = true

	// 2. Cap every configured server.
	var b int64
	for i, a := range as {
		if !before[i].Configured {
			continue
		}
		ceiling, err := a.cap(ctx, o.headroom)
		if err != nil {
			return res, err
		}
		o.progress(fmt.Sprintf("capped %s at %d", a.where, ceiling))
		b = max(b, ceiling)
	}

	// 3. B covers every ceiling, base and ticket.
	now, err := states(ctx, as)
	if err != nil {
		return res, err
	}
	for _, st := range now {
		b = max(b, st.Ceiling, st.Base, st.MaxTicket)
	}
	res.Base = b

	// 4. Switch, new servers first.
	order := make([]int, len(as))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(x, y int) bool { return !before[order[x]].Configured && before[order[y]].Configured })
	for _, i := range order {
		x, err := as[i].switchTo(ctx, b, n, int64(i+1), cluster)
		if err != nil {
			return res, err
		}
		o.progress(fmt.Sprintf("switched %s to server %d of %d, tickets above %d", as[i].where, i+1, n, x))
	}
	res.After, err = states(ctx, as)
	return res, err
}

// check verifies that the listed servers can be moved to n servers and
// returns the set's identity ("" when no server is configured yet).
//
// Every server that may issue must be listed, or its tickets would not be
// covered. Expand switches new servers before old ones, so in any state
// it leaves, the oldest configuration present (size a) still has all its
// servers configured at positions 1 … a; when only the size n is present,
// all n servers are configured.
func check(sts []ServerState, n int64) (string, error) {
	bad := func(format string, args ...any) (string, error) {
		return "", fmt.Errorf("%w: tickets expand: %s", idforge.ErrInvalidArgument, fmt.Sprintf(format, args...))
	}
	cluster, from := "", ""
	var old int64 // the one size besides n present, if any
	configured := false
	for p, st := range sts {
		if !st.Configured {
			continue
		}
		configured = true
		switch {
		case cluster == "":
			cluster, from = st.Cluster, st.Server
		case st.Cluster != cluster:
			return bad("%s belongs to set %s, %s to set %s; list the servers of one set", from, cluster, st.Server, st.Cluster)
		}
		if st.Position != int64(p+1) {
			return bad("%s is server %d of its set but listed as number %d; list the servers in their order", st.Server, st.Position, p+1)
		}
		if st.Servers > n {
			return bad("%s belongs to a set of %d servers; Expand cannot shrink a set to %d", st.Server, st.Servers, n)
		}
		if st.Servers != n {
			if old != 0 && st.Servers != old {
				return bad("the servers belong to sets of sizes %d and %d besides %d; finish the interrupted expansion first", old, st.Servers, n)
			}
			old = st.Servers
		}
	}
	oldest := old
	if oldest == 0 && configured {
		oldest = n
	}
	for p := int64(1); p <= oldest; p++ {
		if !sts[p-1].Configured {
			return bad("the set has %d servers, but number %d (%s) is not configured: a server of the set is missing from the list", oldest, p, sts[p-1].Server)
		}
	}
	return cluster, nil
}

// cap sets the server's ceiling (unless one is set) in one transaction
// and returns it.
func (a *admin) cap(ctx context.Context, headroom int64) (int64, error) {
	tx, err := a.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("ticket server %s: %w", a.where, err)
	}
	defer tx.Rollback()
	c, ok, err := a.names.readConfig(ctx, tx, true)
	if err != nil || !ok {
		return 0, fmt.Errorf("ticket server %s: cap: %w", a.where, errors.Join(err, errIf(!ok, errUnconfigured)))
	}
	if c.ceiling != 0 {
		return c.ceiling, nil
	}
	m, err := a.names.maxID(ctx, tx)
	if err != nil {
		return 0, fmt.Errorf("ticket server %s: %w", a.where, err)
	}
	top := max(m, c.base)
	if top > math.MaxInt64-headroom {
		return 0, fmt.Errorf("%w: ticket server %s: tickets have reached %d", idforge.ErrSpaceExhausted, a.where, top)
	}
	ceiling := top + headroom
	if _, err := tx.ExecContext(ctx, "UPDATE "+a.names.qc+" SET ceiling = ?, gen = gen + 1 WHERE id = 1", ceiling); err != nil {
		return 0, fmt.Errorf("ticket server %s: cap: %w", a.where, err)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("ticket server %s: cap: %w", a.where, err)
	}
	return ceiling, nil
}

// switchTo gives the server position p of n, issuing above b, in one
// transaction, and returns its new base.
func (a *admin) switchTo(ctx context.Context, b, n, p int64, cluster string) (int64, error) {
	tx, err := a.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("ticket server %s: %w", a.where, err)
	}
	defer tx.Rollback()
	_, configured, err := a.names.readConfig(ctx, tx, true)
	if err != nil {
		return 0, fmt.Errorf("ticket server %s: %w", a.where, err)
	}
	x, err := a.raise(ctx, tx, b, n, p)
	if err != nil {
		return 0, fmt.Errorf("ticket server %s: switch: %w", a.where, err)
	}
	if configured {
		_, err = tx.ExecContext(ctx, "UPDATE "+a.names.qc+" SET servers = ?, position = ?, base = ?, ceiling = 0, gen = gen + 1, cluster = ? WHERE id = 1", n, p, x, cluster)
	} else {
		_, err = tx.ExecContext(ctx, "INSERT INTO "+a.names.qc+" (id, servers, position, base, ceiling, gen, cluster) VALUES (1, ?, ?, ?, 0, 1, ?)", n, p, x, cluster)
	}
	if err != nil {
		return 0, fmt.Errorf("ticket server %s: switch: %w", a.where, err)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("ticket server %s: switch: %w", a.where, err)
	}
	return x, nil
}

// raise moves the server's auto-increment counter past x, the smallest
// ticket above b and above every ticket in its table that is ≡ p (mod n),
// in tx (which holds the lock of its configuration row), and returns x.
func (a *admin) raise(ctx context.Context, tx *sql.Tx, b, n, p int64) (int64, error) {
	m, err := a.names.maxID(ctx, tx)
	if err != nil {
		return 0, err
	}
	from := max(b, m)
	if from > math.MaxInt64-n {
		return 0, fmt.Errorf("%w: tickets have reached %d", idforge.ErrSpaceExhausted, from)
	}
	x := align(from, p, n)
	// An explicit id moves the auto-increment counter past it.
	if _, err := tx.ExecContext(ctx, "REPLACE INTO "+a.names.qt+" (id, stub) VALUES (?, 'a')", x); err != nil {
		return 0, err
	}
	return x, nil
}

// align returns the smallest v > m with v ≡ p (mod n).
func align(m, p, n int64) int64 {
	v := m + 1
	return v + ((p%n-v%n)%n+n)%n
}

func errIf(cond bool, err error) error {
	if cond {
		return err
	}
	return nil
}

// takeLock takes the server's expansion lock on a connection of its own,
// held until closeAdmins.
func (a *admin) takeLock(ctx context.Context) error {
	conn, err := a.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("ticket server %s: %w", a.where, err)
	}
	name := "idforge-tickets:" + a.cfg.DBName + "." + a.names.table
	if len(name) > 64 {
		sum := sha1.Sum([]byte(name))
		name = "idforge-tickets:" + hex.EncodeToString(sum[:])
	}
	var got sql.NullInt64
	if err := conn.QueryRowContext(ctx, "SELECT GET_LOCK(?, 0)", name).Scan(&got); err != nil {
		conn.Close()
		return fmt.Errorf("ticket server %s: take the expansion lock: %w", a.where, err)
	}
	if got.Int64 != 1 {
		conn.Close()
		return fmt.Errorf("%w: ticket server %s: another expansion is running (lock %s is held)", idforge.ErrUnavailable, a.where, name)
	}
	a.lock, a.lockName = conn, name
	return nil
}

func openAdmins(servers []string) ([]*admin, error) {
	var as []*admin
	seen := map[string]string{}
	for _, raw := range servers {
		specs, _, err := parseServers(raw)
		if err != nil {
			closeAdmins(as)
			return nil, err
		}
		for _, sp := range specs {
			key := sp.cfg.Addr + "/" + sp.cfg.DBName + "/" + sp.names.table
			if prev, dup := seen[key]; dup {
				closeAdmins(as)
				return nil, fmt.Errorf("%w: tickets: %s is listed twice (also as %s)", idforge.ErrInvalidArgument, sp.where, prev)
			}
			seen[key] = sp.where
			db, err := sp.adminDB()
			if err != nil {
				closeAdmins(as)
				return nil, err
			}
			as = append(as, &admin{spec: sp, db: db})
		}
	}
	return as, nil
}

func closeAdmins(as []*admin) {
	for _, a := range as {
		if a.lock != nil {
			// Release explicitly: the server would drop the lock with the
			// session, but only once it notices the disconnection.
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			a.lock.ExecContext(ctx, "DO RELEASE_LOCK(?)", a.lockName)
			cancel()
			a.lock.Close()
		}
		a.db.Close()
	}
}

func states(ctx context.Context, as []*admin) ([]ServerState, error) {
	out := make([]ServerState, len(as))
	for i, a := range as {
		st := ServerState{Server: a.where}
		c, ok, err := a.names.readConfig(ctx, a.db, false)
		if err != nil && sqldb.KindOf(err) != sqldb.NoTable { // no such table (yet)
			return nil, fmt.Errorf("ticket server %s: %w", a.where, err)
		}
		if ok {
			st.Configured = true
			st.Servers, st.Position, st.Base, st.Ceiling, st.Gen, st.Cluster = c.servers, c.position, c.base, c.ceiling, c.gen, c.cluster
		}
		if err == nil {
			var m sql.NullInt64
			if err := a.db.QueryRowContext(ctx, "SELECT MAX(id) FROM "+a.names.qt).Scan(&m); err != nil {
				return nil, fmt.Errorf("ticket server %s: %w", a.where, err)
			}
			st.MaxTicket = m.Int64
		}
		out[i] = st
	}
	return out, nil
}
