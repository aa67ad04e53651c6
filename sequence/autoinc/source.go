package autoinc

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"sync/atomic"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/atomicmax"
	"github.com/idforge/idforge/internal/closeonce"
	"github.com/idforge/idforge/internal/rotate"
	"github.com/idforge/idforge/internal/sqldb"
	"github.com/idforge/idforge/sequence"
)

// MaxTables is the largest number of tables a Source combines (10 bits).
const MaxTables = 1024

// DefaultRescue is Config.Rescue when left zero.
const DefaultRescue = 30 * time.Second

// tableSpec is one auto-increment table of a Source.
type tableSpec struct {
	// DB is the table's pool. Tables may share a pool or use different
	// databases and servers.
	DB *sql.DB
	// Name is the table's name: letters, digits and '_'.
	Name string
}

// config is what a source URL says.
type config struct {
	// Tables are the 2^n tables, n ≥ 0, at most MaxTables; a table's
	// position is its index in every value.
	Tables []tableSpec
	// Rescue is how long a failing table is left aside before it is tried
	// again; DefaultRescue when zero.
	Rescue time.Duration
	// NoCreate makes opening fail instead of creating missing tables.
	NoCreate bool
}

type table struct {
	db     *sqldb.DB
	name   string
	insert string
	// fenced says that insert holds the failover fence's condition: on a
	// replica promoted after a fail-over it inserts nothing.
	fenced bool
	fence  *sqldb.Fence
	// seen is the largest id this process took from the table: an insert
	// that began after it was taken and gets an id at or below it means
	// the table was dropped and created again, or restored from a backup,
	// and would repeat values.
	seen atomic.Int64
}

// Source combines 2^n auto-increment tables: a value is id << n | index,
// taken from the tables in turn. It is safe for concurrent use.
type Source struct {
	tables []*table
	bits   uint
	maxID  int64 // the largest id that fits above the index bits: 2^(63-n) - 1
	rotor  *rotate.Rotor
	owned  []*sqldb.DB
	closed atomic.Bool
}

var (
	_ sequence.Source         = (*Source)(nil)
	_ sequence.StatusReporter = (*Source)(nil)
)

// newSource returns a source over cfg.Tables, each on the database of
// dbs at its index, creating missing tables unless cfg.NoCreate is set.
// It returns an error wrapping idforge.ErrInvalidArgument when the number
// of tables is not a power of two in [1, MaxTables], a name is bad or two
// entries name the same table of the same pool.
func newSource(ctx context.Context, cfg config, dbs []*sqldb.DB) (*Source, error) {
	n := len(cfg.Tables)
	if n < 1 || n > MaxTables || n&(n-1) != 0 {
		return nil, fmt.Errorf("%w: autoinc source: %d tables; want a power of two from 1 to %d", idforge.ErrInvalidArgument, n, MaxTables)
	}
	cfg.Rescue = cmp.Or(cfg.Rescue, DefaultRescue)
	s := &Source{bits: uint(bits.TrailingZeros(uint(n))), rotor: rotate.New("autoinc source", n, cfg.Rescue)}
	// Not 1 << (63-n): with one table that overflows to a negative limit.
	s.maxID = math.MaxInt64 >> s.bits
	seen := map[[2]any]int{}
	for i, t := range cfg.Tables {
		if !sqldb.ValidIdent(t.Name) {
			return nil, fmt.Errorf("%w: autoinc source: table %d: name %q (want letters, digits and _)", idforge.ErrInvalidArgument, i, t.Name)
		}
		k := [2]any{dbs[i].DB, t.Name}
		if j, dup := seen[k]; dup {
			return nil, fmt.Errorf("%w: autoinc source: tables %d and %d are both %s", idforge.ErrInvalidArgument, j, i, t.Name)
		}
		seen[k] = i
		d := dbs[i]
		tb := &table{db: d, name: t.Name}
		q := d.Quote(t.Name)
		if !cfg.NoCreate {
			if err := d.Retry(ctx, func(ctx context.Context) error { return migrate(ctx, d, t.Name) }); err != nil {
				return nil, fmt.Errorf("autoinc source: create table %d (%s) on %s: %w", i, t.Name, d.Where, err)
			}
		}
		var fence *sqldb.Fence
		if err := d.Retry(ctx, func(ctx context.Context) (err error) { fence, err = d.Fence(ctx, false); return err }); err != nil {
			return nil, fmt.Errorf("autoinc source: table %d (%s) on %s: %w", i, t.Name, d.Where, err)
		}
		switch {
		case fence != nil && !d.Returning:
			tb.insert, tb.fenced = "INSERT INTO "+q+" (generate_time) SELECT CURRENT_TIMESTAMP FROM DUAL WHERE 1 = 1"+fence.Cond(), true
		case fence != nil:
			tb.insert, tb.fenced = "INSERT INTO "+q+" (generate_time) SELECT now() WHERE 1 = 1"+fence.Cond()+" RETURNING id", true
		case !d.Returning:
			tb.insert = "INSERT INTO " + q + " () VALUES ()"
		default:
			tb.insert = "INSERT INTO " + q + " DEFAULT VALUES RETURNING id"
		}
		tb.fence = fence
		s.tables = append(s.tables, tb)
	}
	return s, nil
}

// Bits returns n, the number of low bits holding the table index.
func (s *Source) Bits() uint { return s.bits }

// Split returns the auto-increment id and the table index of a value.
func (s *Source) Split(v int64) (id int64, index int) {
	return v >> s.bits, int(v & (1<<s.bits - 1))
}

// Next inserts a row into the next table in turn and returns its id
// shifted left by n bits, or'ed with the table's index. A table that
// fails is left aside for the rescue time and the next one is tried; a
// table whose ids no longer fit in 63-n bits is left aside for good. It
// returns an error wrapping idforge.ErrUnavailable with every table's
// error when none can issue (idforge.ErrSpaceExhausted when all are used
// up; idforge.ErrStoreFailedOver too when a table's failover fence names
// another server: see RepairFailover), and idforge.ErrClosed after Close.
func (s *Source) Next(ctx context.Context) (int64, error) {
	return s.rotor.Next(ctx, s.closed.Load(), func(ctx context.Context, i int) (int64, error) {
		t := s.tables[i]
		// Every id taken before this insert began is below the one it
		// gets, however concurrent inserts finish: the floor is read
		// first.
		floor := t.seen.Load()
		id, err := t.next(ctx)
		if err != nil {
			if sqldb.KindOf(err) == sqldb.OutOfRange {
				return 0, rotate.Exhausted(fmt.Errorf("%w: table %s: %w", idforge.ErrSpaceExhausted, t.name, err))
			}
			return 0, fmt.Errorf("table %s on %s: %w", t.name, t.db.Where, err)
		}
		if id < 1 || id > s.maxID {
			return 0, rotate.Exhausted(fmt.Errorf("%w: table %s issued id %d, outside [1, 2^%d)", idforge.ErrSpaceExhausted, t.name, id, 63-s.bits))
		}
		if id <= floor {
			// Left aside like any failing table; the others answer.
			return 0, fmt.Errorf("%w: table %s on %s issued id %d, not above the %d it issued before (dropped and created again, or restored?)",
				sequence.ErrCounterLost, t.name, t.db.Where, id, floor)
		}
		atomicmax.Raise(&t.seen, id)
		return id<<s.bits | int64(i), nil
	})
}

// Status reports the tables for operators (sequence.StatusReporter): each
// one's state (set aside for the rescue time after a failure, or for good
// once used up), calls, failures, times set aside, latest error and the
// highest id taken. The source is Down when no table is admitted,
// Degraded when some table is set aside.
func (s *Source) Status() sequence.Status {
	return s.rotor.Status("autoinc", func(i int) string { return s.tables[i].name + " on " + s.tables[i].db.Where },
		func(i int) int64 { return s.tables[i].seen.Load() })
}

func (t *table) next(ctx context.Context) (int64, error) {
	ctx, cancel := t.db.Ctx(ctx)
	defer cancel()
	if !t.db.Returning {
		res, err := t.db.ExecContext(ctx, t.insert)
		if err != nil {
			return 0, err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 && t.fenced {
			return 0, cmp.Or(err, t.refused(ctx))
		}
		return res.LastInsertId()
	}
	var id int64
	err := t.db.QueryRowContext(ctx, t.insert).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) && t.fenced {
		return 0, t.refused(ctx)
	}
	return id, err
}

// refused explains a fenced insert that inserted nothing: the fence names
// another server.
func (t *table) refused(ctx context.Context) error {
	if err := t.fence.Check(ctx, t.db, t.db.Where); err != nil {
		return err
	}
	return fmt.Errorf("the insert into %s inserted no row", t.name)
}

// Close closes the pools the source opened (Open). It is idempotent.
func (s *Source) Close() error {
	return closeonce.CloseAll(&s.closed, s.owned)
}

// Migrate creates an auto-increment table if it is missing:
//
//	MySQL       (id bigint AUTO_INCREMENT PRIMARY KEY, generate_time timestamp DEFAULT CURRENT_TIMESTAMP)
//	PostgreSQL  (id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, generate_time timestamptz DEFAULT now())
//	SQLite      (id INTEGER PRIMARY KEY AUTOINCREMENT, generate_time text DEFAULT CURRENT_TIMESTAMP)
//
// and on MySQL, MariaDB and PostgreSQL the failover fence idforge_fence
// (see RepairFailover). It is idempotent.
func Migrate(ctx context.Context, db *sql.DB, table string) error {
	return sqldb.Migrate(ctx, db, "autoinc", table, migrate)
}

func migrate(ctx context.Context, db *sqldb.DB, table string) error {
	q := " (id " + db.AutoID + ", generate_time " + db.Stamp + ")" + db.TableOptions
	if _, err := db.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS "+db.Quote(table)+q); err != nil {
		return err
	}
	_, err := db.Fence(ctx, true)
	return err
}
