package autoinc

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/sequence/internal/sqldb"
)

// RepairFailover puts an auto-increment table back into service after its
// server failed over to a replica that may lack the last inserts (the
// failover fence, idforge_fence, names another server, and Next leaves
// the table aside with an error wrapping idforge.ErrStoreFailedOver). It
// raises the table's next id above floor, an id (the high bits of a value:
// Split) at or above every id the table handed out, and then records the
// server it runs on in the fence. It returns the fence as it was, and an
// error wrapping idforge.ErrInvalidArgument for a floor below 1, an SQLite
// database or one without the fence.
func RepairFailover(ctx context.Context, db *sql.DB, table string, floor int64) (idforge.FailoverState, error) {
	d, err := sqldb.Wrap(db)
	switch {
	case err != nil:
		return idforge.FailoverState{}, fmt.Errorf("%w: autoinc repair: %v", idforge.ErrInvalidArgument, err)
	case floor < 1:
		return idforge.FailoverState{}, fmt.Errorf("%w: autoinc repair: floor %d is below 1", idforge.ErrInvalidArgument, floor)
	case !sqldb.ValidIdent(table):
		return idforge.FailoverState{}, fmt.Errorf("%w: autoinc repair: table name %q (want letters, digits and _)", idforge.ErrInvalidArgument, table)
	}
	f, err := d.Fence(ctx, false)
	if err != nil {
		return idforge.FailoverState{}, fmt.Errorf("autoinc repair on %s: %w", d.Where, err)
	}
	if f == nil {
		return idforge.FailoverState{}, fmt.Errorf("%w: autoinc repair: %s has no failover fence (SQLite, or not migrated)", idforge.ErrInvalidArgument, d.Where)
	}
	// The fence stays closed while the table is raised: nothing is
	// inserted meanwhile.
	if d.Dialect == sqldb.MySQL {
		// Never lowers it: MySQL keeps it above the largest id.
		var next sql.NullInt64
		err = db.QueryRowContext(ctx, `SELECT AUTO_INCREMENT FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?`, table).Scan(&next)
		if err == nil && next.Int64 <= floor {
			_, err = db.ExecContext(ctx, fmt.Sprintf("ALTER TABLE %s AUTO_INCREMENT = %d", d.Quote(table), floor+1))
		}
	} else {
		var seq string
		if err = db.QueryRowContext(ctx, `SELECT pg_get_serial_sequence($1, 'id')`, table).Scan(&seq); err == nil {
			_, err = db.ExecContext(ctx, `SELECT setval($1::regclass, $2) WHERE (SELECT last_value FROM `+seq+`) < $2`, seq, floor)
		}
	}
	if err != nil {
		return idforge.FailoverState{}, fmt.Errorf("autoinc repair: raise table %s on %s: %w", table, d.Where, err)
	}
	before, err := f.Accept(ctx, db)
	if err != nil {
		return idforge.FailoverState{}, fmt.Errorf("autoinc repair on %s: %w", d.Where, err)
	}
	return idforge.FailoverState{Recorded: before.Recorded, Current: before.Current}, nil
}
