package sqldb

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/idforge/idforge"
)

// FenceTable is the fail-over fence's table.
const FenceTable = "idforge_fence"

// Fence is the fail-over fence of one database on a server: the rule that
// keeps a promoted asynchronous replica, which may lack the last claims,
// from handing out again what the old primary gave. FenceTable holds one
// row naming the server claims are made on (Dialect.FenceServer);
// migrations create it and every claim checks, on the connection that
// makes it, that the row names the server it runs on. The row is
// replicated with everything else, so on a promoted replica it names the
// old primary, and every claim, by any node, is refused with an error
// wrapping idforge.ErrStoreFailedOver until `idforge keys repair` raises
// the keys above every value handed out and records the new server
// (Accept). It is safe for concurrent use.
type Fence struct {
	d *Dialect
	// server is an SQL expression naming the server of the connection
	// that evaluates it, as text.
	server string
}

// NewFence returns the fence of the database q reaches, or nil when the
// engine has none (SQLite: a file has no replica to fail over to).
func NewFence(ctx context.Context, d *Dialect, q Querier) (*Fence, error) {
	if d.FenceServer == nil {
		return nil, nil
	}
	server, err := d.FenceServer(ctx, q)
	if err != nil {
		return nil, err
	}
	return &Fence{d: d, server: server}, nil
}

// Fence returns the fence of db's database: nil for an engine without
// one, and nil when the database has no FenceTable and create is false
// (the schema belongs to administrators and was not migrated: db's users
// are then not fenced). With create it creates the table, recording the
// server it runs on, when it is missing.
func (db *DB) Fence(ctx context.Context, create bool) (*Fence, error) {
	f, err := NewFence(ctx, db.Dialect, db)
	if err != nil || f == nil {
		return nil, err
	}
	if create {
		return f, f.Create(ctx, db.DB)
	}
	if ok, err := f.Exists(ctx, db); err != nil || !ok {
		return nil, err
	}
	return f, nil
}

// Cond is a condition to AND into the WHERE clause of a claim's UPDATE
// (which must not update FenceTable): it holds only on the server the
// fence names.
func (f *Fence) Cond() string {
	return " AND EXISTS (SELECT 1 FROM " + FenceTable + " WHERE id = 1 AND server = " + f.server + ")"
}

// Exists tells whether the database has the fence's table.
func (f *Fence) Exists(ctx context.Context, q Querier) (bool, error) {
	var ok bool
	err := q.QueryRowContext(ctx, f.d.Rebind(f.d.TableExists), FenceTable).Scan(&ok)
	return ok, err
}

// Create creates the table when the database has none, recording the
// server it runs on, so that no session ever sees the table without its
// row (Dialect.CreateFence). An existing table is left alone: a table
// without its row is a fence whose row a fail-over lost, and must stay
// closed. It is idempotent and safe to run from several processes at
// once.
func (f *Fence) Create(ctx context.Context, db *sql.DB) error {
	ok, err := f.Exists(ctx, db)
	if err != nil || ok {
		return err
	}
	if err := f.d.CreateFence(ctx, db, f.server); err != nil {
		// Another process created it meanwhile.
		if ok, _ := f.Exists(ctx, db); ok {
			return nil
		}
		return err
	}
	return nil
}

// Read reads the fence on q, in one round trip.
func (f *Fence) Read(ctx context.Context, q Querier) (idforge.FailoverState, error) {
	var st idforge.FailoverState
	var recorded sql.NullString
	err := q.QueryRowContext(ctx, "SELECT (SELECT server FROM "+FenceTable+" WHERE id = 1), "+f.server).Scan(&recorded, &st.Current)
	st.Recorded = recorded.String
	return st, err
}

// Check reads the fence on q and returns nil when claims may be made
// there, or an error wrapping idforge.ErrStoreFailedOver that names both
// servers and how to repair. db names the database in it.
func (f *Fence) Check(ctx context.Context, q Querier, db string) error {
	st, err := f.Read(ctx, q)
	switch {
	case err != nil:
		return err
	case !st.FailedOver():
		return nil
	case st.Recorded == "":
		return fmt.Errorf("%w: %s: %s has no row (a fail-over lost it?); claims were made on another server "+
			"than %s: run `idforge keys repair --floor N` with N above every ID handed out", idforge.ErrStoreFailedOver, db, FenceTable, st.Current)
	}
	return fmt.Errorf("%w: %s: claims were made on %s, but this is %s (a replica promoted after a fail-over may lack the last claims): "+
		"run `idforge keys repair --floor N` with N above every ID handed out", idforge.ErrStoreFailedOver, db, st.Recorded, st.Current)
}

// Accept records the server q runs on as the one claims are made on, and
// returns the fence as it was. Run it in the transaction that raises the
// keys above every value handed out.
func (f *Fence) Accept(ctx context.Context, q Querier) (idforge.FailoverState, error) {
	st, err := f.Read(ctx, q)
	if err != nil {
		return st, err
	}
	_, err = q.ExecContext(ctx, f.d.Upsert("INSERT INTO "+FenceTable+" (id, server, accepted_at) VALUES (1, "+f.server+", CURRENT_TIMESTAMP)",
		"id", "server", "accepted_at"))
	return st, err
}
