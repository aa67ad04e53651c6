package autoinc

import (
	"context"
	"database/sql"
	"fmt"
	"math/bits"
	"net/url"
	"strconv"
	"strings"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/sqldb"
	"github.com/idforge/idforge/sequence"
)

// Repair says how RepairFailover raises auto-increment tables.
type Repair struct {
	// Floor is an id (the high bits of a value: Source.Split) at or above
	// every id the tables handed out; their next ids are above it. It must
	// be at least 1.
	Floor int64
	// NoAccept raises the tables but leaves the fence as it is: closed
	// after a fail-over, so nothing is handed out until a later repair
	// (or another one of the same database, such as the segment store's)
	// accepts the server. Raise every kind of row of a database before
	// any repair accepts its server.
	NoAccept bool
}

// RepairFailover puts an auto-increment table back into service after its
// server failed over to a replica that may lack the last inserts (the
// failover fence, idforge_fence, names another server, and Next leaves
// the table aside with an error wrapping idforge.ErrStoreFailedOver). It
// raises the table's next id above r.Floor (never lowering it), and then,
// unless r.NoAccept, records the server it runs on in the fence. It
// returns the fence as it was, and an error wrapping
// idforge.ErrInvalidArgument for a floor below 1, an SQLite database or
// one without the fence.
func RepairFailover(ctx context.Context, db *sql.DB, table string, r Repair) (idforge.FailoverState, error) {
	d, err := sqldb.Wrap(db)
	if err != nil {
		return idforge.FailoverState{}, fmt.Errorf("%w: autoinc repair: %v", idforge.ErrInvalidArgument, err)
	}
	if !sqldb.ValidIdent(table) {
		return idforge.FailoverState{}, fmt.Errorf("%w: autoinc repair: table name %q (want letters, digits and _)", idforge.ErrInvalidArgument, table)
	}
	states, err := repair(ctx, []*sqldb.DB{d}, []tableSpec{{DB: db, Name: table}}, r)
	if err != nil {
		return idforge.FailoverState{}, err
	}
	return states[0], nil
}

// repairURL is the sequence.Repairer of "autoinc+…": RepairFailover on
// every table a source URL (with its tables, table and also parameters)
// names, with r.Floor a value of the source rather than an id: at or
// above every value it handed out. Each table's next id is raised above
// r.Floor >> n (n = Source.Bits), so every value it issues is above
// r.Floor.
func repairURL(ctx context.Context, u *url.URL, r sequence.Repair) (string, error) {
	t, err := openTarget(ctx, u)
	if err != nil {
		return "", err
	}
	defer t.close()
	floor := r.Floor
	if floor >= 1 {
		floor = max(floor>>bits.TrailingZeros(uint(len(t.cfg.Tables))), 1)
	}
	states, err := repair(ctx, t.dbs, t.cfg.Tables, Repair{Floor: floor, NoAccept: r.NoAccept})
	if err != nil {
		return "", err
	}
	var on []string
	for _, st := range states {
		on = append(on, strconv.Quote(st.Current))
	}
	return fmt.Sprintf("auto-increment tables issue values above %d; values are handed out on %s from now on", r.Floor, strings.Join(on, ", ")), nil
}

// repair raises tables, each on the database of dbs whose pool it names,
// and then accepts the fence of each of dbs.
func repair(ctx context.Context, dbs []*sqldb.DB, tables []tableSpec, r Repair) ([]idforge.FailoverState, error) {
	if r.Floor < 1 {
		return nil, fmt.Errorf("%w: autoinc repair: floor %d is below 1", idforge.ErrInvalidArgument, r.Floor)
	}
	fences := make([]*sqldb.Fence, len(dbs))
	for i, d := range dbs {
		f, err := d.Fence(ctx, false)
		if err != nil {
			return nil, fmt.Errorf("autoinc repair on %s: %w", d.Where, err)
		}
		if f == nil {
			return nil, fmt.Errorf("%w: autoinc repair: %s has no failover fence (SQLite, or not migrated)", idforge.ErrInvalidArgument, d.Where)
		}
		fences[i] = f
	}
	// The fences stay closed while the tables are raised: nothing is
	// inserted meanwhile.
	for _, t := range tables {
		for _, d := range dbs {
			if d.DB == t.DB {
				if err := d.RaiseAutoID(ctx, d, t.Name, r.Floor); err != nil {
					return nil, fmt.Errorf("autoinc repair: raise table %s on %s: %w", t.Name, d.Where, err)
				}
			}
		}
	}
	states := make([]idforge.FailoverState, len(dbs))
	for i, d := range dbs {
		accept := fences[i].Accept
		if r.NoAccept {
			accept = fences[i].Read
		}
		before, err := accept(ctx, d)
		if err != nil {
			return nil, fmt.Errorf("autoinc repair on %s: %w", d.Where, err)
		}
		states[i] = before
	}
	return states, nil
}
