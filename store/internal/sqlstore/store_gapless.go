package sqlstore

import (
	"cmp"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/sqldb"
	"github.com/idforge/idforge/store/internal/claim"
)

// The gap-free serials' tables. idforge_gapless holds each serial's last
// number (and, for one defined through the API, its settings: expiry_ms is
// NULL for a serial of a configuration file); idforge_reservations one row
// per number ever handed out, written in the transaction that took the
// number from idforge_gapless, so no number exists without its row.
const (
	GaplessTable      = "idforge_gapless"
	ReservationsTable = "idforge_reservations"
)

var _ idforge.GaplessStore = (*Store)(nil)

// createGapless creates the gap-free serials' tables where they do not
// exist (Migrate, and Open where the backend creates tables on open).
func (s *Store) createGapless(ctx context.Context) error {
	d := s.d.Dialect
	name := d.Text(128) + " NOT NULL"
	index := ""
	if d.OnDuplicateKey { // MySQL has no CREATE INDEX IF NOT EXISTS
		index = ", INDEX idforge_reservations_open (serial, state, expires)"
	}
	for _, ddl := range []string{
		"CREATE TABLE IF NOT EXISTS " + GaplessTable + " (name " + name + " PRIMARY KEY, last BIGINT NOT NULL, " +
			"reuse_expired BOOLEAN NOT NULL DEFAULT FALSE, expiry_ms BIGINT)" + d.TableOptions,
		"CREATE TABLE IF NOT EXISTS " + ReservationsTable + " (serial " + name + ", number BIGINT NOT NULL, " +
			"token " + d.Text(32) + " NOT NULL, state " + d.Text(16) + " NOT NULL, reason " + d.Text(256) + ", " +
			"value " + d.Text(idforge.MaxTemplateLen) + " NOT NULL, reserved BIGINT NOT NULL, expires BIGINT NOT NULL, " +
			"updated BIGINT NOT NULL, PRIMARY KEY (serial, number)" + index + ")" + d.TableOptions,
		"CREATE INDEX IF NOT EXISTS idforge_reservations_open ON " + ReservationsTable + " (serial, state, expires)",
	} {
		if strings.HasPrefix(ddl, "CREATE INDEX") && index != "" {
			continue
		}
		// PostgreSQL's IF NOT EXISTS loses a race with a concurrent
		// creator (a duplicate catalog row): once it committed, the
		// second try sees its table.
		_, err := s.db.ExecContext(ctx, ddl)
		if sqldb.KindOf(err) == sqldb.Duplicate {
			_, err = s.db.ExecContext(ctx, ddl)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) gaplessT() optionalTable {
	return optionalTable{&s.hasGapless, ReservationsTable, "gap-free serials"}
}

// createSerialGapless is CreateSerial for a gap-free serial: the
// definition and its counter row in one transaction, so that no node can
// see the serial without its settings.
func (s *Store) createSerialGapless(ctx context.Context, def idforge.Serial) error {
	what := "create " + claim.SerialName(def.Name)
	ctx, cancel, err := s.start(ctx, s.gaplessT(), what)
	defer cancel()
	if err == nil {
		err = s.optionalTable(ctx, s.serialsT(), what)
	}
	if err != nil {
		return err
	}
	err = InTx(ctx, s.db, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, s.sql.InsertSerial, def.Name, def.Template, nullString(def.TimeZone), nullString(def.Description)); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, s.d.Rebind("INSERT INTO "+GaplessTable+" (name, last, reuse_expired, expiry_ms) VALUES (?, 0, ?, ?)"),
			def.Name, def.ReuseExpired, def.ReservationExpiry().Milliseconds())
		return err
	})
	if sqldb.KindOf(err) == sqldb.Duplicate {
		return fmt.Errorf("%w: %s", idforge.ErrKeyExists, claim.SerialName(def.Name))
	}
	if err != nil {
		return s.life.Wrap(ctx, err, what)
	}
	return nil
}

// withGapless adds the gap-free settings kept in idforge_gapless to
// serial definitions read from idforge_serials.
func (s *Store) withGapless(ctx context.Context, defs []idforge.Serial) ([]idforge.Serial, error) {
	if ok, err := s.seen(ctx, s.gaplessT()); err != nil || !ok || len(defs) == 0 {
		return defs, err
	}
	q := "SELECT name, reuse_expired <> FALSE, expiry_ms FROM " + GaplessTable + " WHERE expiry_ms IS NOT NULL"
	args := []any{}
	if len(defs) == 1 {
		q += " AND name = ?"
		args = append(args, defs[0].Name)
	}
	rows, err := s.rdb.QueryContext(ctx, s.d.Rebind(q), args...)
	if err != nil {
		return nil, s.life.Wrap(ctx, err, "read gap-free settings")
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var reuse bool
		var ms int64
		if err := rows.Scan(&name, &reuse, &ms); err != nil {
			return nil, s.life.Wrap(ctx, err, "read gap-free settings")
		}
		for i := range defs {
			if defs[i].Name == name {
				defs[i].Gapless, defs[i].ReuseExpired, defs[i].Expiry = true, reuse, time.Duration(ms)*time.Millisecond
			}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, s.life.Wrap(ctx, err, "read gap-free settings")
	}
	return defs, nil
}

// gapless runs one step of a gap-free serial in a transaction, after the
// checks every step makes, retrying a transient failure (a deadlock): the
// transaction rolled back, so nothing of it happened.
func (s *Store) gapless(ctx context.Context, def idforge.Serial, what string, fn func(context.Context, *sql.Tx) error) error {
	what = what + " of " + claim.SerialName(def.Name)
	ctx, cancel, err := s.start(ctx, s.gaplessT(), what)
	defer cancel()
	if err != nil {
		return err
	}
	for attempt := 0; ; attempt++ {
		err = InTx(ctx, s.db, func(tx *sql.Tx) error {
			if sch := s.sch.Load(); sch != nil && sch.fenced {
				// A promoted replica that lacks the last reservations
				// would hand their numbers out again.
				if err := s.fence.Check(ctx, tx, s.life.DB); err != nil {
					return err
				}
			}
			return fn(ctx, tx)
		})
		if err == nil || idforge.ErrorCode(err) != idforge.CodeInternal {
			return err
		}
		if !sqldb.IsTransient(err) || attempt >= s.retry.Retries || !claim.Backoff(ctx, attempt) {
			return s.life.Wrap(ctx, err, what)
		}
	}
}

// Reserve implements idforge.GaplessStore: in one transaction it locks
// the serial's counter row by counting on it, then either hands on the
// lowest expired reservation (def.ReuseExpired; the count taken back) or
// voids the expired ones and records the new number's row.
func (s *Store) Reserve(ctx context.Context, def idforge.Serial, now time.Time, value func(int64) (string, error)) (idforge.Reservation, error) {
	at, exp := now.UnixMilli(), now.Add(def.ReservationExpiry()).UnixMilli()
	r := idforge.Reservation{State: idforge.Reserved, Reserved: time.UnixMilli(at).UTC(), Expires: time.UnixMilli(exp).UTC()}
	err := s.gapless(ctx, def, "reserve a number", func(ctx context.Context, tx *sql.Tx) error {
		count := s.d.Rebind("UPDATE " + GaplessTable + " SET last = last + 1 WHERE name = ?")
		res, err := tx.ExecContext(ctx, count, def.Name)
		if n, _ := rowsAffected(res, err); err == nil && n == 0 {
			// A serial of a configuration file: its row on first use,
			// which a concurrent first use may be inserting too.
			if _, err = tx.ExecContext(ctx, s.d.Rebind(s.d.InsertIgnore("INSERT INTO "+GaplessTable+" (name, last) VALUES (?, 0)", "name")), def.Name); err == nil {
				_, err = tx.ExecContext(ctx, count, def.Name)
			}
		}
		if err != nil {
			return err
		}
		token := make([]byte, 8)
		rand.Read(token)
		r.ID = hex.EncodeToString(token)
		if def.ReuseExpired {
			var old sql.NullInt64
			err := tx.QueryRowContext(ctx, s.d.Rebind("SELECT MIN(number) FROM "+ReservationsTable+
				" WHERE serial = ? AND state = 'reserved' AND expires <= ?"), def.Name, at).Scan(&old)
			if err == nil && old.Valid {
				r.Number = old.Int64
				if r.Value, err = value(r.Number); err != nil {
					return err
				}
				// Conditional: its holder may have committed it since
				// (with a clock behind ours); then a new number.
				res, err := tx.ExecContext(ctx, s.d.Rebind("UPDATE "+ReservationsTable+" SET token = ?, value = ?, reserved = ?, expires = ?, updated = ? "+
					"WHERE serial = ? AND number = ? AND state = 'reserved' AND expires <= ?"), r.ID, r.Value, at, exp, at, def.Name, r.Number, at)
				if n, err := rowsAffected(res, err); err != nil || n == 1 {
					if err == nil {
						_, err = tx.ExecContext(ctx, s.d.Rebind("UPDATE "+GaplessTable+" SET last = last - 1 WHERE name = ?"), def.Name)
					}
					return err
				}
			}
			if err != nil {
				return err
			}
		} else if _, err := tx.ExecContext(ctx, s.d.Rebind("UPDATE "+ReservationsTable+" SET state = 'voided', reason = 'expired', updated = expires "+
			"WHERE serial = ? AND state = 'reserved' AND expires <= ?"), def.Name, at); err != nil {
			return err
		}
		if err := tx.QueryRowContext(ctx, s.d.Rebind("SELECT last FROM "+GaplessTable+" WHERE name = ?"), def.Name).Scan(&r.Number); err != nil {
			return err
		}
		if r.Value, err = value(r.Number); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, s.d.Rebind("INSERT INTO "+ReservationsTable+" (serial, number, token, state, value, reserved, expires, updated) "+
			"VALUES (?, ?, ?, 'reserved', ?, ?, ?, ?)"), def.Name, r.Number, r.ID, r.Value, at, exp, at)
		return err
	})
	if err != nil {
		return idforge.Reservation{}, err
	}
	r.ID = strconv.FormatInt(r.Number, 10) + "-" + r.ID
	r.Updated = r.Reserved
	return r, nil
}

// Commit implements idforge.GaplessStore: one conditional UPDATE, then,
// when it matched nothing, what the row says about why.
func (s *Store) Commit(ctx context.Context, def idforge.Serial, id string, now time.Time) (idforge.Reservation, error) {
	return s.end(ctx, def, id, "commit", "state = 'committed', updated = ? WHERE", []any{now.UnixMilli()}, now)
}

// Void implements idforge.GaplessStore as Commit does; an expired
// reservation not handed on yet may still be voided with the caller's
// reason.
func (s *Store) Void(ctx context.Context, def idforge.Serial, id, reason string, now time.Time) (idforge.Reservation, error) {
	return s.end(ctx, def, id, "void", "state = 'voided', reason = ?, updated = ? WHERE", []any{reason, now.UnixMilli()}, now)
}

// end is Commit (a reservation before its expiry) and Void.
func (s *Store) end(ctx context.Context, def idforge.Serial, id, verb, set string, args []any, now time.Time) (idforge.Reservation, error) {
	num, token, err := parseReservation(def.Name, id)
	if err != nil {
		return idforge.Reservation{}, err
	}
	at := now.UnixMilli()
	cond := " serial = ? AND number = ? AND token = ? AND state = 'reserved'"
	args = append(args, def.Name, num, token)
	if verb == "commit" {
		cond += " AND expires > ?"
		args = append(args, at)
	}
	var r idforge.Reservation
	var verdict error // the transaction commits: a void of an expired reservation is kept
	err = s.gapless(ctx, def, verb+" reservation "+id, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, s.d.Rebind("UPDATE "+ReservationsTable+" SET "+set+cond), args...)
		n, err := rowsAffected(res, err)
		if err != nil {
			return err
		}
		r, err = s.reservation(ctx, tx, def.Name, num)
		what := fmt.Sprintf("%s: reservation %s (number %d)", claim.SerialName(def.Name), id, num)
		switch {
		case n == 1 || err != nil && !errors.Is(err, sql.ErrNoRows):
			return err
		case err != nil || r.ID != token && !def.ReuseExpired:
			verdict, err = fmt.Errorf("%w: %s", idforge.ErrUnknownReservation, what), nil
		case r.ID != token:
			verdict = fmt.Errorf("%w: %s expired and was handed to another reservation", idforge.ErrReservationExpired, what)
		case r.State == idforge.Committed:
			verdict = fmt.Errorf("%w: %s", idforge.ErrAlreadyCommitted, what)
		case r.State == idforge.Voided && r.Reason != idforge.ReasonExpired:
			verdict = fmt.Errorf("%w: %s: %s", idforge.ErrReservationVoided, what, r.Reason)
		default:
			verdict = fmt.Errorf("%w: %s expired at %s", idforge.ErrReservationExpired, what, r.Expires.Format(time.RFC3339Nano))
			if r.State == idforge.Reserved && !def.ReuseExpired {
				// Past its expiry and not swept yet: void it now, as
				// Reserve would.
				_, err = tx.ExecContext(ctx, s.d.Rebind("UPDATE "+ReservationsTable+" SET state = 'voided', reason = 'expired', updated = expires "+
					"WHERE serial = ? AND number = ? AND state = 'reserved'"), def.Name, num)
			}
		}
		return err
	})
	if err = cmp.Or(err, verdict); err != nil {
		return idforge.Reservation{}, err
	}
	r.ID = id
	return r, nil
}

// reservation reads one number's row; r.ID is its token.
func (s *Store) reservation(ctx context.Context, q Querier, name string, num int64) (idforge.Reservation, error) {
	rows, err := s.reservations(ctx, q, name, num, num)
	if err == nil && len(rows) == 0 {
		err = sql.ErrNoRows
	}
	if err != nil {
		return idforge.Reservation{}, err
	}
	return rows[0], nil
}

func (s *Store) reservations(ctx context.Context, q Querier, name string, from, to int64) ([]idforge.Reservation, error) {
	rows, err := q.QueryContext(ctx, s.d.Rebind("SELECT number, token, state, reason, value, reserved, expires, updated FROM "+
		ReservationsTable+" WHERE serial = ? AND number >= ? AND number <= ? ORDER BY number"), name, from, to)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []idforge.Reservation
	for rows.Next() {
		var r idforge.Reservation
		var reason sql.NullString
		var at, exp, upd int64
		if err := rows.Scan(&r.Number, &r.ID, &r.State, &reason, &r.Value, &at, &exp, &upd); err != nil {
			return nil, err
		}
		r.Reason = reason.String
		r.Reserved, r.Expires, r.Updated = time.UnixMilli(at).UTC(), time.UnixMilli(exp).UTC(), time.UnixMilli(upd).UTC()
		out = append(out, r)
	}
	return out, rows.Err()
}

// Audit implements idforge.GaplessStore: it voids the expired
// reservations first (but with def.ReuseExpired), then reads the rows;
// IDs are left out.
func (s *Store) Audit(ctx context.Context, def idforge.Serial, from, to int64, now time.Time) ([]idforge.Reservation, int64, error) {
	var out []idforge.Reservation
	var last sql.NullInt64
	err := s.gapless(ctx, def, "audit", func(ctx context.Context, tx *sql.Tx) error {
		if !def.ReuseExpired {
			if _, err := tx.ExecContext(ctx, s.d.Rebind("UPDATE "+ReservationsTable+" SET state = 'voided', reason = 'expired', updated = expires "+
				"WHERE serial = ? AND state = 'reserved' AND expires <= ?"), def.Name, now.UnixMilli()); err != nil {
				return err
			}
		}
		err := tx.QueryRowContext(ctx, s.d.Rebind("SELECT last FROM "+GaplessTable+" WHERE name = ?"), def.Name).Scan(&last)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		out, err = s.reservations(ctx, tx, def.Name, from, to)
		return err
	})
	for i := range out {
		out[i].ID = ""
	}
	return out, last.Int64, err
}

// parseReservation splits a reservation ID, "<number>-<token>".
func parseReservation(name, id string) (int64, string, error) {
	n, token, ok := strings.Cut(id, "-")
	num, err := strconv.ParseInt(n, 10, 64)
	if !ok || err != nil || num < 1 || len(token) != 16 {
		return 0, "", fmt.Errorf("%w: %s: %q is not a reservation ID", idforge.ErrUnknownReservation, claim.SerialName(name), id)
	}
	return num, token, nil
}

func rowsAffected(res sql.Result, err error) (int64, error) {
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
