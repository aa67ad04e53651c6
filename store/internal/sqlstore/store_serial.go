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
	if err := s.checkOpen(); err != nil {
		return err
	}
	if err := def.Validate(); err != nil {
		return err
	}
	ctx, cancel := s.opContext(ctx)
	defer cancel()
	what := fmt.Sprintf("create serial %q", def.Name)
	if err := s.serialsTable(ctx, what); err != nil {
		return err
	}
	_, err := s.db.ExecContext(ctx, s.d.SQL.InsertSerial, def.Name, def.Template, nullString(def.TimeZone), nullString(def.Description))
	switch {
	case err == nil:
		return nil
	case s.d.IsDuplicateKey(err):
		return fmt.Errorf("%w: serial %q", idforge.ErrKeyExists, def.Name)
	}
	return s.serialErr(ctx, err, what)
}

// Serial implements idforge.SerialStore. It returns an error wrapping
// idforge.ErrUnknownKey when there is no serial of that name, one wrapping
// ErrInvalidArgument that says to run `idforge migrate` when the database
// has no idforge_serials table, and ErrClosed after Close.
func (s *Store) Serial(ctx context.Context, name string) (idforge.Serial, error) {
	if err := s.checkOpen(); err != nil {
		return idforge.Serial{}, err
	}
	ctx, cancel := s.opContext(ctx)
	defer cancel()
	what := fmt.Sprintf("read serial %q", name)
	if err := s.serialsTable(ctx, what); err != nil {
		return idforge.Serial{}, err
	}
	var r serialRow
	err := s.rdb.QueryRowContext(ctx, s.d.SQL.Serial, name).Scan(&r.name, &r.template, &r.timeZone, &r.desc, &r.updated)
	if errors.Is(err, sql.ErrNoRows) {
		return idforge.Serial{}, fmt.Errorf("%w: serial %q", idforge.ErrUnknownKey, name)
	}
	if err != nil {
		return idforge.Serial{}, s.serialErr(ctx, err, what)
	}
	return r.serial(), nil
}

// Serials implements idforge.SerialStore: every serial definition, sorted
// by name in byte order (whatever the table's collation). Its errors are
// Serial's, but for ErrUnknownKey.
func (s *Store) Serials(ctx context.Context) ([]idforge.Serial, error) {
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	ctx, cancel := s.opContext(ctx)
	defer cancel()
	const what = "list serials"
	if err := s.serialsTable(ctx, what); err != nil {
		return nil, err
	}
	rows, err := s.rdb.QueryContext(ctx, s.d.SQL.Serials)
	if err != nil {
		return nil, s.serialErr(ctx, err, what)
	}
	defer rows.Close()
	out := []idforge.Serial{}
	for rows.Next() {
		var r serialRow
		if err := rows.Scan(&r.name, &r.template, &r.timeZone, &r.desc, &r.updated); err != nil {
			return nil, s.wrap(ctx, err, what)
		}
		out = append(out, r.serial())
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrap(ctx, err, what)
	}
	slices.SortFunc(out, func(a, b idforge.Serial) int { return cmp.Compare(a.Name, b.Name) })
	return out, nil
}

// serialsTable returns nil when idforge_serials exists, looking again
// when it did not: `idforge migrate` may have created it since. Otherwise
// it returns the error noTable makes.
func (s *Store) serialsTable(ctx context.Context, what string) error {
	return s.optionalTable(ctx, &s.hasSerials, s.d.SQL.SerialsTable, "idforge_serials", "serial definitions", what)
}

// serialErr is wrap for the statements on idforge_serials, except that
// when the table has gone since it was seen (dropped by hand) it returns
// the error noTable makes.
func (s *Store) serialErr(ctx context.Context, err error, what string) error {
	return s.tableErr(ctx, err, &s.hasSerials, s.d.SQL.SerialsTable, "idforge_serials", "serial definitions", what)
}

// optionalTable returns nil when a table that an older `idforge migrate`
// did not create exists (has records it was seen; exists is the
// dialect's statement telling whether it does), looking again when it
// did not: `idforge migrate` may have created it since. Otherwise it
// returns the error noTable makes; kept says what the table keeps.
func (s *Store) optionalTable(ctx context.Context, has *atomic.Bool, exists, table, kept, what string) error {
	if has.Load() {
		return nil
	}
	var ok bool
	if err := s.rdb.QueryRowContext(ctx, exists).Scan(&ok); err != nil {
		return s.wrap(ctx, err, "look for table "+table)
	}
	if !ok {
		return s.noTable(table, kept, what)
	}
	has.Store(true)
	return nil
}

// tableErr is wrap for the statements on an optional table (see
// optionalTable), except that when the table has gone since it was seen
// (dropped by hand) it returns the error noTable makes.
func (s *Store) tableErr(ctx context.Context, err error, has *atomic.Bool, exists, table, kept, what string) error {
	if ctx.Err() == nil && !s.closed.Load() {
		var ok bool
		if qerr := s.rdb.QueryRowContext(ctx, exists).Scan(&ok); qerr == nil && !ok {
			has.Store(false)
			return s.noTable(table, kept, what)
		}
	}
	return s.wrap(ctx, err, what)
}

// noTable is the error for a database without an optional table. It wraps
// idforge.ErrInvalidArgument, so that the request fails with its message
// rather than as a server error.
func (s *Store) noTable(table, kept, what string) error {
	return fmt.Errorf("%w: %s: %s: database %s has no table %s, which %s are kept in: run `idforge migrate`",
		idforge.ErrInvalidArgument, s.d.Name, what, s.name, table, kept)
}

// serialRow is an idforge_serials row as scanned.
type serialRow struct {
	name, template string
	timeZone, desc sql.NullString
	updated        rowTime
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
