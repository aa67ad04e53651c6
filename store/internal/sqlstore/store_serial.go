package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"github.com/idforge/idforge"
)

// CreateSerial adds an idforge_serials row. The table's primary key
// decides between creators of one name, in every process: the loser's
// duplicate-key error becomes idforge.ErrKeyExists. Without the table it
// fails with an error wrapping idforge.ErrInvalidArgument that says to
// run `idforge migrate`.
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

// Serial returns the serial definition of that name, or an error wrapping
// idforge.ErrUnknownKey.
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
	err := s.db.QueryRowContext(ctx, s.d.SQL.Serial, name).Scan(&r.name, &r.template, &r.timeZone, &r.desc, &r.updated)
	if errors.Is(err, sql.ErrNoRows) {
		return idforge.Serial{}, fmt.Errorf("%w: serial %q", idforge.ErrUnknownKey, name)
	}
	if err != nil {
		return idforge.Serial{}, s.serialErr(ctx, err, what)
	}
	return r.serial(), nil
}

// Serials returns every serial definition, sorted by name in byte order
// (whatever the table's collation).
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
	rows, err := s.db.QueryContext(ctx, s.d.SQL.Serials)
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
// it returns the error noSerials makes.
func (s *Store) serialsTable(ctx context.Context, what string) error {
	if s.hasSerials.Load() {
		return nil
	}
	var ok bool
	if err := s.db.QueryRowContext(ctx, s.d.SQL.SerialsTable).Scan(&ok); err != nil {
		return s.wrap(ctx, err, "look for table idforge_serials")
	}
	if !ok {
		return s.noSerials(what)
	}
	s.hasSerials.Store(true)
	return nil
}

// noSerials is the error for a database without idforge_serials. It wraps
// idforge.ErrInvalidArgument, so that the request fails with its message
// rather than as a server error.
func (s *Store) noSerials(what string) error {
	return fmt.Errorf("%w: %s: %s: database %s has no table idforge_serials, which serial definitions are kept in: run `idforge migrate`",
		idforge.ErrInvalidArgument, s.d.Name, what, s.name)
}

// serialErr is wrap for the statements on idforge_serials, except that
// when the table has gone since it was seen (dropped by hand) it returns
// the error noSerials makes.
func (s *Store) serialErr(ctx context.Context, err error, what string) error {
	if ctx.Err() == nil && !s.closed.Load() {
		var ok bool
		if qerr := s.db.QueryRowContext(ctx, s.d.SQL.SerialsTable).Scan(&ok); qerr == nil && !ok {
			s.hasSerials.Store(false)
			return s.noSerials(what)
		}
	}
	return s.wrap(ctx, err, what)
}

// serialRow is an idforge_serials row as scanned.
type serialRow struct {
	name, template string
	timeZone, desc sql.NullString
	updated        sql.NullTime
}

func (r *serialRow) serial() idforge.Serial {
	return idforge.Serial{
		Name:        r.name,
		Template:    r.template,
		TimeZone:    r.timeZone.String,
		Description: r.desc.String,
		Updated:     r.updated.Time.UTC(),
	}
}

// nullString stores an empty string as NULL.
func nullString(s string) sql.NullString {
	return sql.NullString{String: s, Valid: s != ""}
}
