package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/sqldb"
	"github.com/idforge/idforge/store/internal/claim"
)

// CreateSerial implements idforge.SerialStore: it adds an idforge_serials
// row. Serial names are a namespace of their own, compared byte for byte
// in the table Migrate creates: a key of the same name does not take one.
//
// Errors: those of idforge.Serial.Validate; ErrKeyExists when a serial of
// that name exists (the table's primary key decides, also between
// creators in several processes); an error wrapping ErrInvalidArgument
// that says to run `idforge migrate` when the database has no
// idforge_serials table; ErrClosed after Close.
func (s *Store) CreateSerial(ctx context.Context, def idforge.Serial) error {
	if err := def.Validate(); err != nil {
		return err
	}
	if def.Gapless {
		return s.createSerialGapless(ctx, def)
	}
	return s.insert(ctx, s.serialsT(), claim.SerialName(def.Name), s.sql.InsertSerial,
		def.Name, def.Template, nullString(def.TimeZone), nullString(def.Description))
}

// insert adds a row to the optional table t (stmt with args), ErrKeyExists
// naming it as label when the table's primary key has it already.
func (s *Store) insert(ctx context.Context, t optionalTable, label, stmt string, args ...any) error {
	what := "create " + label
	ctx, cancel, err := s.start(ctx, t, what)
	defer cancel()
	if err != nil {
		return err
	}
	_, err = s.db.ExecContext(ctx, stmt, args...)
	switch {
	case err == nil:
		return nil
	case sqldb.KindOf(err) == sqldb.Duplicate:
		return fmt.Errorf("%w: %s", idforge.ErrKeyExists, label)
	}
	return s.tableErr(ctx, err, t, what)
}

// Serial implements idforge.SerialStore. It returns an error wrapping
// idforge.ErrUnknownKey when there is no serial of that name, one wrapping
// ErrInvalidArgument that says to run `idforge migrate` when the database
// has no idforge_serials table, and ErrClosed after Close.
func (s *Store) Serial(ctx context.Context, name string) (idforge.Serial, error) {
	what := "read " + claim.SerialName(name)
	ctx, cancel, err := s.start(ctx, s.serialsT(), what)
	defer cancel()
	if err != nil {
		return idforge.Serial{}, err
	}
	var r serialRow
	err = s.rdb.QueryRowContext(ctx, s.sql.Serial, name).Scan(r.dest()...)
	if errors.Is(err, sql.ErrNoRows) {
		return idforge.Serial{}, fmt.Errorf("%w: %s", idforge.ErrUnknownKey, claim.SerialName(name))
	}
	if err != nil {
		return idforge.Serial{}, s.tableErr(ctx, err, s.serialsT(), what)
	}
	defs, err := s.withGapless(ctx, []idforge.Serial{r.serial()})
	if err != nil {
		return idforge.Serial{}, err
	}
	return defs[0], nil
}

// Serials implements idforge.SerialStore: every serial definition, sorted
// by name in byte order (whatever the table's collation). Its errors are
// Serial's, but for ErrUnknownKey.
func (s *Store) Serials(ctx context.Context) ([]idforge.Serial, error) {
	defs, err := listRows(ctx, s, s.serialsT(), "list serials", s.sql.Serials, nil, (*serialRow).serial,
		func(d idforge.Serial) string { return d.Name })
	if err != nil {
		return nil, err
	}
	return s.withGapless(ctx, defs)
}

// serialsT is idforge_serials, which `idforge migrate` creates.
func (s *Store) serialsT() optionalTable {
	return optionalTable{&s.hasSerials, "idforge_serials", "serial definitions"}
}

// optionalTable is a table that an older `idforge migrate` did not
// create: calls on it look for it until it is seen, and say to run
// `idforge migrate` while it is missing.
type optionalTable struct {
	has  *atomic.Bool // it was seen
	name string
	kept string // what the table keeps, for the error
}

// A scanned is a row type of an optional table: dest lists the fields
// rows.Scan fills, in the statement's column order.
type scanned[T any] interface {
	*T
	dest() []any
}

// start begins a call on an optional table: ErrClosed after Close, ctx
// bounded by the store's timeout, and the error noTable makes while the
// table does not exist. The caller defers cancel in every case.
func (s *Store) start(ctx context.Context, t optionalTable, what string) (context.Context, context.CancelFunc, error) {
	ctx, cancel, err := s.life.Begin(ctx)
	if err == nil {
		err = s.optionalTable(ctx, t, what)
	}
	return ctx, cancel, err
}

// listRows runs a query on an optional table (stmt with args, on the read
// pool) and returns each row as value makes it, sorted by name in byte
// order (whatever the table's collation).
func listRows[R any, PR scanned[R], T any](ctx context.Context, s *Store, t optionalTable, what, stmt string, args []any, value func(PR) T, name func(T) string) ([]T, error) {
	ctx, cancel, err := s.start(ctx, t, what)
	defer cancel()
	if err != nil {
		return nil, err
	}
	rows, err := s.rdb.QueryContext(ctx, stmt, args...)
	if err != nil {
		return nil, s.tableErr(ctx, err, t, what)
	}
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		r := PR(new(R))
		if err := rows.Scan(r.dest()...); err != nil {
			return nil, s.life.Wrap(ctx, err, what)
		}
		out = append(out, value(r))
	}
	if err := rows.Err(); err != nil {
		return nil, s.life.Wrap(ctx, err, what)
	}
	slices.SortFunc(out, func(a, b T) int { return cmp.Compare(name(a), name(b)) })
	return out, nil
}

// optionalTable returns nil when t exists (see seen), otherwise the error
// noTable makes.
func (s *Store) optionalTable(ctx context.Context, t optionalTable, what string) error {
	ok, err := s.seen(ctx, t)
	if err == nil && !ok {
		return s.noTable(t, what)
	}
	return err
}

// seen reports whether t exists, looking again while it has not been
// seen: `idforge migrate` may have created it since.
func (s *Store) seen(ctx context.Context, t optionalTable) (bool, error) {
	if t.has.Load() {
		return true, nil
	}
	ok, err := s.exists(ctx, t)
	if ok {
		t.has.Store(true)
	}
	return ok, err
}

// exists asks the database whether t exists.
func (s *Store) exists(ctx context.Context, t optionalTable) (bool, error) {
	var ok bool
	if err := s.rdb.QueryRowContext(ctx, s.d.Rebind(s.d.TableExists), t.name).Scan(&ok); err != nil {
		return false, s.life.Wrap(ctx, err, "look for table "+t.name)
	}
	return ok, nil
}

// tableErr is wrap for the statements on an optional table, except that
// when the table has gone since it was seen (dropped by hand) it returns
// the error noTable makes.
func (s *Store) tableErr(ctx context.Context, err error, t optionalTable, what string) error {
	if ctx.Err() == nil && !s.life.Closed() {
		if ok, qerr := s.exists(ctx, t); qerr == nil && !ok {
			t.has.Store(false)
			return s.noTable(t, what)
		}
	}
	return s.life.Wrap(ctx, err, what)
}

// noTable is the error for a database without an optional table. It wraps
// idforge.ErrInvalidArgument, so that the request fails with its message
// rather than as a server error.
func (s *Store) noTable(t optionalTable, what string) error {
	return fmt.Errorf("%w: %s: %s: database %s has no table %s, which %s are kept in: run `idforge migrate`",
		idforge.ErrInvalidArgument, s.d.Name, what, s.life.DB, t.name, t.kept)
}

// serialRow is an idforge_serials row as scanned.
type serialRow struct {
	name, template string
	timeZone, desc sql.NullString
	updated        rowTime
}

func (r *serialRow) dest() []any {
	return []any{&r.name, &r.template, &r.timeZone, &r.desc, &r.updated}
}

func (r *serialRow) serial() idforge.Serial {
	return idforge.Serial{
		Name:        r.name,
		Template:    r.template,
		TimeZone:    r.timeZone.String,
		Description: r.desc.String,
		Updated:     r.updated.Time,
	}
}

// nullString stores an empty string as NULL.
func nullString(s string) sql.NullString {
	return sql.NullString{String: s, Valid: s != ""}
}
