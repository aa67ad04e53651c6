package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/idforge/idforge"
	sqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// CreateKey implements idforge.KeyStore. A segment key becomes a
// leaf_alloc row (max_id = k.MaxID, the first ID issued; step = k.Step);
// any other key becomes an idforge_keys row. The name must be free in both
// tables.
//
// Errors: those of idforge.Key.Validate; ErrKeyExists when the name is
// taken, whatever the strategy; ErrClosed after Close.
func (s *Store) CreateKey(ctx context.Context, k idforge.Key) error {
	if err := s.checkOpen(); err != nil {
		return err
	}
	if err := k.Validate(); err != nil {
		return err
	}
	what := fmt.Sprintf("create key %q", k.Name)
	desc := sql.NullString{String: k.Description, Valid: k.Description != ""}

	// BEGIN IMMEDIATE (see dsn): the check and the insert hold the write
	// lock together, also against other processes.
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return s.wrap(ctx, err, what)
	}
	defer tx.Rollback() // no-op after Commit

	var taken bool
	if err := tx.QueryRowContext(ctx, nameTakenSQL, k.Name).Scan(&taken); err != nil {
		return s.wrap(ctx, err, what)
	}
	if taken {
		return fmt.Errorf("%w: %q", idforge.ErrKeyExists, k.Name)
	}
	if k.Strategy == idforge.StrategySegment {
		_, err = tx.ExecContext(ctx, s.insertSegmentSQL, k.Name, k.MaxID, k.Step, desc)
	} else {
		_, err = tx.ExecContext(ctx, insertOtherSQL, k.Name, string(k.Strategy), desc)
	}
	if err == nil {
		err = tx.Commit()
	}
	if err != nil {
		// The check above makes this unlikely, but the primary key is
		// what guarantees uniqueness.
		if isConstraint(err) {
			return fmt.Errorf("%w: %q", idforge.ErrKeyExists, k.Name)
		}
		return s.wrap(ctx, err, what)
	}
	return nil
}

// isConstraint reports whether err is SQLite's primary key or unique
// constraint violation.
func isConstraint(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() {
	case sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY, sqlite3.SQLITE_CONSTRAINT_UNIQUE:
		return true
	}
	return false
}

// Key implements idforge.KeyStore. It returns an error wrapping
// idforge.ErrUnknownKey when neither table has the name, and ErrClosed
// after Close. Should a name be in both tables (only possible by editing
// them by hand), the segment key wins, because that is the row
// ClaimSegment uses.
func (s *Store) Key(ctx context.Context, name string) (idforge.Key, error) {
	if err := s.checkOpen(); err != nil {
		return idforge.Key{}, err
	}
	var r keyRow
	err := s.keyStmt.QueryRowContext(ctx, name).Scan(&r.src, &r.strategy, &r.step, &r.maxID, &r.desc, &r.updated)
	if errors.Is(err, sql.ErrNoRows) {
		return idforge.Key{}, fmt.Errorf("%w: %q", idforge.ErrUnknownKey, name)
	}
	if err != nil {
		return idforge.Key{}, s.wrap(ctx, err, fmt.Sprintf("read key %q", name))
	}
	r.name = name
	return r.key()
}

// Keys implements idforge.KeyStore: every key of both tables, sorted by
// name (byte order). It returns an error wrapping ErrClosed after Close.
func (s *Store) Keys(ctx context.Context) ([]idforge.Key, error) {
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	rows, err := s.r.QueryContext(ctx, s.keysSQL)
	if err != nil {
		return nil, s.wrap(ctx, err, "list keys")
	}
	defer rows.Close()
	var out []idforge.Key
	for rows.Next() {
		var r keyRow
		if err := rows.Scan(&r.name, &r.src, &r.strategy, &r.step, &r.maxID, &r.desc, &r.updated); err != nil {
			return nil, s.wrap(ctx, err, "list keys")
		}
		if n := len(out); n > 0 && out[n-1].Name == r.name {
			s.log.Warn("sqlite: key is in both leaf_alloc and idforge_keys; using the leaf_alloc row",
				"path", s.path, "key", r.name)
			continue
		}
		k, err := r.key()
		if err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrap(ctx, err, "list keys")
	}
	if out == nil {
		out = []idforge.Key{}
	}
	return out, nil
}

// keyRow is one row of keySQL or keysSQL as scanned. Values that a hand
// edit could have given any type are scanned as any and checked in key.
type keyRow struct {
	name        string
	src         int
	strategy    string
	step, maxID any
	desc        sql.NullString
	updated     any
}

func (r *keyRow) key() (idforge.Key, error) {
	k := idforge.Key{Name: r.name, Strategy: idforge.Strategy(r.strategy), Description: r.desc.String}
	var ok bool
	if k.Step, ok = r.step.(int64); !ok {
		return idforge.Key{}, fmt.Errorf("%w: key %q: leaf_alloc step %v is not an integer", idforge.ErrInvalidArgument, r.name, r.step)
	}
	if k.MaxID, ok = r.maxID.(int64); !ok {
		return idforge.Key{}, fmt.Errorf("%w: key %q: leaf_alloc max_id %v is not an integer", idforge.ErrInvalidArgument, r.name, r.maxID)
	}
	t, err := parseTime(r.updated)
	if err != nil {
		return idforge.Key{}, fmt.Errorf("sqlite: key %q: update_time: %w", r.name, err)
	}
	k.Updated = t
	return k, nil
}

// timeLayouts are the text forms of update_time accepted, tried in order:
// SQLite's CURRENT_TIMESTAMP first, then what a hand edit or an import
// from MySQL or PostgreSQL may leave.
var timeLayouts = []string{
	time.DateTime,                   // CURRENT_TIMESTAMP: 2006-01-02 15:04:05
	"2006-01-02 15:04:05.999999999", // with fractional seconds
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999-07", // PostgreSQL timestamptz text
	time.RFC3339Nano,                   // 2006-01-02T15:04:05.999999999Z07:00
	"2006-01-02T15:04:05.999999999",    // ISO 8601 without zone
	time.DateOnly,
}

// parseTime converts an update_time value as the driver returns it. Text
// without a zone is UTC, which is what CURRENT_TIMESTAMP writes; an
// integer is Unix seconds. NULL (possible only in a hand-made table) is
// the zero time.
func parseTime(v any) (time.Time, error) {
	switch v := v.(type) {
	case nil:
		return time.Time{}, nil
	case time.Time:
		return v.UTC(), nil
	case int64:
		return time.Unix(v, 0).UTC(), nil
	case float64:
		sec := int64(v)
		return time.Unix(sec, int64((v-float64(sec))*1e9)).UTC(), nil
	case []byte:
		return parseTimeText(string(v))
	case string:
		return parseTimeText(v)
	}
	return time.Time{}, fmt.Errorf("unexpected value %v of type %T", v, v)
}

func parseTimeText(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	for _, layout := range timeLayouts {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return t.UTC(), nil
		}
	}
	if sec, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.Unix(sec, 0).UTC(), nil
	}
	return time.Time{}, fmt.Errorf("cannot parse %q as a time", s)
}
