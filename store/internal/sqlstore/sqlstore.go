// Package sqlstore is the one idforge.Store over database/sql that
// store/mysql, store/postgres and store/sqlite are made of: it keeps
// segment keys in Leaf's leaf_alloc table, the other keys in idforge_keys
// and serial definitions (idforge.SerialStore) in idforge_serials, and
// owns every rule about those tables.
//
// A backend is a Backend (its engine's sqldb.Dialect, its SQL text, how
// it locks a key name and creates the tables) plus its Config and URL
// parsing: it hands Open its pools and its Backend, and its Store type
// embeds this Store, whose methods are its methods.
package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/dsn"
	"github.com/idforge/idforge/internal/sqldb"
	"github.com/idforge/idforge/store"
	"github.com/idforge/idforge/store/internal/claim"
)

// Settings are the fields of a backend's Config besides its driver's
// configuration (sqldb.Settings documents them); store/sqlite sets them
// itself, with a negative Timeout meaning no bound but the context.
type Settings = sqldb.Settings

// Backend is what one SQL backend gives the Store.
type Backend struct {
	// Dialect is the engine's: its name starts the store's messages, and
	// it says whether to prepare the busiest statements (the claims, the
	// read of a row, the key lookup: PrepareHot) once on their pool,
	// whether a claim is one UPDATE … RETURNING max_id, step (Returning;
	// otherwise Leaf's UPDATE then SQL.Read in one transaction), what
	// errors mean and whether claims check the fail-over fence.
	*sqldb.Dialect
	// ClaimInsertID says that SQL.ClaimStep sets max_id through MySQL's
	// LAST_INSERT_ID(expr), so that a claim of a given step is that one
	// autocommitted statement, the new max_id its insert ID: no row lock
	// is held while the node waits on the network, so a node frozen in
	// the middle of a claim (SIGSTOP, a stalled VM) holds up no other
	// node's claims.
	ClaimInsertID bool
	// SQL is the backend's text of the statements its engine writes its
	// own way; Open fills in the others (Statements.fill).
	SQL Statements
	// UpdateTime is how statements read update_time as an instant:
	// "update_time" when empty.
	UpdateTime string
	// WithNameLock runs fn while holding a lock on a key name that every
	// process using the database respects, and gives fn the connection
	// or transaction that holds it. CreateKey relies on it so that the
	// check that a name is free in both tables and the insert into one of
	// them cannot interleave with another creator of that name. When the
	// lock comes with a transaction, WithNameLock commits it if fn
	// succeeds. It returns the errors of the driver and of fn as they are.
	WithNameLock func(ctx context.Context, db *sql.DB, name string, fn func(Querier) error) error
	// CreateTables creates leaf_alloc, idforge_keys and idforge_serials
	// where they do not exist, leaving existing tables and their rows
	// alone (Migrate).
	CreateTables func(ctx context.Context, db *sql.DB) error
	// CreateTablesOnOpen has Open run CreateTables before it checks the
	// tables: an embedded database has no administrator to run
	// `idforge migrate`. A server's schema belongs to its administrators,
	// so Open on a server only checks.
	CreateTablesOnOpen bool
}

// Statements are a backend's SQL. Each statement takes the arguments
// listed, in that order, one per placeholder. A backend gives Columns,
// the claims, Read, Return, Raise, KeySegment and KeysSegment; the others
// every engine writes alike (common).
type Statements struct {
	// Columns lists (table name, lower-case column name) of leaf_alloc,
	// idforge_keys and idforge_serials, and of idforge_fence when the
	// dialect has a fence, as the other statements find those tables.
	Columns string
	// Ping checks the server and that leaf_alloc is readable; one boolean.
	Ping string

	// ClaimStored adds the row's step to max_id (arguments: key);
	// ClaimStep adds a step the caller gives, known to be positive (step,
	// key, step). Both must match no row, rather than fail, when the step
	// is not positive or max_id would pass the largest int64. See
	// Dialect.Returning for what they return.
	ClaimStored, ClaimStep string
	// Read reads max_id and step (key), each NULL when the row holds
	// something other than an integer.
	Read string
	// Return is ReturnSegment's compare-and-set, setting max_id to from
	// where it is to (from, key, to). Its affected-row count must count a
	// matched row also when from == to.
	Return string
	// MaxIDs reads biz_tag and max_id of every leaf_alloc row, locking
	// them (FOR UPDATE) where the server can; Raise sets a key's max_id
	// to floor where it is lower (floor, key, floor). The fail-over repair
	// uses them in one transaction. Engines without a fence leave them
	// empty.
	MaxIDs, Raise string
	// Exists counts leaf_alloc's rows for a key (key).
	Exists string
	// Strategy reads the strategy of an idforge_keys row (key).
	Strategy string

	// KeySegment (key) and KeysSegment read biz_tag, max_id, step (as
	// Read does), the description and update_time from leaf_alloc; %s is
	// the description column, quoted. KeyOther (key) and KeysOther read
	// biz_tag, strategy, description and update_time from idforge_keys.
	KeySegment, KeysSegment, KeyOther, KeysOther string
	// NameTaken tells, as one boolean, whether leaf_alloc has a name
	// (name); NameTakenKeys whether either table has it (name, name).
	NameTaken, NameTakenKeys string
	// InsertSegment adds a leaf_alloc row (name, max_id, step,
	// description; %s is the description column, quoted); InsertOther an
	// idforge_keys row (name, strategy, description).
	InsertSegment, InsertOther string
	// UpdateSegment sets a leaf_alloc row's step and description (step,
	// description, key; %s is the description column, quoted), never its
	// max_id; UpdateOther an idforge_keys row's description
	// (description, key). Their affected-row counts must count a
	// matched row also when nothing changes.
	UpdateSegment, UpdateOther string

	// Serial (name) and Serials read name, template, time_zone,
	// description and update_time from idforge_serials; InsertSerial adds
	// a row (name, template, time_zone, description).
	Serial, Serials, InsertSerial string

	// Definition (kind, name) and Definitions (kind) read kind,
	// name, spec, description, retired (a boolean) and update_time;
	// InsertDefinition adds a live row (kind, name, spec, description);
	// UpdateDefinition sets spec and description of a live row (spec,
	// description, kind, name); RetireDefinition marks a row retired
	// (kind, name). Both set update_time.
	Definition, Definitions                              string
	InsertDefinition, UpdateDefinition, RetireDefinition string
}

// common are the statements every engine writes alike, with '?'
// placeholders, {t} for how the engine reads update_time
// (Backend.UpdateTime) and {for_update} for its row lock.
var common = Statements{
	Ping:     "SELECT EXISTS (SELECT 1 FROM leaf_alloc)",
	MaxIDs:   "SELECT biz_tag, max_id FROM leaf_alloc{for_update}",
	Exists:   "SELECT COUNT(*) FROM leaf_alloc WHERE biz_tag = ?",
	Strategy: "SELECT strategy FROM idforge_keys WHERE biz_tag = ?",

	KeyOther:  "SELECT biz_tag, strategy, description, {t} FROM idforge_keys WHERE biz_tag = ?",
	KeysOther: "SELECT biz_tag, strategy, description, {t} FROM idforge_keys",
	NameTaken: "SELECT EXISTS (SELECT 1 FROM leaf_alloc WHERE biz_tag = ?)",
	NameTakenKeys: `SELECT EXISTS (SELECT 1 FROM leaf_alloc WHERE biz_tag = ?)
    OR EXISTS (SELECT 1 FROM idforge_keys WHERE biz_tag = ?)`,

	InsertSegment: "INSERT INTO leaf_alloc (biz_tag, max_id, step, %s, update_time) VALUES (?, ?, ?, ?, CURRENT_TIMESTAMP)",
	InsertOther:   "INSERT INTO idforge_keys (biz_tag, strategy, description, update_time) VALUES (?, ?, ?, CURRENT_TIMESTAMP)",
	UpdateSegment: "UPDATE leaf_alloc SET step = ?, %s = ?, update_time = CURRENT_TIMESTAMP WHERE biz_tag = ?",
	UpdateOther:   "UPDATE idforge_keys SET description = ?, update_time = CURRENT_TIMESTAMP WHERE biz_tag = ?",

	Serial:       "SELECT name, template, time_zone, description, {t} FROM idforge_serials WHERE name = ?",
	Serials:      "SELECT name, template, time_zone, description, {t} FROM idforge_serials",
	InsertSerial: "INSERT INTO idforge_serials (name, template, time_zone, description, update_time) VALUES (?, ?, ?, ?, CURRENT_TIMESTAMP)",

	// retired <> FALSE reads a boolean also where it is a number (MySQL,
	// SQLite).
	Definition:  "SELECT kind, name, spec, description, retired <> FALSE, {t} FROM idforge_definitions WHERE kind = ? AND name = ?",
	Definitions: "SELECT kind, name, spec, description, retired <> FALSE, {t} FROM idforge_definitions WHERE kind = ?",
	InsertDefinition: `INSERT INTO idforge_definitions (kind, name, spec, description, retired, update_time)
    VALUES (?, ?, ?, ?, FALSE, CURRENT_TIMESTAMP)`,
	UpdateDefinition: `UPDATE idforge_definitions SET spec = ?, description = ?, update_time = CURRENT_TIMESTAMP
    WHERE kind = ? AND name = ? AND NOT retired`,
	RetireDefinition: "UPDATE idforge_definitions SET retired = TRUE, update_time = CURRENT_TIMESTAMP WHERE kind = ? AND name = ?",
}

// fill returns st with the statements of common set where st leaves them
// empty, in d's words.
func (st Statements) fill(d *Backend) Statements {
	r := strings.NewReplacer("{t}", cmp.Or(d.UpdateTime, "update_time"), "{for_update}", d.ForUpdate())
	dst, src := reflect.ValueOf(&st).Elem(), reflect.ValueOf(common)
	for i := range dst.NumField() {
		if f := dst.Field(i); f.String() == "" {
			f.SetString(d.Rebind(r.Replace(src.Field(i).String())))
		}
	}
	return st
}

// Querier is what Backend.WithNameLock hands out: a *sql.Conn or *sql.Tx.
type Querier = sqldb.Querier

// Pools are the connection pools a Store runs on.
type Pools struct {
	// Write runs every statement that writes, and the others too when
	// Read is nil. Open configures it with the Settings.
	Write *sql.DB
	// Read, when set, runs the statements that only read: a pool of
	// read-only connections the backend has configured itself
	// (store/sqlite's, beside its single writer connection).
	Read *sql.DB
}

// Store is the idforge.Store of a SQL backend, which embeds it. It is
// safe for concurrent use, and any number of Stores, in any number of
// processes, may share one database. Create it with Open and release it
// with Close.
type Store struct {
	db    *sql.DB // writes, and reads when there is no rdb of its own
	rdb   *sql.DB // reads
	d     *Backend
	sql   Statements // d.SQL, filled
	life  claim.Life // DB is user@host:port/database or a file's path; no password
	retry claim.Retry

	// sch is nil until leaf_alloc has been seen (Open, or later calls
	// after a Migrate elsewhere when opened with ForMigrate); loadMu
	// serialises loading it.
	sch    atomic.Pointer[schema]
	loadMu sync.Mutex
	// hasKeys records that idforge_keys exists. Without it (a plain Leaf
	// database) only segment keys are available.
	hasKeys atomic.Bool
	// hasSerials records that idforge_serials exists. Without it (a
	// database not migrated since serials were added) SerialStore calls
	// fail, saying to run `idforge migrate`.
	hasSerials atomic.Bool
	// hasDefs records that idforge_definitions exists; without it
	// DefinitionStore calls fail, saying to run `idforge migrate`.
	hasDefs atomic.Bool
	// hasGapless records that idforge_gapless and idforge_reservations
	// exist; without them gap-free serials fail, saying to run
	// `idforge migrate`.
	hasGapless atomic.Bool
	// fence is the failover fence when the engine has one (nil
	// otherwise); claims check it when the database has its table.
	fence *sqldb.Fence
	// createdOnOpen are the tables Open created (Backend.CreateTablesOnOpen),
	// for MigrateTables to report.
	createdOnOpen []string
}

// Every backend's Store, embedding this one, is each of these.
var (
	_ store.Backend            = (*Store)(nil)
	_ idforge.FailoverRepairer = (*Store)(nil)
	_ idforge.KeyUpdater       = (*Store)(nil)
)

// schema is what Open learnt about leaf_alloc: the statements naming its
// description column, and those prepared for it. It never changes once
// loaded: Migrate does not alter an existing leaf_alloc.
type schema struct {
	// fenced says that the claims check the failover fence.
	fenced                            bool
	claimStored, claimStep, read, key statement
	keysSQL, insertSegmentSQL         string
	updateSegmentSQL                  string
}

// statement is one of the statements Dialect.PrepareHot is about:
// prepared when the engine asks for it, otherwise run as text.
type statement struct {
	text     string
	prepared *sql.Stmt
}

// query runs the statement on q, the pool or a transaction.
func (st statement) query(ctx context.Context, q Querier, args ...any) (*sql.Rows, error) {
	if st.prepared == nil {
		return q.QueryContext(ctx, st.text, args...)
	}
	return st.on(ctx, q).QueryContext(ctx, args...)
}

// queryRow runs the statement on q, the pool or a transaction.
func (st statement) queryRow(ctx context.Context, q Querier, args ...any) *sql.Row {
	if st.prepared == nil {
		return q.QueryRowContext(ctx, st.text, args...)
	}
	return st.on(ctx, q).QueryRowContext(ctx, args...)
}

// exec runs the statement on q, the pool or a transaction.
func (st statement) exec(ctx context.Context, q Querier, args ...any) (sql.Result, error) {
	if st.prepared == nil {
		return q.ExecContext(ctx, st.text, args...)
	}
	return st.on(ctx, q).ExecContext(ctx, args...)
}

// on returns the prepared statement for q: bound to the transaction when
// q is one.
func (st statement) on(ctx context.Context, q Querier) *sql.Stmt {
	if tx, ok := q.(*sql.Tx); ok {
		return tx.StmtContext(ctx, st.prepared)
	}
	return st.prepared
}

// Open returns a Store using pools, whose Write pool it configures with
// set (whose defaults must have been applied: Settings.WithDefaults), once
// the database answers and leaf_alloc, idforge_keys and idforge_serials,
// where they exist, are the tables idforge expects (created first when
// the backend says so: Backend.CreateTablesOnOpen). Without leaf_alloc it
// fails with an error saying to run `idforge migrate`, unless
// set.ForMigrate; without either of the others it opens. name, which must
// not hold a password, names the database in messages. When Open fails it
// closes the pools.
func Open(ctx context.Context, pools Pools, name string, set Settings, d *Backend) (*Store, error) {
	s := &Store{
		sql:  d.SQL.fill(d),
		db:   pools.Write,
		rdb:  cmp.Or(pools.Read, pools.Write),
		d:    d,
		life: claim.Life{Backend: d.Name, DB: name, Timeout: set.Timeout, Log: set.Logger},
	}
	s.retry = claim.Retry{Life: &s.life, Thing: "row", Retries: max(set.Retries, 0),
		Classify: func(err error) (bool, bool) { return sqldb.IsTransient(err), true }}
	set.Apply(s.db)

	if err := s.open(ctx, set.ForMigrate); err != nil {
		s.closeDB()
		return nil, err
	}
	s.life.Log.Debug(d.Name+" store opened", "db", s.life.DB, "leaf_alloc", s.sch.Load() != nil,
		"idforge_keys", s.hasKeys.Load(), "idforge_serials", s.hasSerials.Load())
	return s, nil
}

// ServerSettings checks what every server backend (store/mysql,
// store/postgres) asks of its Config, its driver's configuration drv and
// its Settings, and returns set with its defaults applied. Its errors
// wrap idforge.ErrInvalidArgument and start with backend.
func ServerSettings[D any](backend string, drv *D, set Settings) (Settings, error) {
	if drv == nil {
		return set, fmt.Errorf("%w: %s: Config.Driver is nil", idforge.ErrInvalidArgument, backend)
	}
	return set.WithDefaults(backend)
}

// OpenServer is Open for a server backend: one pool, db, and no password
// in any error.
func OpenServer(ctx context.Context, db *sql.DB, name, password string, set Settings, d *Backend) (*Store, error) {
	s, err := Open(ctx, Pools{Write: db}, name, set, d)
	if err != nil {
		return nil, dsn.Scrub(err, password)
	}
	return s, nil
}

func (s *Store) open(ctx context.Context, forMigrate bool) error {
	ctx, cancel := s.life.Context(ctx)
	defer cancel()
	if err := s.db.PingContext(ctx); err != nil {
		return s.life.Wrap(ctx, err, "connect to "+s.life.DB)
	}
	f, err := sqldb.NewFence(ctx, s.d.Dialect, s.db)
	if err != nil {
		return s.life.Wrap(ctx, err, "identify the server of "+s.life.DB)
	}
	s.fence = f
	if s.d.CreateTablesOnOpen {
		missing, err := s.missingTables(ctx)
		if err != nil {
			return err
		}
		if err := cmp.Or(s.d.CreateTables(ctx, s.db), s.createGapless(ctx)); err != nil {
			return s.life.Wrap(ctx, err, "create tables in "+s.life.DB)
		}
		s.createdOnOpen = missing
	}
	_, err = s.load(ctx)
	return claim.OpenErr(err, forMigrate)
}

// ready returns the schema, loading it if a Migrate (here or elsewhere)
// has created leaf_alloc since Open.
func (s *Store) ready(ctx context.Context) (*schema, error) {
	if sch := s.sch.Load(); sch != nil {
		return sch, nil
	}
	return s.load(ctx)
}

// readyErr is ready for callers that need only its error.
func (s *Store) readyErr(ctx context.Context) error {
	_, err := s.ready(ctx)
	return err
}

// load inspects leaf_alloc, idforge_keys and idforge_serials, checks that
// they have the columns idforge uses, and builds (and, if the dialect says
// so, prepares) the statements on leaf_alloc. It returns a
// *claim.NotMigrated when there is no leaf_alloc.
func (s *Store) load(ctx context.Context) (*schema, error) {
	s.loadMu.Lock()
	defer s.loadMu.Unlock()
	cols, err := s.columns(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.checkColumns("idforge_keys", cols["idforge_keys"], "biz_tag", "strategy", "description", "update_time"); err != nil {
		return nil, err
	}
	if err := s.checkColumns("idforge_serials", cols["idforge_serials"], "name", "template", "time_zone", "description", "update_time"); err != nil {
		return nil, err
	}
	if err := s.checkColumns(DefinitionsTable, cols[DefinitionsTable], "kind", "name", "spec", "description", "retired", "update_time"); err != nil {
		return nil, err
	}
	s.hasKeys.Store(len(cols["idforge_keys"]) > 0)
	s.hasSerials.Store(len(cols["idforge_serials"]) > 0)
	s.hasDefs.Store(len(cols[DefinitionsTable]) > 0)
	if sch := s.sch.Load(); sch != nil {
		return sch, nil
	}
	leaf := cols["leaf_alloc"]
	if len(leaf) == 0 {
		return nil, &claim.NotMigrated{Backend: s.d.Name, DB: s.life.DB, Missing: "table leaf_alloc", Kind: "tables"}
	}
	// Older copies of Leaf's DDL name the description column desc.
	desc := s.d.Quote("description")
	if !leaf["description"] && leaf["desc"] {
		desc = s.d.Quote("desc")
		leaf["description"] = true
	}
	if err := s.checkColumns("leaf_alloc", leaf, "biz_tag", "max_id", "step", "update_time", "description"); err != nil {
		return nil, err
	}
	q := &s.sql
	sch := &schema{
		keysSQL:          fmt.Sprintf(q.KeysSegment, desc),
		insertSegmentSQL: fmt.Sprintf(q.InsertSegment, desc),
		updateSegmentSQL: fmt.Sprintf(q.UpdateSegment, desc),
	}
	claimStored, claimStep := q.ClaimStored, q.ClaimStep
	if s.fence != nil {
		if sch.fenced = len(cols[sqldb.FenceTable]) > 0; sch.fenced {
			claimStored, claimStep = fenced(claimStored, s.fence), fenced(claimStep, s.fence)
		} else {
			s.life.Log.Warn(s.d.Name+": no table "+sqldb.FenceTable+": claims are not fenced against a fail-over to a replica that lacks the last of them; run `idforge migrate`, then restart the nodes",
				"db", s.life.DB)
		}
	}
	// The claims and Read, which runs in a claim's transaction, go to
	// the writer; the key lookup to the readers.
	prepare := func(db *sql.DB, text string) statement {
		st := statement{text: text}
		if err != nil || !s.d.PrepareHot {
			return st
		}
		if st.prepared, err = db.PrepareContext(ctx, text); err != nil {
			err = s.life.Wrap(ctx, err, "prepare statements")
		}
		return st
	}
	sch.claimStored = prepare(s.db, claimStored)
	sch.claimStep = prepare(s.db, claimStep)
	sch.read = prepare(s.db, q.Read)
	sch.key = prepare(s.rdb, fmt.Sprintf(q.KeySegment, desc))
	if err != nil {
		sch.close()
		return nil, err
	}
	s.sch.Store(sch)
	return sch, nil
}

// fenced returns a claim's UPDATE that matches nothing unless the fence
// names the server it runs on: the fence's condition goes at the end of
// its WHERE clause, before RETURNING if it has one.
func fenced(claim string, f *sqldb.Fence) string {
	if i := strings.LastIndex(claim, "\nRETURNING"); i >= 0 {
		return claim[:i] + f.Cond() + claim[i:]
	}
	return claim + f.Cond()
}

// columns returns the lower-case column names of leaf_alloc,
// idforge_keys and idforge_serials, by table; an absent table has no
// entry.
func (s *Store) columns(ctx context.Context) (map[string]map[string]bool, error) {
	rows, err := s.db.QueryContext(ctx, s.sql.Columns)
	if err != nil {
		return nil, s.life.Wrap(ctx, err, "inspect tables")
	}
	defer rows.Close()
	cols := map[string]map[string]bool{}
	for rows.Next() {
		var table, col string
		if err := rows.Scan(&table, &col); err != nil {
			return nil, s.life.Wrap(ctx, err, "inspect tables")
		}
		if cols[table] == nil {
			cols[table] = map[string]bool{}
		}
		cols[table][col] = true
	}
	if err := rows.Err(); err != nil {
		return nil, s.life.Wrap(ctx, err, "inspect tables")
	}
	return cols, nil
}

// checkColumns reports the columns of want that an existing table lacks.
func (s *Store) checkColumns(table string, have map[string]bool, want ...string) error {
	if len(have) == 0 {
		return nil
	}
	var missing []string
	for _, c := range want {
		if !have[c] {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s: table %s in %s lacks column(s) %s; it is not the table idforge expects",
			s.d.Name, table, s.life.DB, strings.Join(missing, ", "))
	}
	return nil
}

// keysTable reports whether idforge_keys exists (see seen).
func (s *Store) keysTable(ctx context.Context) (bool, error) { return s.seen(ctx, s.keysT()) }

// keysT is idforge_keys, which a plain Leaf database lacks: it then
// serves segment keys only.
func (s *Store) keysT() optionalTable {
	return optionalTable{&s.hasKeys, "idforge_keys", "keys other than segment keys"}
}

// Ping reports whether the database answers and leaf_alloc can be read.
// It returns an error wrapping idforge.ErrClosed after Close.
func (s *Store) Ping(ctx context.Context) error {
	return s.life.Ping(ctx, s.readyErr, func(ctx context.Context) error {
		var rows bool
		return s.rdb.QueryRowContext(ctx, s.sql.Ping).Scan(&rows)
	})
}

// Close closes the statements and connections. It is idempotent: later
// calls return the first call's result. Calls made after Close return an
// error wrapping idforge.ErrClosed.
func (s *Store) Close() error {
	return s.life.Close(s.closeDB)
}

func (s *Store) closeDB() error {
	var errs []error
	if sch := s.sch.Load(); sch != nil {
		errs = append(errs, sch.close())
	}
	if s.rdb != s.db {
		errs = append(errs, s.rdb.Close())
	}
	return errors.Join(append(errs, s.db.Close())...)
}

func (sch *schema) close() error {
	var errs []error
	for _, st := range []statement{sch.claimStored, sch.claimStep, sch.read, sch.key} {
		if st.prepared != nil {
			errs = append(errs, st.prepared.Close())
		}
	}
	return errors.Join(errs...)
}
