package mongo

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/mongo"
)

// Migrate implements idforge.Migrator: it creates the Collections that
// do not exist. Names are each document's
// _id, whose unique index MongoDB keeps on every collection, so no other
// index is needed: no index can go missing. It is idempotent and safe to
// run while nodes serve, from several processes at once. It is bounded
// by ctx only, and returns an error wrapping idforge.ErrClosed after
// Close.
func (s *Store) Migrate(ctx context.Context) error {
	_, err := s.MigrateTables(ctx)
	return err
}

// MigrateTables is Migrate that also returns the collections it created,
// for `idforge migrate` to report.
func (s *Store) MigrateTables(ctx context.Context) ([]string, error) {
	if err := s.life.CheckOpen(); err != nil {
		return nil, err
	}
	missing, err := s.missing(ctx)
	if err != nil {
		return nil, err
	}
	for _, c := range missing {
		err := s.db.CreateCollection(ctx, c)
		var ce mongo.CommandError
		if err != nil && !(errors.As(err, &ce) && ce.HasErrorCode(namespaceExists)) {
			return nil, s.life.Wrap(ctx, err, fmt.Sprintf("migrate %s: create collection %s", s.life.DB, c))
		}
	}
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	s.life.Log.Info("mongodb: collections are up to date", "db", s.life.DB)
	return missing, nil
}

// namespaceExists is the server's error code for a collection created
// meanwhile by another process.
const namespaceExists = 48
