package sqlrow

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"net/url"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/dsn"
	"github.com/idforge/idforge/internal/sqldb"
	"github.com/idforge/idforge/sequence"
)

// Repair says how RepairFailover raises the rows of a database.
type Repair struct {
	// SourceTable and CounterTable are the tables of Sources and
	// CounterStores (DefaultSourceTable and DefaultCounterTable when
	// empty); a table the database lacks is skipped.
	SourceTable, CounterTable string
	// Floor is a value above every value a Source of the database ever
	// handed out: every row of SourceTable is raised to hold at least
	// Floor, so the next value is above it. It must be at least 1.
	Floor int64
	// CounterFloor is a mark at or above every count a CounterStore of the
	// database ever made: every row of CounterTable is raised to at least
	// it (a row of an earlier period moves to CounterFloor's period and
	// count, a row of the same period to at least its count). A zero
	// Stamp keeps every row's period and raises its count to at least
	// CounterFloor.N. It is required (N at least 1) when CounterTable has
	// rows.
	CounterFloor sequence.Mark
	// NoAccept raises the rows but leaves the fence as it is: closed
	// after a fail-over, so nothing is handed out until a later repair
	// (or another one of the same database, such as the segment store's)
	// accepts the server. Raise every kind of row of a database before
	// any repair accepts its server.
	NoAccept bool
}

// RepairFailover puts a database of sqlrow sources and counters back into
// service after its server failed over to a replica that may lack the
// last increments (the failover fence, idforge_fence, names another
// server, and every Next and Count is refused with
// idforge.ErrStoreFailedOver). In one transaction it raises the rows as r
// says and (unless r.NoAccept) records the server it runs on in the
// fence; it returns the fence as it was. It returns an error wrapping
// idforge.ErrInvalidArgument for a floor below 1, a missing counter floor,
// an SQLite database, or a database without the fence.
func RepairFailover(ctx context.Context, db *sql.DB, r Repair) (idforge.FailoverState, error) {
	d, err := sqldb.Wrap(db)
	if err != nil {
		return idforge.FailoverState{}, fmt.Errorf("%w: sqlrow repair: %v", idforge.ErrInvalidArgument, err)
	}
	return repair(ctx, d, r)
}

// repairURL is the sequence.Repairer of "sqlrow+mysql://…", "mysql://…"
// and the other databases': RepairFailover on the database of a source
// or counter URL; its table parameter, when present, names SourceTable
// for a source URL and CounterTable for a counter URL.
func repairURL(ctx context.Context, u *url.URL, sr sequence.Repair) (string, error) {
	r := Repair{Floor: sr.Floor, CounterFloor: sr.CounterFloor, NoAccept: sr.NoAccept}
	q := dsn.NewQuery(u, "sqlrow repair URL")
	q.String("name", "")
	q.String("start", "")
	q.String("create", "")
	q.String("period", "")
	if table := q.String("table", ""); table != "" {
		if u.Scheme != sqldb.StripScheme(u).Scheme {
			r.SourceTable = table
		} else {
			r.CounterTable = table
		}
	}
	db, err := sqldb.Open(ctx, sqldb.StripScheme(u), q, sqldb.Settings{}, "")
	if err != nil {
		return "", err
	}
	defer db.Close()
	before, err := repair(ctx, db, r)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("sequence rows at %d or above, counters at %s or above; values are handed out on %q from now on", r.Floor, r.CounterFloor, before.Current), nil
}

func repair(ctx context.Context, db *sqldb.DB, r Repair) (idforge.FailoverState, error) {
	r.SourceTable = cmp.Or(r.SourceTable, DefaultSourceTable)
	r.CounterTable = cmp.Or(r.CounterTable, DefaultCounterTable)
	switch {
	case r.Floor < 1:
		return idforge.FailoverState{}, fmt.Errorf("%w: sqlrow repair: floor %d is below 1", idforge.ErrInvalidArgument, r.Floor)
	case !sqldb.ValidIdent(r.SourceTable) || !sqldb.ValidIdent(r.CounterTable):
		return idforge.FailoverState{}, fmt.Errorf("%w: sqlrow repair: table names %q, %q (want letters, digits and _)",
			idforge.ErrInvalidArgument, r.SourceTable, r.CounterTable)
	}
	f, err := db.Fence(ctx, false)
	if err != nil {
		return idforge.FailoverState{}, fmt.Errorf("sqlrow repair on %s: %w", db.Where, err)
	}
	if f == nil {
		return idforge.FailoverState{}, fmt.Errorf("%w: sqlrow repair: %s has no failover fence (SQLite, or not migrated)", idforge.ErrInvalidArgument, db.Where)
	}
	hasSource, err := db.HasTable(ctx, db, r.SourceTable)
	if err != nil {
		return idforge.FailoverState{}, err
	}
	hasCounter, err := db.HasTable(ctx, db, r.CounterTable)
	if err != nil {
		return idforge.FailoverState{}, err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return idforge.FailoverState{}, fmt.Errorf("sqlrow repair on %s: %w", db.Where, err)
	}
	defer tx.Rollback()
	if hasSource {
		if _, err := tx.ExecContext(ctx, db.Rebind("UPDATE "+db.Quote(r.SourceTable)+" SET current_value = ? WHERE current_value < ?"), r.Floor, r.Floor); err != nil {
			return idforge.FailoverState{}, fmt.Errorf("sqlrow repair on %s: %w", db.Where, err)
		}
	}
	if hasCounter && r.CounterFloor.N < 1 {
		var rows bool
		if err := tx.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM "+db.Quote(r.CounterTable)+")").Scan(&rows); err != nil {
			return idforge.FailoverState{}, fmt.Errorf("sqlrow repair on %s: %w", db.Where, err)
		}
		if rows {
			return idforge.FailoverState{}, fmt.Errorf("%w: sqlrow repair: %s has per-period counters in %s: give a counter floor (period stamp and count) at or above every count made",
				idforge.ErrInvalidArgument, db.Where, r.CounterTable)
		}
	}
	if hasCounter {
		s, n := r.CounterFloor.Stamp, r.CounterFloor.N
		// n is set before period, from the old period: MySQL assigns left
		// to right, seeing the new values; PostgreSQL sees the old ones.
		raise := "UPDATE " + db.Quote(r.CounterTable) + " SET" +
			" n = CASE WHEN period < ? THEN ? WHEN period = ? AND n < ? THEN ? WHEN ? = 0 AND n < ? THEN ? ELSE n END," +
			" period = CASE WHEN period < ? THEN ? ELSE period END"
		if _, err := tx.ExecContext(ctx, db.Rebind(raise), s, n, s, n, n, s, n, n, s, s); err != nil {
			return idforge.FailoverState{}, fmt.Errorf("sqlrow repair on %s: %w", db.Where, err)
		}
	}
	accept := f.Accept
	if r.NoAccept {
		accept = f.Read
	}
	before, err := accept(ctx, tx)
	if err != nil {
		return idforge.FailoverState{}, fmt.Errorf("sqlrow repair on %s: %w", db.Where, err)
	}
	if err := tx.Commit(); err != nil {
		return idforge.FailoverState{}, fmt.Errorf("sqlrow repair on %s: %w", db.Where, err)
	}
	return before, nil
}
