package sqlrow

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"sync/atomic"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/atomicmax"
	"github.com/idforge/idforge/internal/sqldb"
	"github.com/idforge/idforge/sequence"
)

// DefaultSourceTable is sourceConfig.Table when left empty.
const DefaultSourceTable = "idforge_sequence"

// sourceConfig is what a source URL says. Name is required; the zero
// value of every other field means its default.
type sourceConfig struct {
	// Table is the table of named counters: letters, digits and '_',
	// DefaultSourceTable when empty.
	Table string
	// Name is the counter's row; it follows idforge.ValidateKeyName.
	Name string
	// Start is the first value issued from a row the source creates
	// (default 1, at least 1).
	Start int64
	// NoCreate makes opening fail instead of creating a missing table
	// or row (when the schema belongs to administrators: see
	// MigrateSource).
	NoCreate bool
}

// Source issues the values of one row: current_value + 1 under the row's
// lock. It is safe for concurrent use.
type Source struct {
	db   *sqldb.DB
	name string
	next string // the increment statement
	read string
	// fence is the failover fence of the row's database (nil on SQLite,
	// or when the database has no idforge_fence and creation is off):
	// next ANDs its condition, so a promoted replica that lacks the last
	// increments hands out nothing.
	fence *sqldb.Fence
	// seen is the largest value this source has seen the row hold.
	seen   atomic.Int64
	closed atomic.Bool
}

var _ sequence.Source = (*Source)(nil)

// check fills in the defaults and validates.
func (cfg *sourceConfig) check() error {
	cfg.Table = cmp.Or(cfg.Table, DefaultSourceTable)
	cfg.Start = cmp.Or(cfg.Start, 1)
	switch err := idforge.ValidateKeyName(cfg.Name); {
	case err != nil:
		return fmt.Errorf("sqlrow source: name: %w", err)
	case !sqldb.ValidIdent(cfg.Table):
		return fmt.Errorf("%w: sqlrow source: table name %q (want letters, digits and _)", idforge.ErrInvalidArgument, cfg.Table)
	case cfg.Start < 1:
		return fmt.Errorf("%w: sqlrow source %q: start %d is below 1", idforge.ErrInvalidArgument, cfg.Name, cfg.Start)
	}
	return nil
}

func newSource(ctx context.Context, db *sqldb.DB, cfg sourceConfig) (*Source, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	t := db.Quote(cfg.Table)
	s := &Source{db: db, name: cfg.Name}
	s.read = db.Rebind("SELECT current_value FROM " + t + " WHERE name = ?")

	err := db.Retry(ctx, func(ctx context.Context) error {
		if !cfg.NoCreate {
			if err := migrateSource(ctx, db, cfg.Table); err != nil {
				return err
			}
			ins := db.InsertIgnore("INSERT INTO "+t+" (name, current_value) VALUES (?, ?)", "name")
			if _, err := db.ExecContext(ctx, db.Rebind(ins), cfg.Name, cfg.Start-1); err != nil {
				return err
			}
		}
		f, err := db.Fence(ctx, false)
		if err != nil {
			return err
		}
		s.fence = f
		var v int64
		err = db.QueryRowContext(ctx, s.read, cfg.Name).Scan(&v)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: sqlrow source: no row %q in table %s (creation is off)", idforge.ErrUnknownKey, cfg.Name, cfg.Table)
		}
		s.seen.Store(v)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("sqlrow source %q on %s: %w", cfg.Name, db.Where, err)
	}
	fence := ""
	if s.fence != nil {
		fence = s.fence.Cond()
	}
	if !db.Returning {
		// LAST_INSERT_ID(expr) hands the new value back in the statement's
		// own reply: the UPDATE and the read are one atomic statement.
		s.next = "UPDATE " + t + " SET current_value = LAST_INSERT_ID(current_value + 1) WHERE name = ? AND current_value < 9223372036854775807" + fence
	} else {
		s.next = db.Rebind("UPDATE " + t + " SET current_value = current_value + 1 WHERE name = ? AND current_value < 9223372036854775807" + fence + " RETURNING current_value")
	}
	return s, nil
}

// Next returns the row's next value. It returns an error wrapping
// sequence.ErrCounterLost (and idforge.ErrUnavailable) when the row has
// been deleted or holds less than this source saw (restored from an old
// backup); idforge.ErrStoreFailedOver when the database's failover fence
// names another server (a replica promoted after a fail-over, which may
// lack the last increments: see RepairFailover);
// idforge.ErrSpaceExhausted at the largest int64; idforge.ErrUnavailable
// wrapping the database's error when it fails
// (transient failures are retried twice first); idforge.ErrClosed after
// Close.
func (s *Source) Next(ctx context.Context) (int64, error) {
	if s.closed.Load() {
		return 0, fmt.Errorf("sqlrow source %q: %w", s.name, idforge.ErrClosed)
	}
	floor := s.seen.Load()
	var v int64
	var found bool
	err := s.db.Retry(ctx, func(ctx context.Context) error {
		if !s.db.Returning {
			res, err := s.db.ExecContext(ctx, s.next, s.name)
			if err != nil {
				return err
			}
			n, err := res.RowsAffected()
			if err != nil {
				return err
			}
			if found = n == 1; found {
				v, err = res.LastInsertId()
			}
			return err
		}
		err := s.db.QueryRowContext(ctx, s.next, s.name).Scan(&v)
		if errors.Is(err, sql.ErrNoRows) {
			found = false
			return nil
		}
		found = err == nil
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("%w: sqlrow source %q on %s: %w", idforge.ErrUnavailable, s.name, s.db.Where, err)
	}
	if !found {
		return 0, s.why(ctx)
	}
	if v <= floor {
		return 0, fmt.Errorf("%w: %w: sqlrow source %q: the row answered %d, but held %d before: it went back (restored from a backup?); set it above every value issued",
			sequence.ErrCounterLost, idforge.ErrUnavailable, s.name, v, floor)
	}
	atomicmax.Raise(&s.seen, v)
	return v, nil
}

// why explains an UPDATE that changed no row.
func (s *Source) why(ctx context.Context) error {
	ctx, cancel := s.db.Ctx(ctx)
	defer cancel()
	if s.fence != nil {
		if err := s.fence.Check(ctx, s.db, s.db.Where); err != nil {
			if errors.Is(err, idforge.ErrStoreFailedOver) {
				return fmt.Errorf("sqlrow source %q: %w", s.name, err)
			}
			return fmt.Errorf("%w: sqlrow source %q: %w", idforge.ErrUnavailable, s.name, err)
		}
	}
	var v int64
	err := s.db.QueryRowContext(ctx, s.read, s.name).Scan(&v)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("%w: %w: sqlrow source %q: the row was deleted; re-create it above every value issued (never lower)",
			sequence.ErrCounterLost, idforge.ErrUnavailable, s.name)
	case err != nil:
		return fmt.Errorf("%w: sqlrow source %q: %w", idforge.ErrUnavailable, s.name, err)
	case v == math.MaxInt64:
		return fmt.Errorf("%w: sqlrow source %q", idforge.ErrSpaceExhausted, s.name)
	}
	return fmt.Errorf("%w: sqlrow source %q: the row holds %d but was not incremented", idforge.ErrUnavailable, s.name, v)
}

// Close closes the pool if the source opened it (Open). It is idempotent.
func (s *Source) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	return s.db.Close()
}

// MigrateSource creates the table of a Source if it is missing:
//
//	<table>(name varchar(128) PRIMARY KEY, current_value bigint NOT NULL)
//
// (names compare byte for byte on MySQL: utf8mb4_bin), and on MySQL,
// MariaDB and PostgreSQL the failover fence idforge_fence, recording the
// server it runs on (see RepairFailover). It is idempotent.
func MigrateSource(ctx context.Context, db *sql.DB, table string) error {
	return sqldb.Migrate(ctx, db, "sqlrow", table, migrateSource)
}

func migrateSource(ctx context.Context, db *sqldb.DB, table string) error {
	return createNamed(ctx, db, table, "current_value bigint NOT NULL")
}

// createNamed creates table if it is missing, keyed by a name of up to
// 128 characters (compared byte for byte on MySQL: utf8mb4_bin), with the
// further columns cols: the one shape of sqlrow's tables.
func createNamed(ctx context.Context, db *sqldb.DB, table, cols string) error {
	name := "name " + db.Text(128) + " NOT NULL PRIMARY KEY"
	if _, err := db.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS "+db.Quote(table)+" ("+name+", "+cols+")"+db.TableOptions); err != nil {
		return err
	}
	_, err := db.Fence(ctx, true)
	return err
}
