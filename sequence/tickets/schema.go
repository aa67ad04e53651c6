package tickets

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/idforge/idforge/internal/sqldb"
)

// DefaultTable is the ticket table's name when a URL gives no table
// parameter; its configuration table is named <table>_config.
const DefaultTable = "tickets"

// config is a server's row in <table>_config.
type config struct {
	servers  int64  // N: auto_increment_increment
	position int64  // i: auto_increment_offset, 1 … N
	base     int64  // values issued are above it
	ceiling  int64  // values issued are at most it; 0: no ceiling
	gen      int64  // changes with every update of the row
	cluster  string // the set's identity, the same on every server of it
}

// names holds a server's table names, quoted, and its statements.
type names struct {
	table, config string // as given
	qt, qc        string // quoted
}

func newNames(table string) names {
	return names{table: table, config: table + "_config", qt: "`" + table + "`", qc: "`" + table + "_config`"}
}

// replace is the statement that takes a ticket, fenced is the failover
// fence's condition ("" for none): it inserts only while the
// configuration generation given as its argument is current (and the
// fence names the server).
func (n names) replace(fenced string) string {
	return "REPLACE INTO " + n.qt + " (stub) SELECT 'a' FROM " + n.qc + " WHERE id = 1 AND gen = ?" + fenced + " LOCK IN SHARE MODE"
}

// fenceOf returns the failover fence of db's database, as sqldb.DB.Fence
// does: nil when it has none and create is false (a set configured before
// idforge fenced ticket servers; Expand creates it).
func fenceOf(ctx context.Context, db *sql.DB, create bool) (*sqldb.Fence, error) {
	d, err := sqldb.Wrap(db)
	if err != nil {
		return nil, err
	}
	return d.Fence(ctx, create)
}

// migrate creates the two tables and the failover fence when missing.
func (n names) migrate(ctx context.Context, db *sql.DB) error {
	for _, q := range []string{
		"CREATE TABLE IF NOT EXISTS " + n.qt + ` (
  id bigint unsigned NOT NULL AUTO_INCREMENT PRIMARY KEY,
  stub char(1) NOT NULL DEFAULT '',
  UNIQUE KEY stub (stub)
) ENGINE=InnoDB`,
		"CREATE TABLE IF NOT EXISTS " + n.qc + ` (
  id tinyint NOT NULL PRIMARY KEY,
  servers int NOT NULL,
  position int NOT NULL,
  base bigint NOT NULL,
  ceiling bigint NOT NULL,
  gen bigint NOT NULL,
  cluster varchar(32) NOT NULL,
  updated timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP
) ENGINE=InnoDB`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	_, err := fenceOf(ctx, db, true)
	return err
}

// querier is *sql.DB, *sql.Conn or *sql.Tx.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// readConfig returns the server's configuration; ok is false when it has
// none. lock adds FOR UPDATE.
func (n names) readConfig(ctx context.Context, q querier, lock bool) (c config, ok bool, err error) {
	stmt := "SELECT servers, position, base, ceiling, gen, cluster FROM " + n.qc + " WHERE id = 1"
	if lock {
		stmt += " FOR UPDATE"
	}
	err = q.QueryRowContext(ctx, stmt).Scan(&c.servers, &c.position, &c.base, &c.ceiling, &c.gen, &c.cluster)
	if errors.Is(err, sql.ErrNoRows) {
		return config{}, false, nil
	}
	if err != nil {
		return config{}, false, fmt.Errorf("read %s: %w", n.config, err)
	}
	return c, true, nil
}

// maxID returns the largest id in the ticket table (0 when empty), read
// with a lock so that it sees every committed ticket.
func (n names) maxID(ctx context.Context, q querier) (int64, error) {
	var m sql.NullInt64
	if err := q.QueryRowContext(ctx, "SELECT MAX(id) FROM "+n.qt+" FOR UPDATE").Scan(&m); err != nil {
		return 0, fmt.Errorf("read %s: %w", n.table, err)
	}
	return m.Int64, nil
}
