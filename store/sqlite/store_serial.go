package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/idforge/idforge"
)

// CreateSerial implements idforge.SerialStore: it adds an idforge_serials
// row. Serial names are a namespace of their own: a key of the same name
// does not take it.
//
// Errors: those of idforge.Serial.Validate; ErrKeyExists when a serial of
// that name exists (the table's primary key decides, also between
// processes sharing the file); ErrClosed after Close; an error wrapping
// ErrInvalidArgument that says to run `idforge migrate` when the table
// has been dropped since Open.
func (s *Store) CreateSerial(ctx context.Context, def idforge.Serial) error {
	if err := s.checkOpen(); err != nil {
		return err
	}
	if err := def.Validate(); err != nil {
		return err
	}
	_, err := s.w.ExecContext(ctx, insertSerialSQL, def.Name, def.Template, nullString(def.TimeZone), nullString(def.Description))
	if err != nil {
		if isConstraint(err) {
			return fmt.Errorf("%w: serial %q", idforge.ErrKeyExists, def.Name)
		}
		return s.serialErr(ctx, err, fmt.Sprintf("create serial %q", def.Name))
	}
	return nil
}

// Serial implements idforge.SerialStore. It returns an error wrapping
// idforge.ErrUnknownKey when there is no serial of that name, and
// ErrClosed after Close.
func (s *Store) Serial(ctx context.Context, name string) (idforge.Serial, error) {
	if err := s.checkOpen(); err != nil {
		return idforge.Serial{}, err
	}
	var r serialRow
	err := s.r.QueryRowContext(ctx, serialSQL, name).Scan(&r.name, &r.template, &r.timeZone, &r.desc, &r.updated)
	if errors.Is(err, sql.ErrNoRows) {
		return idforge.Serial{}, fmt.Errorf("%w: serial %q", idforge.ErrUnknownKey, name)
	}
	if err != nil {
		return idforge.Serial{}, s.serialErr(ctx, err, fmt.Sprintf("read serial %q", name))
	}
	return r.serial()
}

// Serials implements idforge.SerialStore: every serial definition, sorted
// by name (byte order). It returns an error wrapping ErrClosed after
// Close.
func (s *Store) Serials(ctx context.Context) ([]idforge.Serial, error) {
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	rows, err := s.r.QueryContext(ctx, serialsSQL)
	if err != nil {
		return nil, s.serialErr(ctx, err, "list serials")
	}
	defer rows.Close()
	out := []idforge.Serial{}
	for rows.Next() {
		var r serialRow
		if err := rows.Scan(&r.name, &r.template, &r.timeZone, &r.desc, &r.updated); err != nil {
			return nil, s.wrap(ctx, err, "list serials")
		}
		def, err := r.serial()
		if err != nil {
			return nil, err
		}
		out = append(out, def)
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrap(ctx, err, "list serials")
	}
	return out, nil
}

// serialErr is wrap for the statements on idforge_serials, except that
// when the table is gone (dropped by hand since Open created it) it says
// how to get it back.
func (s *Store) serialErr(ctx context.Context, err error, what string) error {
	if ctx.Err() == nil && !s.closed.Load() {
		var exists bool
		if qerr := s.r.QueryRowContext(ctx, serialsTableSQL).Scan(&exists); qerr == nil && !exists {
			return fmt.Errorf("%w: sqlite: %s: database %s has no table idforge_serials, which serial definitions are kept in: run `idforge migrate`",
				idforge.ErrInvalidArgument, what, s.path)
		}
	}
	return s.wrap(ctx, err, what)
}

// serialRow is an idforge_serials row as scanned. update_time is checked
// as in keyRow, since a hand edit can store anything.
type serialRow struct {
	name, template string
	timeZone, desc sql.NullString
	updated        any
}

func (r *serialRow) serial() (idforge.Serial, error) {
	t, err := parseTime(r.updated)
	if err != nil {
		return idforge.Serial{}, fmt.Errorf("sqlite: serial %q: update_time: %w", r.name, err)
	}
	return idforge.Serial{
		Name:        r.name,
		Template:    r.template,
		TimeZone:    r.timeZone.String,
		Description: r.desc.String,
		Updated:     t,
	}, nil
}

// nullString stores an empty string as NULL.
func nullString(s string) sql.NullString {
	return sql.NullString{String: s, Valid: s != ""}
}
