package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/sqldb"
	"github.com/idforge/idforge/store"
)

// CreateKey implements idforge.KeyStore. A segment key becomes a
// leaf_alloc row (max_id = k.MaxID, the first ID issued; step = k.Step);
// any other key becomes an idforge_keys row. The name must be free in both
// tables: the backend's lock per name (Backend.WithNameLock) serialises
// creators in every process, and each table's primary key backs it up
// against rows inserted by other means (Leaf's console, an operator).
//
// Errors: those of idforge.Key.Validate; ErrKeyExists when the name is
// taken, whatever the strategy (with a case-insensitive collation on an
// existing Leaf table, a name differing only in case is taken too); an
// error saying to run `idforge migrate` for a key of another strategy
// when the database has no idforge_keys table; ErrClosed after Close.
func (s *Store) CreateKey(ctx context.Context, k idforge.Key) error {
	if err := s.life.CheckOpen(); err != nil {
		return err
	}
	if err := k.Validate(); err != nil {
		return err
	}
	ctx, cancel := s.life.Context(ctx)
	defer cancel()
	what := fmt.Sprintf("create key %q", k.Name)
	sch, err := s.ready(ctx)
	if err != nil {
		return err
	}
	hasKeys, err := s.keysTable(ctx)
	if err != nil {
		return err
	}
	if k.Strategy != idforge.StrategySegment && !hasKeys {
		return s.noTable(s.keysT(), what)
	}

	errTaken := fmt.Errorf("%w: %q", idforge.ErrKeyExists, k.Name)
	err = s.d.WithNameLock(ctx, s.db, k.Name, func(q Querier) error {
		var taken bool
		var err error
		if hasKeys {
			err = q.QueryRowContext(ctx, s.sql.NameTakenKeys, k.Name, k.Name).Scan(&taken)
		} else {
			err = q.QueryRowContext(ctx, s.sql.NameTaken, k.Name).Scan(&taken)
		}
		if err != nil {
			return err
		}
		if taken {
			return errTaken
		}
		desc := sql.NullString{String: k.Description, Valid: k.Description != ""}
		if k.Strategy == idforge.StrategySegment {
			_, err = q.ExecContext(ctx, sch.insertSegmentSQL, k.Name, k.MaxID, k.Step, desc)
		} else {
			_, err = q.ExecContext(ctx, s.sql.InsertOther, k.Name, string(k.Strategy), desc)
		}
		return err
	})
	switch {
	case err == nil:
		return nil
	case errors.Is(err, errTaken):
		return err
	case sqldb.KindOf(err) == sqldb.Duplicate:
		return errTaken
	}
	return s.life.Wrap(ctx, err, what)
}

// Key implements idforge.KeyStore. It returns an error wrapping
// idforge.ErrUnknownKey when neither table has the name, and ErrClosed
// after Close. The key's Name is as stored, which differs from name only
// under a case-insensitive collation (an existing Leaf table). Should a
// name be in both tables (only possible by editing them by hand), the
// segment key wins, because that is the row ClaimSegment uses.
func (s *Store) Key(ctx context.Context, name string) (idforge.Key, error) {
	if err := s.life.CheckOpen(); err != nil {
		return idforge.Key{}, err
	}
	ctx, cancel := s.life.Context(ctx)
	defer cancel()
	what := fmt.Sprintf("read key %q", name)
	sch, err := s.ready(ctx)
	if err != nil {
		return idforge.Key{}, err
	}
	var r segmentRow
	err = sch.key.queryRow(ctx, s.rdb, name).Scan(&r.name, &r.maxID, &r.step, &r.desc, &r.updated)
	if err == nil {
		return r.key()
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return idforge.Key{}, s.life.Wrap(ctx, err, what)
	}
	hasKeys, err := s.keysTable(ctx)
	if err != nil {
		return idforge.Key{}, err
	}
	if !hasKeys {
		return idforge.Key{}, fmt.Errorf("%w: %q", idforge.ErrUnknownKey, name)
	}
	var o otherRow
	err = s.rdb.QueryRowContext(ctx, s.sql.KeyOther, name).Scan(&o.name, &o.strategy, &o.desc, &o.updated)
	if errors.Is(err, sql.ErrNoRows) {
		return idforge.Key{}, fmt.Errorf("%w: %q", idforge.ErrUnknownKey, name)
	}
	if err != nil {
		return idforge.Key{}, s.life.Wrap(ctx, err, what)
	}
	return o.key(), nil
}

// Keys implements idforge.KeyStore: every key of both tables, sorted by
// name in byte order (whatever the tables' collations). A name in both
// tables is listed once, as its leaf_alloc row. It returns an error
// wrapping ErrClosed after Close.
func (s *Store) Keys(ctx context.Context) ([]idforge.Key, error) {
	if err := s.life.CheckOpen(); err != nil {
		return nil, err
	}
	ctx, cancel := s.life.Context(ctx)
	defer cancel()
	sch, err := s.ready(ctx)
	if err != nil {
		return nil, err
	}
	out := []idforge.Key{}
	segs := map[string]bool{}
	rows, err := s.rdb.QueryContext(ctx, sch.keysSQL)
	if err != nil {
		return nil, s.life.Wrap(ctx, err, "list keys")
	}
	defer rows.Close()
	for rows.Next() {
		var r segmentRow
		if err := rows.Scan(&r.name, &r.maxID, &r.step, &r.desc, &r.updated); err != nil {
			return nil, s.life.Wrap(ctx, err, "list keys")
		}
		k, err := r.key()
		if err != nil {
			return nil, err
		}
		out = append(out, k)
		segs[k.Name] = true
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, s.life.Wrap(ctx, err, "list keys")
	}

	hasKeys, err := s.keysTable(ctx)
	if err != nil {
		return nil, err
	}
	if hasKeys {
		rows, err := s.rdb.QueryContext(ctx, s.sql.KeysOther)
		if err != nil {
			return nil, s.life.Wrap(ctx, err, "list keys")
		}
		defer rows.Close()
		for rows.Next() {
			var o otherRow
			if err := rows.Scan(&o.name, &o.strategy, &o.desc, &o.updated); err != nil {
				return nil, s.life.Wrap(ctx, err, "list keys")
			}
			if segs[o.name] {
				s.life.Log.Warn(s.d.Name+": key is in both leaf_alloc and idforge_keys; using the leaf_alloc row",
					"db", s.life.DB, "key", o.name)
				continue
			}
			out = append(out, o.key())
		}
		if err := rows.Err(); err != nil {
			return nil, s.life.Wrap(ctx, err, "list keys")
		}
	}
	slices.SortFunc(out, func(a, b idforge.Key) int { return cmp.Compare(a.Name, b.Name) })
	return out, nil
}

// segmentRow is a leaf_alloc row as scanned. A hand-made table may allow
// NULLs where Leaf's does not.
type segmentRow struct {
	name        string
	maxID, step sql.NullInt64
	desc        sql.NullString
	updated     rowTime
}

func (r *segmentRow) key() (idforge.Key, error) {
	if !r.maxID.Valid || !r.step.Valid {
		return idforge.Key{}, errNotIntegers(r.name)
	}
	return idforge.Key{
		Name:        r.name,
		Strategy:    idforge.StrategySegment,
		Step:        r.step.Int64,
		MaxID:       r.maxID.Int64,
		Description: r.desc.String,
		Updated:     r.updated.Time,
	}, nil
}

// otherRow is an idforge_keys row as scanned.
type otherRow struct {
	name, strategy string
	desc           sql.NullString
	updated        rowTime
}

func (o *otherRow) key() idforge.Key {
	return idforge.Key{
		Name:        o.name,
		Strategy:    idforge.Strategy(o.strategy),
		Description: o.desc.String,
		Updated:     o.updated.Time,
	}
}

// UpdateKey implements idforge.KeyUpdater: it sets a segment key's step
// and description in its leaf_alloc row (never max_id), or another key's
// description in its idforge_keys row. Errors: ErrUnknownKey when neither
// table has the name, those of idforge.Key.ValidateUpdate, ErrClosed
// after Close.
func (s *Store) UpdateKey(ctx context.Context, name string, step int64, description string) error {
	k, err := store.KeyToUpdate(ctx, s, name, step, description)
	if err != nil {
		return err
	}
	ctx, cancel := s.life.Context(ctx)
	defer cancel()
	sch, err := s.ready(ctx)
	if err != nil {
		return err
	}
	desc := sql.NullString{String: description, Valid: description != ""}
	var res sql.Result
	if k.Strategy == idforge.StrategySegment {
		res, err = s.db.ExecContext(ctx, sch.updateSegmentSQL, step, desc, k.Name)
	} else {
		res, err = s.db.ExecContext(ctx, s.sql.UpdateOther, desc, k.Name)
	}
	what := fmt.Sprintf("update key %q", name)
	if err != nil {
		return s.life.Wrap(ctx, err, what)
	}
	if n, err := res.RowsAffected(); err != nil {
		return s.life.Wrap(ctx, err, what)
	} else if n == 0 {
		return fmt.Errorf("%w: %q", idforge.ErrUnknownKey, name)
	}
	return nil
}
