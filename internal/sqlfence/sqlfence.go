// Package sqlfence owns the failover fence of idforge's tables on a
// database server (MySQL, MariaDB, PostgreSQL): the one rule that keeps a
// promoted asynchronous replica, which may lack the last segment or
// worker-ID claims, from handing out again what the old primary gave.
//
// The table idforge_fence holds one row naming the server claims are made
// on: MariaDB's @@server_id, MySQL's @@server_id and @@server_uuid,
// PostgreSQL's system identifier and current timeline (a promotion starts
// a new timeline). Migrate records it. Every claim checks, on the
// connection that makes it, that the row names the server it runs on.
// The row is replicated with everything else, so on a promoted replica it
// names the old primary, and every claim, by any node, old or new, is
// refused with an error wrapping idforge.ErrStoreFailedOver until
// `idforge keys repair` raises the keys above every ID handed out and
// records the new server (Accept).
//
// store/internal/sqlstore (segments) and worker/sql (worker-ID leases)
// use it.
package sqlfence

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/idforge/idforge"
)

// Table is the fence's table.
const Table = "idforge_fence"

// Flavor is the SQL of a server family.
type Flavor string

// The flavors with a fence. SQLite, a file with no replicas, has none.
const (
	MySQL    Flavor = "mysql" // MySQL and MariaDB
	Postgres Flavor = "postgres"
)

// Querier is a *sql.DB, *sql.Conn or *sql.Tx.
type Querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Fence is the fence of one database: the SQL that names the server a
// connection is on. It is safe for concurrent use.
type Fence struct {
	flavor Flavor
	// server is an SQL expression naming the server of the connection
	// that evaluates it, as text.
	server string
}

// The expressions naming a server. pg_current_wal_lsn fails on a standby,
// which cannot take a claim anyway; its WAL file name starts with the
// timeline that a promotion changes at once (pg_control_checkpoint shows
// it only after the next checkpoint).
const (
	mariaDBServer  = `CONCAT('mariadb server_id=', @@server_id)`
	mySQLServer    = `CONCAT('mysql server_id=', @@server_id, ' server_uuid=', @@server_uuid)`
	postgresServer = `('postgres system_identifier=' || (SELECT system_identifier FROM pg_control_system())::text` +
		` || ' timeline=' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))`
)

// New returns the fence of the database q reaches: for MySQL it asks the
// server whether it is MariaDB, whose @@server_uuid does not exist.
func New(ctx context.Context, q Querier, f Flavor) (*Fence, error) {
	switch f {
	case Postgres:
		return &Fence{flavor: f, server: postgresServer}, nil
	case MySQL:
		var version string
		if err := q.QueryRowContext(ctx, `SELECT VERSION()`).Scan(&version); err != nil {
			return nil, err
		}
		expr := mySQLServer
		if strings.Contains(strings.ToLower(version), "mariadb") {
			expr = mariaDBServer
		}
		return &Fence{flavor: f, server: expr}, nil
	}
	return nil, fmt.Errorf("sqlfence: unknown flavor %q", f)
}

// Cond is a condition to AND into the WHERE clause of a claim's UPDATE
// (which must not update Table): it holds only on the server the fence
// names.
func (f *Fence) Cond() string {
	return " AND EXISTS (SELECT 1 FROM " + Table + " WHERE id = 1 AND server = " + f.server + ")"
}

// Exists tells whether the database has the fence's table.
func (f *Fence) Exists(ctx context.Context, q Querier) (bool, error) {
	query := `SELECT EXISTS (SELECT 1 FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = '` + Table + `')`
	if f.flavor == Postgres {
		query = `SELECT to_regclass('` + Table + `') IS NOT NULL`
	}
	var ok bool
	err := q.QueryRowContext(ctx, query).Scan(&ok)
	return ok, err
}

// Create creates the table when the database has none, recording the
// server it runs on, so that no session ever sees the table without its
// row: PostgreSQL creates and fills it in one transaction, MySQL in one
// CREATE TABLE … SELECT (whose metadata lock makes readers wait). An
// existing table is left alone: a table without its row is a fence whose
// row a fail-over lost, and must stay closed. It is idempotent and safe to
// run from several processes at once.
func (f *Fence) Create(ctx context.Context, db *sql.DB) error {
	ok, err := f.Exists(ctx, db)
	if err != nil || ok {
		return err
	}
	if f.flavor == Postgres {
		err = inTx(ctx, db, "CREATE TABLE "+Table+` (
  id          integer      PRIMARY KEY,
  server      varchar(255) NOT NULL,
  accepted_at timestamptz  NOT NULL DEFAULT CURRENT_TIMESTAMP
)`, "INSERT INTO "+Table+" (id, server) VALUES (1, "+f.server+")")
	} else {
		_, err = db.ExecContext(ctx, "CREATE TABLE "+Table+` (
  id          INT          NOT NULL PRIMARY KEY,
  server      VARCHAR(255) NOT NULL,
  accepted_at TIMESTAMP    NOT NULL DEFAULT CURRENT_TIMESTAMP
) ENGINE=InnoDB SELECT 1 AS id, `+f.server+" AS server")
	}
	if err != nil {
		// Another process created it meanwhile.
		if ok, _ := f.Exists(ctx, db); ok {
			return nil
		}
	}
	return err
}

// inTx runs statements in one transaction.
func inTx(ctx context.Context, db *sql.DB, stmts ...string) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() // a no-op after Commit
	for _, q := range stmts {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// State is what the fence records and what the server is.
type State struct {
	// Recorded names the server the claims were made on; empty when the
	// table has no row.
	Recorded string
	// Current names the server the query ran on.
	Current string
}

// Open reports whether claims may be made on the server.
func (s State) Open() bool { return s.Recorded != "" && s.Recorded == s.Current }

// Read reads the fence on q, in one round trip.
func (f *Fence) Read(ctx context.Context, q Querier) (State, error) {
	var st State
	var recorded sql.NullString
	err := q.QueryRowContext(ctx, "SELECT (SELECT server FROM "+Table+" WHERE id = 1), "+f.server).Scan(&recorded, &st.Current)
	st.Recorded = recorded.String
	return st, err
}

// Check reads the fence on q and returns nil when claims may be made
// there, or an error wrapping idforge.ErrStoreFailedOver that names both
// servers and how to repair. db names the database in it.
func (f *Fence) Check(ctx context.Context, q Querier, db string) error {
	st, err := f.Read(ctx, q)
	if err != nil {
		return err
	}
	return st.Err(db)
}

// Err returns nil when the fence is open, otherwise the error Check
// returns.
func (s State) Err(db string) error {
	switch {
	case s.Open():
		return nil
	case s.Recorded == "":
		return fmt.Errorf("%w: %s: %s has no row (a fail-over lost it?); claims were made on another server "+
			"than %s: run `idforge keys repair --floor N` with N above every ID handed out", idforge.ErrStoreFailedOver, db, Table, s.Current)
	}
	return fmt.Errorf("%w: %s: claims were made on %s, but this is %s (a replica promoted after a fail-over may lack the last claims): "+
		"run `idforge keys repair --floor N` with N above every ID handed out", idforge.ErrStoreFailedOver, db, s.Recorded, s.Current)
}

// Accept records the server q runs on as the one claims are made on, and
// returns the fence as it was. Run it in the transaction that raises the
// keys above every ID handed out.
func (f *Fence) Accept(ctx context.Context, q Querier) (State, error) {
	st, err := f.Read(ctx, q)
	if err != nil {
		return st, err
	}
	upsert := "INSERT INTO " + Table + " (id, server, accepted_at) VALUES (1, " + f.server + ", CURRENT_TIMESTAMP)" +
		" ON DUPLICATE KEY UPDATE server = VALUES(server), accepted_at = VALUES(accepted_at)"
	if f.flavor == Postgres {
		upsert = "INSERT INTO " + Table + " (id, server, accepted_at) VALUES (1, " + f.server + ", CURRENT_TIMESTAMP)" +
			" ON CONFLICT (id) DO UPDATE SET server = EXCLUDED.server, accepted_at = EXCLUDED.accepted_at"
	}
	_, err = q.ExecContext(ctx, upsert)
	return st, err
}
