package sqlrow

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/sqldb"
	"github.com/idforge/idforge/sequence"
)

// DefaultCounterTable is CounterStoreConfig.Table when left empty.
const DefaultCounterTable = "idforge_counter"

// CounterStoreConfig configures a CounterStore. The zero value means the
// defaults.
type CounterStoreConfig struct {
	// Table is the counters' table: letters, digits and '_';
	// DefaultCounterTable when empty.
	Table string
	// NoCreate makes LoadMark fail instead of creating a missing table or
	// row.
	NoCreate bool
}

// CounterStore keeps per-period counters in an SQL table, one row per
// counter name holding the period it counts in and the count, which is
// also the counter's mark. It is safe for concurrent use.
type CounterStore struct {
	db       *sqldb.DB
	table    string
	noCreate bool
	lock     string // reads the row and locks it
	write    string
	touch    string   // SQLite: a no-op write that takes the write lock
	ensured  sync.Map // name → struct{}: the row exists
	// fence is the failover fence of the database, set by LoadMark (nil
	// on SQLite, or when the database has no idforge_fence and creation
	// is off): Count checks it in its transaction.
	fence atomic.Pointer[sqldb.Fence]
}

var _ sequence.CounterStore = (*CounterStore)(nil)

// NewCounterStore returns a store in db (a go-sql-driver/mysql, pgx stdlib
// or modernc sqlite pool, which the caller keeps owning). It returns an
// error wrapping idforge.ErrInvalidArgument for another driver or a bad
// table name.
func NewCounterStore(db *sql.DB, cfg CounterStoreConfig) (*CounterStore, error) {
	d, err := sqldb.Wrap(db)
	if err != nil {
		return nil, fmt.Errorf("%w: sqlrow counter store: %v", idforge.ErrInvalidArgument, err)
	}
	return newCounterStore(d, cfg)
}

func newCounterStore(db *sqldb.DB, cfg CounterStoreConfig) (*CounterStore, error) {
	cfg.Table = cmp.Or(cfg.Table, DefaultCounterTable)
	if !sqldb.ValidIdent(cfg.Table) {
		return nil, fmt.Errorf("%w: sqlrow counter store: table name %q (want letters, digits and _)", idforge.ErrInvalidArgument, cfg.Table)
	}
	t := db.Quote(cfg.Table)
	s := &CounterStore{db: db, table: cfg.Table, noCreate: cfg.NoCreate}
	s.lock = db.Rebind("SELECT period, n FROM " + t + " WHERE name = ?" + db.ForUpdate())
	s.write = db.Rebind("UPDATE " + t + " SET period = ?, n = ? WHERE name = ?")
	s.touch = "UPDATE " + t + " SET n = n WHERE name = ?"
	return s, nil
}

// LoadMark implements sequence.CounterStore: it creates the table and the
// name's row when missing (unless NoCreate) and returns the row.
func (s *CounterStore) LoadMark(ctx context.Context, name string) (sequence.Mark, error) {
	t := s.db.Quote(s.table)
	var m sequence.Mark
	err := s.db.Retry(ctx, func(ctx context.Context) error {
		if !s.noCreate {
			if err := migrateCounter(ctx, s.db, s.table); err != nil {
				return err
			}
			ins := s.db.InsertIgnore("INSERT INTO "+t+" (name, period, n) VALUES (?, 0, 0)", "name")
			if _, err := s.db.ExecContext(ctx, s.db.Rebind(ins), name); err != nil {
				return err
			}
		}
		f, err := s.db.Fence(ctx, false)
		if err != nil {
			return err
		}
		if f != nil {
			s.fence.Store(f)
		}
		err = s.db.QueryRowContext(ctx, s.db.Rebind("SELECT period, n FROM "+t+" WHERE name = ?"), name).Scan(&m.Stamp, &m.N)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: no row %q in table %s (creation is off)", idforge.ErrUnknownKey, name, s.table)
		}
		return err
	})
	if err != nil {
		return sequence.Mark{}, fmt.Errorf("sqlrow counter store on %s: %w", s.db.Where, err)
	}
	s.ensured.Store(name, struct{}{})
	return m, nil
}

// Count implements sequence.CounterStore in one transaction: lock the
// row, check the failover fence, decide, write it back. It returns an
// error wrapping idforge.ErrStoreFailedOver when the fence names another
// server (a replica promoted after a fail-over: see RepairFailover).
func (s *CounterStore) Count(ctx context.Context, req sequence.CountRequest) (sequence.CountResult, error) {
	if _, ok := s.ensured.Load(req.Name); !ok {
		if _, err := s.LoadMark(ctx, req.Name); err != nil {
			return sequence.CountResult{}, err
		}
	}
	var res sequence.CountResult
	err := s.db.Retry(ctx, func(ctx context.Context) error {
		tx, err := s.db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		if s.db.FileLock {
			// Write first: the transaction takes SQLite's write lock now,
			// waiting for other writers, instead of failing to upgrade a
			// read snapshot later (the caller's pool may not BEGIN
			// IMMEDIATE).
			if _, err := tx.ExecContext(ctx, s.touch, req.Name); err != nil {
				return err
			}
		}
		var m sequence.Mark
		err = tx.QueryRowContext(ctx, s.lock, req.Name).Scan(&m.Stamp, &m.N)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: the row of counter %q was deleted; re-create it with the last period and count issued",
				sequence.ErrCounterLost, req.Name)
		}
		if err != nil {
			return err
		}
		if f := s.fence.Load(); f != nil {
			// On the transaction's connection, which holds the row's lock:
			// a promoted replica that lacks the last counts counts nothing.
			if err := f.Check(ctx, tx, s.db.Where); err != nil {
				return err
			}
		}
		target, cur, full := req.Base(m)
		if full {
			res = sequence.CountResult{Stamp: target, Full: true}
			return nil
		}
		if _, err := tx.ExecContext(ctx, s.write, target, cur+1, req.Name); err != nil {
			return err
		}
		if err := tx.Commit(); err != nil {
			return err
		}
		res = sequence.CountResult{Stamp: target, N: cur + 1}
		return nil
	})
	if err != nil {
		return sequence.CountResult{}, fmt.Errorf("sqlrow counter store on %s: %w", s.db.Where, err)
	}
	return res, nil
}

// Close closes the pool if the store opened it (through
// sequence.OpenCounter). It is idempotent.
func (s *CounterStore) Close() error { return s.db.Close() }

// migrateCounter creates the table of a CounterStore if it is missing:
//
//	<table>(name varchar(128) PRIMARY KEY, period bigint NOT NULL, n bigint NOT NULL)
//
// period holds the stamp of the period counted in (see
// sequence.Period.Stamp) and n the count, and on a server the failover
// fence idforge_fence (see RepairFailover). It is idempotent.
func migrateCounter(ctx context.Context, db *sqldb.DB, table string) error {
	return createNamed(ctx, db, table, "period bigint NOT NULL, n bigint NOT NULL")
}
