package sqlstore

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/idforge/idforge/internal/sqldb"
)

// Migrate implements idforge.Migrator: it creates leaf_alloc,
// idforge_keys, idforge_serials and the gap-free serials' tables where they do not exist
// (Backend.CreateTables), and, on a server, the failover fence
// idforge_fence recording the server it runs on (sqldb.Fence), and
// then checks them as Open does. An existing fence is left alone. An existing
// table, Leaf's leaf_alloc included, is left as it is with its rows, its
// collation and its column named desc rather than description if it has
// one; a database migrated by an older idforge gains idforge_serials. It
// is idempotent and safe to run while nodes serve, from several processes
// at once. It is bounded by ctx only, not by the Config's Timeout: DDL may
// legitimately wait for locks.
//
// It returns an error wrapping idforge.ErrClosed after Close, and an
// error naming the columns when an existing table is not the one idforge
// expects.
func (s *Store) Migrate(ctx context.Context) error {
	if err := s.life.CheckOpen(); err != nil {
		return err
	}
	if err := cmp.Or(s.d.CreateTables(ctx, s.db), s.createGapless(ctx)); err != nil {
		return s.life.Wrap(ctx, err, fmt.Sprintf("migrate %s", s.life.DB))
	}
	if s.fence != nil {
		if err := s.fence.Create(ctx, s.db); err != nil {
			return s.life.Wrap(ctx, err, fmt.Sprintf("migrate %s: create %s", s.life.DB, sqldb.FenceTable))
		}
	}
	if _, err := s.load(ctx); err != nil {
		return err
	}
	s.life.Log.Info(s.d.Name+": schema is up to date", "db", s.life.DB)
	return nil
}

// Tables are idforge's tables, in the order Migrate creates them.
var Tables = []string{"leaf_alloc", "idforge_keys", "idforge_serials", DefinitionsTable}

// MigrateTables is Migrate that also returns the tables of Tables this
// Store created: those Migrate created now, and those Open created when
// the dialect creates them there (Backend.CreateTablesOnOpen). `idforge
// migrate` reports with it what it did. A table another process creates
// between the check and the creation may be counted as created here.
func (s *Store) MigrateTables(ctx context.Context) ([]string, error) {
	if err := s.life.CheckOpen(); err != nil {
		return nil, err
	}
	missing, err := s.missingTables(ctx)
	if err != nil {
		return nil, err
	}
	if ok, err := s.exists(ctx, s.gaplessT()); err != nil || !ok {
		missing = append(missing, GaplessTable, ReservationsTable) // created together
	}
	if s.fence != nil {
		has, err := s.fence.Exists(ctx, s.db)
		if err != nil {
			return nil, s.life.Wrap(ctx, err, "look for table "+sqldb.FenceTable)
		}
		if !has {
			missing = append(missing, sqldb.FenceTable)
		}
	}
	if err := s.Migrate(ctx); err != nil {
		return nil, err
	}
	return append(slices.Clone(s.createdOnOpen), missing...), nil
}

// missingTables returns the tables of Tables the database lacks.
func (s *Store) missingTables(ctx context.Context) ([]string, error) {
	cols, err := s.columns(ctx)
	if err != nil {
		return nil, err
	}
	var missing []string
	for _, t := range Tables {
		if len(cols[t]) == 0 {
			missing = append(missing, t)
		}
	}
	return missing, nil
}
