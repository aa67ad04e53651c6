package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/store"
	"github.com/idforge/idforge/store/internal/claim"
)

// DefinitionsTable is the table operators' definitions
// (idforge.DefinitionStore) are kept in, one row per (kind, name).
const DefinitionsTable = "idforge_definitions"

// CreateDefinition implements idforge.DefinitionStore: it adds an
// idforge_definitions row. The table's primary key (kind, name) decides
// between creators, also in several processes.
//
// Errors: those of idforge.Definition.Validate; ErrKeyExists when the
// kind has a definition of that name, live or retired; an error wrapping
// ErrInvalidArgument that says to run `idforge migrate` when the database
// has no idforge_definitions table; ErrClosed after Close.
func (s *Store) CreateDefinition(ctx context.Context, d idforge.Definition) error {
	if err := d.Validate(); err != nil {
		return err
	}
	return s.insert(ctx, s.defsT(), claim.DefinitionName(d.Kind, d.Name), s.sql.InsertDefinition,
		d.Kind, d.Name, d.Spec, nullString(d.Description))
}

// UpdateDefinition implements idforge.DefinitionStore: it replaces the
// spec and description of a live definition. Its errors are
// CreateDefinition's, with ErrUnknownKey when there is no such definition
// and idforge.ErrRetired when it is retired.
func (s *Store) UpdateDefinition(ctx context.Context, d idforge.Definition) error {
	if err := d.Validate(); err != nil {
		return err
	}
	return s.changeDefinition(ctx, d.Kind, d.Name, "update "+claim.DefinitionName(d.Kind, d.Name), true,
		s.sql.UpdateDefinition, d.Spec, nullString(d.Description), d.Kind, d.Name)
}

// RetireDefinition implements idforge.DefinitionStore: it marks a
// definition retired, which it stays. Its errors are CreateDefinition's,
// with ErrUnknownKey when there is no such definition.
func (s *Store) RetireDefinition(ctx context.Context, kind, name string) error {
	return s.changeDefinition(ctx, kind, name, "retire "+claim.DefinitionName(kind, name), false,
		s.sql.RetireDefinition, kind, name)
}

// changeDefinition runs an UPDATE of one row (stmt with args). When it
// changes no row (no such row, a retired row for an update, or a row
// already as asked: MySQL counts changed rows), it reads the row to tell
// which.
func (s *Store) changeDefinition(ctx context.Context, kind, name, what string, live bool, stmt string, args ...any) error {
	ctx, cancel, err := s.start(ctx, s.defsT(), what)
	defer cancel()
	if err != nil {
		return err
	}
	res, err := s.db.ExecContext(ctx, stmt, args...)
	if err != nil {
		return s.tableErr(ctx, err, s.defsT(), what)
	}
	if n, err := res.RowsAffected(); err == nil && n > 0 {
		return nil
	}
	d, err := s.definition(ctx, s.db, kind, name, what)
	return store.WhyUnchanged(d, err, live)
}

// Definition implements idforge.DefinitionStore. Its errors are
// CreateDefinition's, with ErrUnknownKey when there is no such
// definition.
func (s *Store) Definition(ctx context.Context, kind, name string) (idforge.Definition, error) {
	what := "read " + claim.DefinitionName(kind, name)
	ctx, cancel, err := s.start(ctx, s.defsT(), what)
	defer cancel()
	if err != nil {
		return idforge.Definition{}, err
	}
	return s.definition(ctx, s.rdb, kind, name, what)
}

// definition reads one row on q.
func (s *Store) definition(ctx context.Context, q Querier, kind, name, what string) (idforge.Definition, error) {
	var r defRow
	err := q.QueryRowContext(ctx, s.sql.Definition, kind, name).Scan(r.dest()...)
	if errors.Is(err, sql.ErrNoRows) {
		return idforge.Definition{}, fmt.Errorf("%w: %s", idforge.ErrUnknownKey, claim.DefinitionName(kind, name))
	}
	if err != nil {
		return idforge.Definition{}, s.tableErr(ctx, err, s.defsT(), what)
	}
	return r.definition(), nil
}

// Definitions implements idforge.DefinitionStore: every definition of
// kind, retired ones included, sorted by name in byte order (whatever the
// table's collation). Its errors are CreateDefinition's.
func (s *Store) Definitions(ctx context.Context, kind string) ([]idforge.Definition, error) {
	return listRows(ctx, s, s.defsT(), "list "+kind+" definitions", s.sql.Definitions, []any{kind}, (*defRow).definition,
		func(d idforge.Definition) string { return d.Name })
}

// defsT is idforge_definitions, which `idforge migrate` creates.
func (s *Store) defsT() optionalTable {
	return optionalTable{&s.hasDefs, DefinitionsTable, "operators' definitions"}
}

// defRow is an idforge_definitions row as scanned.
type defRow struct {
	kind, name, spec string
	desc             sql.NullString
	retired          bool
	updated          rowTime
}

func (r *defRow) dest() []any {
	return []any{&r.kind, &r.name, &r.spec, &r.desc, &r.retired, &r.updated}
}

func (r *defRow) definition() idforge.Definition {
	return idforge.Definition{Kind: r.kind, Name: r.name, Spec: r.spec, Description: r.desc.String,
		Retired: r.retired, Updated: r.updated.Time}
}
