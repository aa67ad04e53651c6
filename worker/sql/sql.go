package sql

import (
	"cmp"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/sqldb"
	"github.com/idforge/idforge/worker"
	"github.com/idforge/idforge/worker/internal/coord"
	"github.com/idforge/idforge/worker/internal/holder"
)

// Defaults for the Config fields left zero.
const (
	DefaultStaleAfter = 30 * time.Second
	DefaultTimeout    = sqldb.DefaultTimeout
)

// claimAttempts bounds how often a claim transaction is repeated after a
// transient failure (a deadlock, a serialization failure, a lost
// connection: sqldb.IsTransient); a repeated claim finds the row it took.
const claimAttempts = 4

// Config says where and how worker IDs are held. The zero value of every
// field but DB and Dialect means its default.
type Config struct {
	// DB is the database. Required. The Provider does not close a DB it
	// was given. Keep its pool small: a node renews one row every
	// StaleAfter/3. On MySQL, a DSN with clientFoundRows=true saves a
	// query when a renewal lands in the millisecond of the previous one.
	DB *sql.DB
	// Dialect is the SQL DB speaks. Required.
	Dialect Dialect
	// StaleAfter is how long after its last heartbeat (by the database's
	// clock) a row is free for another owner; renewals run every
	// StaleAfter/3. At least 1ms. Default DefaultStaleAfter.
	StaleAfter time.Duration
	// Timeout bounds every call to the database. Default DefaultTimeout.
	Timeout time.Duration
	// IP, when set, pins the worker ID to the one its address gives
	// (sonyflake's machine ID): Acquire claims that row or none, and
	// refuses to start while another live node holds it.
	IP *worker.IP
	// MaxDrift is the largest difference from the live peers' average
	// clock (each row records its holder's clock with every heartbeat)
	// that Acquire accepts. Default 5s.
	MaxDrift time.Duration
	// CreateTable lets Acquire create idforge_workers (and the failover
	// fence idforge_fence) on a MySQL or PostgreSQL server when they are
	// missing. Without it Acquire refuses a database that lacks
	// idforge_workers, saying to run `idforge migrate` (Migrate), as the
	// stores refuse one that lacks their tables: a database server's
	// schema belongs to its administrators. A SQLite file always gets
	// its table, as the SQLite store creates its own.
	CreateTable bool
	// Name identifies the database in Describe and in the local cache,
	// whose entries are only used by a provider of the same Name. The
	// opener uses the URL without its password. When empty, the
	// dialect's name is used and no cache is kept, as it could not tell
	// databases apart.
	Name string
}

// Provider is a worker.Provider holding IDs in a SQL table. It is safe
// for concurrent use. Create it with New (or worker.Open with a mysql://,
// postgres:// or sqlite: URL) and Close it after releasing its leases.
type Provider struct {
	held holder.Holder // its TTL is StaleAfter
	ip   *worker.IP
	from string // what the pinned ID came from, once acquired (ipMu)
	ipMu sync.Mutex
	db   *sql.DB
	d    *sqldb.Dialect
	sql  *statements

	create     bool // Config.CreateTable, or a SQLite file
	schemaMu   sync.Mutex
	schemaDone bool
	// fence is the database's failover fence (sqldb.Fence), set by
	// ensureSchema on a server; claims and renewals check it.
	fence *sqldb.Fence
}

var (
	_ worker.Provider            = (*Provider)(nil)
	_ interface{ Close() error } = (*Provider)(nil)
)

// New returns a Provider for cfg and this node's opts. It does not
// contact the database: Acquire does, and creates the table when it is
// missing only with Config.CreateTable (see Migrate). When opts.Owner is
// empty, a random owner unique to this process is used, so a restarted
// node gets a new ID (or its old one once the row is stale) and cannot
// resume from the cache. It returns an error wrapping
// idforge.ErrInvalidArgument for a nil DB, an unknown dialect, an owner
// longer than 255 bytes, a StaleAfter under 1ms or a negative Timeout.
func New(cfg Config, opts worker.Options) (*Provider, error) {
	p := &Provider{db: cfg.DB, d: sqldb.Lookup(string(cfg.Dialect)), create: cfg.CreateTable || cfg.Dialect == SQLite, ip: cfg.IP}
	p.held = holder.Holder{
		Who:      "sql worker",
		Name:     cmp.Or(cfg.Name, string(cfg.Dialect)+" database"),
		TTL:      cfg.StaleAfter,
		Timeout:  cfg.Timeout,
		MaxDrift: cfg.MaxDrift,
		Renew:    p.renew,
		Release:  p.release,
		Resume: worker.ResumeConfig{
			Coordinator: "the database",
			Failure:     "is unreachable or failing",
			NoCache:     "none is kept without a data directory and a Config.Name",
			Then:        "a renewal re-establishes its row once the database answers",
		},
	}
	if cfg.DB == nil {
		return nil, p.held.Invalid("no database")
	}
	if p.d == nil {
		return nil, p.held.Invalid("unknown SQL dialect %q (known: mysql, postgres, sqlite)", string(cfg.Dialect))
	}
	if err := p.held.Defaults("stale_after", DefaultStaleAfter, DefaultTimeout); err != nil {
		return nil, err
	}
	p.sql = newStatements(p.d, p.held.TTL)
	p.held.Start(opts, cfg.Name != "")
	if len(p.held.Owner) > 255 {
		return nil, p.held.Invalid("owner %.40q… is longer than 255 bytes", p.held.Owner)
	}
	return p, nil
}

// Describe says where worker IDs come from, for logs.
func (p *Provider) Describe() string {
	p.ipMu.Lock()
	defer p.ipMu.Unlock()
	return fmt.Sprintf("SQL worker IDs in table %s of %s (stale after %s)%s", Table, p.held.Name, p.held.TTL, p.from)
}

// Close closes the database if the Provider opened it (from a URL).
// Leases still held stop being renewed and end within their validity. It
// is idempotent.
func (p *Provider) Close() error {
	return p.held.Owned.Close()
}

// Acquire claims a worker ID in [0, max]: the row this owner holds, else
// the lowest free one (see the package doc), and returns its lease,
// renewed in the background until Release or until a renewal comes too
// late. It returns an error wrapping
//
//   - idforge.ErrInvalidArgument when max is negative or above 2³¹−1;
//   - idforge.ErrWorkersExhausted when live owners hold every ID 0..max;
//   - idforge.ErrClockMovedBackwards when this node's clock is more than
//     MaxDrift from the live peers' average;
//   - idforge.ErrUnavailable when the database cannot be reached (or
//     fails) and no cached ID can be resumed (see the package doc).
func (p *Provider) Acquire(ctx context.Context, max int64) (worker.Lease, error) {
	if max < 0 || max > math.MaxInt32 {
		return nil, p.held.Invalid("max worker ID %d is outside 0..%d", max, math.MaxInt32)
	}
	want := int64(-1)
	if p.ip != nil {
		id, addr, n, err := p.ip.ID(max)
		if err != nil {
			return nil, err
		}
		p.ipMu.Lock()
		p.from = ", " + p.ip.Describe(id, addr, n)
		p.ipMu.Unlock()
		p.held.Logger.Info("sql worker: worker ID from the IP address, checked against "+Table, "worker", id, "address", addr, "bits", n)
		want = id
	}
	claim := func(ctx context.Context, max int64) (holder.Claim, error) { return p.claim(ctx, max, want) }
	switch err := p.ensureSchema(ctx); {
	case errors.Is(err, errNotMigrated):
		return nil, err // not a failure to ride out on a cached ID
	case err != nil:
		// The database did not answer: the claim fails the same way,
		// without waiting for it twice.
		claim = func(context.Context, int64) (holder.Claim, error) { return holder.Claim{}, err }
	}
	return p.held.Acquire(ctx, max, claim, func(c holder.Claim) error {
		if want >= 0 {
			return fmt.Errorf("%w: sql worker: worker ID %d%s is held by %q, a live node (row %d of %s): two nodes' addresses share those bits; "+
				"give one of them another address (addr=), more bits, or another provider",
				idforge.ErrWorkersExhausted, want, p.from, c.Taken, want, Table)
		}
		return fmt.Errorf("%w: sql worker: all %d worker IDs 0..%d in %s are held by live nodes (heartbeat within %s)",
			idforge.ErrWorkersExhausted, max+1, max, Table, p.held.TTL)
	})
}

// errNotMigrated is wrapped by the error for a database that lacks
// idforge_workers when the Provider may not create it.
var errNotMigrated = errors.New("not migrated")

// Migrate creates idforge_workers, its lock row and, on MySQL and
// PostgreSQL, the failover fence, where they are missing: `idforge
// migrate`. It reports the tables it created.
func (p *Provider) Migrate(ctx context.Context) ([]string, error) {
	had, err := p.hasTable(ctx)
	if err != nil {
		return nil, err
	}
	p.schemaMu.Lock()
	p.create = true
	p.schemaMu.Unlock()
	if err := p.ensureSchema(ctx); err != nil || had {
		return nil, err
	}
	return []string{Table}, nil
}

// hasTable reports whether idforge_workers holds its lock row; the
// error is the database's when it does not answer.
func (p *Provider) hasTable(ctx context.Context) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, p.held.Timeout)
	defer cancel()
	if err := p.db.PingContext(ctx); err != nil {
		return false, fmt.Errorf("sql worker: %s: %w", p.held.Name, err)
	}
	var n int64
	return p.db.QueryRowContext(ctx, p.sql.probe).Scan(&n) == nil && n > 0, nil
}

// ensureSchema creates the table and its lock row once per Provider, or
// without Config.CreateTable checks that they are there.
func (p *Provider) ensureSchema(ctx context.Context) error {
	p.schemaMu.Lock()
	defer p.schemaMu.Unlock()
	if p.schemaDone {
		return nil
	}
	if !p.create {
		has, err := p.hasTable(ctx)
		if err != nil {
			return err
		}
		if !has || p.hasClock(ctx) != nil {
			return fmt.Errorf("%w: sql worker: %s has no table %s, or one without its column clock_ms: run `idforge migrate` with this worker URL (idforge serve never changes tables on a database server): %w",
				idforge.ErrInvalidArgument, p.held.Name, Table, errNotMigrated)
		}
		if err := p.useFence(ctx, false); err != nil {
			return err
		}
		p.schemaDone = true
		return nil
	}
	var err error
	// Two PostgreSQL sessions creating the same table at once can fail
	// although IF NOT EXISTS was given, and SQLite can refuse to wait for
	// another creator; the next attempt, a moment later, sees the table.
	for attempt := range 5 {
		if attempt > 0 {
			time.Sleep(time.Duration(attempt) * 20 * time.Millisecond)
		}
		if err = p.createSchema(ctx); err == nil {
			if err = p.useFence(ctx, true); err != nil {
				return err
			}
			p.schemaDone = true
			return nil
		}
		if ctx.Err() != nil || !schemaRace(err) {
			break
		}
	}
	return fmt.Errorf("create table %s: %w", Table, err)
}

// useFence has claims and renewals check the failover fence of a
// database server. With create it creates idforge_fence, recording the
// server, when the database has none (an existing one, such as the
// store's in the same database, is left alone); without, it uses the one
// `idforge migrate` created. An account that may not create it, or a
// database without one, goes unfenced, saying so in the log.
func (p *Provider) useFence(ctx context.Context, create bool) error {
	ctx, cancel := context.WithTimeout(ctx, p.held.Timeout)
	defer cancel()
	f, err := sqldb.NewFence(ctx, p.d, p.db)
	if err != nil {
		return fmt.Errorf("identify the database server: %w", err)
	}
	if f == nil {
		return nil
	}
	var made error
	if create {
		made = f.Create(ctx, p.db)
	}
	if made != nil || !create {
		if ok, _ := f.Exists(ctx, p.db); !ok {
			p.held.Logger.Warn("sql worker: no table "+sqldb.FenceTable+": worker IDs are not fenced against a fail-over; run `idforge migrate`", "err", made)
			return nil
		}
	}
	p.fence = f
	return nil
}

// schemaRace reports an error of creating the table while another
// session does the same (see ensureSchema).
func schemaRace(err error) bool {
	k := sqldb.KindOf(err)
	return k == sqldb.Duplicate || k == sqldb.Transient
}

func (p *Provider) createSchema(ctx context.Context) error {
	if err := p.exec(ctx, p.sql.create); err != nil {
		// An operator may have created the table for an account that
		// may not create tables (MySQL checks the privilege even when
		// the table exists).
		qctx, cancel := context.WithTimeout(ctx, p.held.Timeout)
		defer cancel()
		var n int64
		if schemaRace(err) || p.db.QueryRowContext(qctx, p.sql.probe).Scan(&n) != nil {
			return err
		}
	}
	if p.hasClock(ctx) != nil {
		// A table of a version before the clock check.
		if err := p.exec(ctx, p.sql.addClock); err != nil && p.hasClock(ctx) != nil {
			return err
		}
	}
	return p.exec(ctx, p.sql.lockRow)
}

// hasClock fails when idforge_workers lacks the column clock_ms.
func (p *Provider) hasClock(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, p.held.Timeout)
	defer cancel()
	var n int64
	return p.db.QueryRowContext(ctx, p.sql.probeClock).Scan(&n)
}

func (p *Provider) exec(ctx context.Context, q string, args ...any) error {
	ctx, cancel := context.WithTimeout(ctx, p.held.Timeout)
	defer cancel()
	_, err := p.db.ExecContext(ctx, q, args...)
	return err
}

// conn is what a claim runs on: a *sql.Tx, or a *sql.Conn inside BEGIN
// IMMEDIATE on SQLite.
type conn interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// claim runs the claim transaction, repeating it after deadlocks and
// serialization failures. id is −1 when every ID is held.
// want, when not −1, is the one ID to claim.
func (p *Provider) claim(ctx context.Context, max, want int64) (c holder.Claim, err error) {
	if err := p.ensureSchema(ctx); err != nil {
		return c, err
	}
	for attempt := 1; ; attempt++ {
		c, err = p.claimOnce(ctx, max, want)
		if err == nil || attempt == claimAttempts || ctx.Err() != nil || !sqldb.IsTransient(err) {
			return c, err
		}
		p.held.Logger.Debug("sql worker: claim transaction failed; repeating it", "attempt", attempt, "err", err)
	}
}

func (p *Provider) claimOnce(ctx context.Context, max, want int64) (c holder.Claim, err error) {
	ctx, cancel := context.WithTimeout(ctx, p.held.Timeout)
	defer cancel()
	if p.d.FileLock {
		return p.claimSQLite(ctx, max, want)
	}
	tx, err := p.db.BeginTx(ctx, nil)
	if err != nil {
		return c, err
	}
	defer tx.Rollback() // a no-op after Commit
	if c, err = p.pick(ctx, tx, max, want); err != nil {
		return c, err
	}
	return c, tx.Commit()
}

// claimSQLite runs the claim inside BEGIN IMMEDIATE, which takes the
// file's write lock at once (waiting for up to the busy timeout), so two
// processes never both read a row as free.
func (p *Provider) claimSQLite(ctx context.Context, max, want int64) (_ holder.Claim, err error) {
	c, err := p.db.Conn(ctx)
	if err != nil {
		return holder.Claim{}, err
	}
	defer c.Close()
	if _, err := c.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return holder.Claim{}, err
	}
	defer func() {
		if err == nil {
			_, err = c.ExecContext(ctx, "COMMIT")
		}
		if err != nil {
			// The context may be over: roll back without it, and drop
			// the connection if even that fails, so that no open
			// transaction goes back to the pool.
			rctx, cancel := context.WithTimeout(context.Background(), p.held.Timeout)
			defer cancel()
			if _, rerr := c.ExecContext(rctx, "ROLLBACK"); rerr != nil {
				c.Raw(func(any) error { return driver.ErrBadConn })
			}
		}
	}()
	return p.pick(ctx, c, max, want)
}

// row is one row of the table as a claim sees it.
type row struct {
	owner string
	stale bool
	last  int64
}

// pick chooses and takes the ID (want, unless −1) inside the claim
// transaction, and reads the clocks of the live peers.
func (p *Provider) pick(ctx context.Context, c conn, max, want int64) (_ holder.Claim, err error) {
	fail := func(err error) (holder.Claim, error) { return holder.Claim{}, err }
	if p.fence != nil {
		// On a promoted replica that lacks the last claims, a worker ID
		// a live node holds may look free: claim nothing until repaired.
		if err := p.fence.Check(ctx, c, p.held.Name); err != nil {
			return fail(err)
		}
	}
	if p.sql.lock != "" {
		var lockID int64
		if err := c.QueryRowContext(ctx, p.sql.lock).Scan(&lockID); err != nil {
			return fail(fmt.Errorf("lock row -1 of %s: %w", Table, err))
		}
	}
	rows, err := c.QueryContext(ctx, p.sql.scan, p.sql.staleArg, max)
	if err != nil {
		return fail(err)
	}
	present := map[int64]row{}
	mine := int64(-1)
	var peers []coord.Report
	for rows.Next() {
		var (
			n, stale int64
			r        row
			clock    coord.Report
		)
		if err := rows.Scan(&n, &r.owner, &stale, &r.last, &clock.At, &clock.Age); err != nil {
			rows.Close()
			return fail(err)
		}
		r.stale = stale != 0
		present[n] = r
		if r.owner == p.held.Owner && mine < 0 {
			mine = n
		} else if r.owner != "" && r.owner != p.held.Owner && !r.stale && clock.At > 0 {
			peers = append(peers, clock)
		}
	}
	if err := rows.Close(); err != nil {
		return fail(err)
	}
	if err := rows.Err(); err != nil {
		return fail(err)
	}
	id := mine
	if want >= 0 {
		if r, ok := present[want]; ok && r.owner != "" && r.owner != p.held.Owner && !r.stale {
			return holder.Claim{ID: -1, Taken: r.owner}, nil
		}
		id = want
	}
	for n := int64(0); id < 0 && n <= max; n++ {
		if r, ok := present[n]; !ok || r.owner == "" || r.stale {
			id = n
		}
	}
	if id < 0 {
		return holder.Claim{ID: -1}, nil
	}
	now := p.held.Clock.Now().UnixMilli()
	if r, ok := present[id]; ok {
		_, err = c.ExecContext(ctx, p.sql.claim, p.held.Owner, now, id)
		return holder.Claim{ID: id, Last: r.last, Peers: peers}, err
	}
	_, err = c.ExecContext(ctx, p.sql.insert, id, p.held.Owner, 0, now)
	return holder.Claim{ID: id, Peers: peers}, err
}

// release gives our row back, recording last.
func (p *Provider) release(ctx context.Context, id int64, last time.Time) error {
	if _, err := p.db.ExecContext(ctx, p.sql.release, p.held.Owner, coord.UnixMs(last), id); err != nil {
		return fmt.Errorf("sql worker: release worker ID %d: %w", id, err)
	}
	return nil
}

// renew keeps id's row for this node for another StaleAfter and records
// last on it.
func (p *Provider) renew(ctx context.Context, id int64, last time.Time) error {
	if err := p.heartbeat(ctx, id, coord.UnixMs(last)); err != nil {
		return fmt.Errorf("sql worker: renew worker ID %d: %w", id, err)
	}
	return nil
}

// heartbeat refreshes the heartbeat of our row. When the row is not ours
// any more it is taken back only if it is free (released, stale or absent)
// and no newer time than ours was recorded on it: then nobody issued with
// the ID after us, and this node stopped issuing before the row went
// stale. That is also how a lease resumed from the cache re-establishes
// its row. Otherwise heartbeat fails, wrapping idforge.ErrLeaseLost.
func (p *Provider) heartbeat(ctx context.Context, id, last int64) error {
	renew := p.sql.renew
	if p.fence != nil {
		// The renewal matches nothing on a server the fence does not
		// name, in the same round trip.
		renew += p.fence.Cond()
	}
	now := p.held.Clock.Now().UnixMilli()
	res, err := p.db.ExecContext(ctx, renew, last, now, id, p.held.Owner)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 1 {
		return nil
	}
	if p.fence != nil {
		// The database failed over: its rows may lack another node's
		// claim of this very ID, or forget ours, so the lease is lost.
		// `idforge keys repair` waits a full stale_after before the new
		// server is accepted, so every holder has stopped by then.
		if err := p.fence.Check(ctx, p.db, p.held.Name); err != nil {
			if errors.Is(err, idforge.ErrStoreFailedOver) {
				return fmt.Errorf("%w: %w", idforge.ErrLeaseLost, err)
			}
			return err
		}
	}
	var (
		r     row
		stale int64
	)
	err = p.db.QueryRowContext(ctx, p.sql.state, p.sql.staleArg, id).Scan(&r.owner, &stale, &r.last)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		if _, err := p.db.ExecContext(ctx, p.sql.insert, id, p.held.Owner, last, now); err != nil {
			return fmt.Errorf("%w: the row was deleted, and inserting it again failed: %v", idforge.ErrLeaseLost, err)
		}
		p.held.Logger.Info("sql worker: the row of the worker ID was deleted; it is inserted again", "worker", id)
		return nil
	case err != nil:
		return err
	case r.owner == p.held.Owner:
		// MySQL counts only changed rows unless clientFoundRows is set,
		// and the heartbeat already had this millisecond's value.
		return nil
	case r.owner != "" && stale == 0:
		return fmt.Errorf("%w: held by %q", idforge.ErrLeaseLost, r.owner)
	case r.last > last:
		return fmt.Errorf("%w: expired, and a holder since recorded the newer time %d", idforge.ErrLeaseLost, r.last)
	}
	res, err = p.db.ExecContext(ctx, p.sql.retake, p.held.Owner, last, now, id, p.sql.staleArg, last)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n != 1 {
		return fmt.Errorf("%w: expired, and another node took it meanwhile", idforge.ErrLeaseLost)
	}
	p.held.Logger.Info("sql worker: the row of the worker ID had gone stale or was released, and nobody took it; it is taken again",
		"worker", id, "previous_owner", r.owner)
	return nil
}
