package sqlstore

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/sqldb"
	"github.com/idforge/idforge/store/internal/claim"
)

// FailoverState implements idforge.FailoverRepairer: the server the
// failover fence records and the server the store reaches. It returns an
// error wrapping idforge.ErrInvalidArgument for a store without a fence
// (SQLite, or a database not migrated since fences were added).
func (s *Store) FailoverState(ctx context.Context) (idforge.FailoverState, error) {
	if err := s.life.CheckOpen(); err != nil {
		return idforge.FailoverState{}, err
	}
	ctx, cancel := s.life.Context(ctx)
	defer cancel()
	if err := s.checkFence(ctx); err != nil {
		return idforge.FailoverState{}, err
	}
	st, err := s.fence.Read(ctx, s.db)
	if err != nil {
		return idforge.FailoverState{}, s.life.Wrap(ctx, err, "read "+sqldb.FenceTable)
	}
	return st, nil
}

// checkFence returns an error wrapping idforge.ErrInvalidArgument when
// the store has no fence.
func (s *Store) checkFence(ctx context.Context) error {
	if s.fence == nil {
		return fmt.Errorf("%w: %s: %s has no replicas to fail over to; nothing to repair", idforge.ErrInvalidArgument, s.d.Name, s.life.DB)
	}
	ok, err := s.fence.Exists(ctx, s.db)
	if err != nil {
		return s.life.Wrap(ctx, err, "look for table "+sqldb.FenceTable)
	}
	if !ok {
		return fmt.Errorf("%w: %s: %s has no table %s: run `idforge migrate` first", idforge.ErrInvalidArgument, s.d.Name, s.life.DB, sqldb.FenceTable)
	}
	return nil
}

// RepairFailover implements idforge.FailoverRepairer. In one
// transaction it raises max_id of the keys (every leaf_alloc row when
// keys is empty) to floor where it is lower, and records the server it
// runs on in the failover fence, so that claims resume above floor. It
// returns an error wrapping idforge.ErrInvalidArgument for a floor below
// 1 or a store without a fence, and idforge.ErrUnknownKey for a key
// leaf_alloc lacks (nothing is changed then). It is bounded by ctx only.
func (s *Store) RepairFailover(ctx context.Context, floor int64, keys []string) (idforge.Repaired, error) {
	var out idforge.Repaired
	if err := s.life.CheckOpen(); err != nil {
		return out, err
	}
	if floor < 1 {
		return out, fmt.Errorf("%w: %s: repair floor %d is below 1", idforge.ErrInvalidArgument, s.d.Name, floor)
	}
	if err := s.checkFence(ctx); err != nil {
		return out, err
	}
	q := s.sql
	err := InTx(ctx, s.db, func(tx *sql.Tx) error {
		out = idforge.Repaired{}
		current := map[string]int64{}
		rows, err := tx.QueryContext(ctx, q.MaxIDs)
		if err != nil {
			return err
		}
		var order []string
		for rows.Next() {
			var key string
			var maxID sql.NullInt64
			if err := rows.Scan(&key, &maxID); err != nil {
				rows.Close()
				return err
			}
			current[key] = maxID.Int64
			order = append(order, key)
		}
		if err := rows.Close(); err != nil {
			return err
		}
		if len(keys) == 0 {
			keys = order
		}
		for _, key := range keys {
			from, ok := current[key]
			if !ok {
				return fmt.Errorf("%w: %q", idforge.ErrUnknownKey, key)
			}
			if from >= floor {
				continue
			}
			if _, err := tx.ExecContext(ctx, q.Raise, floor, key, floor); err != nil {
				return err
			}
			out.Raised = append(out.Raised, idforge.RaisedKey{Key: key, From: from, To: floor})
		}
		before, err := s.fence.Accept(ctx, tx)
		if err != nil {
			return err
		}
		out.Before = before
		out.Server = before.Current
		return nil
	})
	if err != nil {
		if claim.IsVerdict(err) {
			return idforge.Repaired{}, err
		}
		return idforge.Repaired{}, s.life.Wrap(ctx, err, "repair after a fail-over")
	}
	s.life.Log.Warn(s.d.Name+": repaired after a fail-over: claims resume on this server", "db", s.life.DB,
		"server", out.Server, "was", out.Before.Recorded, "floor", floor, "raised_keys", len(out.Raised))
	return out, nil
}
