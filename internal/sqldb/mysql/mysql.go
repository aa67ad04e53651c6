// Package mysql is MySQL's and MariaDB's sqldb.Dialect, and the only
// importer of go-sql-driver/mysql: the URL to driver configuration and
// pool (following the primary among several hosts), and the meaning of
// the server's error numbers.
package mysql

import (
	"cmp"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"time"

	mysqldrv "github.com/go-sql-driver/mysql"

	"github.com/idforge/idforge/internal/dsn"
	"github.com/idforge/idforge/internal/sqldb"
)

// Config is the driver's configuration.
type Config = mysqldrv.Config

// Default host and port of a URL that names none.
const (
	DefaultHost = "127.0.0.1"
	DefaultPort = "3306"
)

// Form is the URL this engine takes.
const Form = "mysql://user:password@host:port/database"

// Dialect is MySQL's and MariaDB's.
var Dialect = &sqldb.Dialect{
	Name: "mysql", Schemes: []string{"mysql"}, Form: Form,
	QuoteChar: "`", OnDuplicateKey: true, PrepareHot: true,
	Greatest: "GREATEST",
	// DATETIME(3) in UTC: a TIMESTAMP would be converted through the
	// session time zone, where daylight saving makes NOW() jump.
	Now: "UTC_TIMESTAMP(3)",
	Ago: func(d time.Duration) (string, any) {
		return "UTC_TIMESTAMP(3) - INTERVAL ? MICROSECOND", d.Microseconds()
	},
	Age:          func(col string) string { return "TIMESTAMPDIFF(MICROSECOND, " + col + ", UTC_TIMESTAMP(3)) DIV 1000" },
	TableOptions: " ENGINE=InnoDB",
	Text: func(n int) string {
		return fmt.Sprintf("VARCHAR(%d) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin", n)
	},
	Time:        "DATETIME(3)",
	Stamp:       "timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP",
	AutoID:      "bigint NOT NULL AUTO_INCREMENT PRIMARY KEY",
	TableExists: "SELECT EXISTS (SELECT 1 FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?)",
	Kind:        kind,
	Owns:        func(d driver.Driver) bool { _, ok := d.(*mysqldrv.MySQLDriver); return ok },
	Open:        openURL,
	FenceServer: fenceServer,
	CreateFence: createFence,
	RaiseAutoID: raiseAutoID,
}

func init() { sqldb.Register(Dialect) }

// Server error numbers by what they mean. The transient ones rolled the
// statement or transaction back, or lost the connection: a new attempt
// can succeed.
var kinds = map[uint16]sqldb.Kind{
	1040: sqldb.Transient,  // ER_CON_COUNT_ERROR: too many connections
	1053: sqldb.Transient,  // ER_SERVER_SHUTDOWN
	1205: sqldb.Transient,  // ER_LOCK_WAIT_TIMEOUT
	1213: sqldb.Transient,  // ER_LOCK_DEADLOCK
	1927: sqldb.Transient,  // ER_CONNECTION_KILLED (MariaDB)
	2006: sqldb.Transient,  // CR_SERVER_GONE_ERROR, as relayed by proxies
	2013: sqldb.Transient,  // CR_SERVER_LOST, as relayed by proxies
	4031: sqldb.Transient,  // ER_CLIENT_INTERACTION_TIMEOUT (MySQL 8)
	1062: sqldb.Duplicate,  // ER_DUP_ENTRY
	1690: sqldb.OutOfRange, // ER_DATA_OUT_OF_RANGE
	1264: sqldb.OutOfRange, // ER_WARN_DATA_OUT_OF_RANGE
	167:  sqldb.OutOfRange, // HA_ERR_AUTOINC_ERANGE, as relayed
	1146: sqldb.NoTable,    // ER_NO_SUCH_TABLE
	1049: sqldb.NoDatabase, // ER_BAD_DB_ERROR
}

func kind(err error) sqldb.Kind {
	var me *mysqldrv.MySQLError
	if errors.As(err, &me) {
		return kinds[me.Number]
	}
	if errors.Is(err, mysqldrv.ErrInvalidConn) {
		return sqldb.Transient
	}
	return sqldb.Other
}

// FromURL returns the driver's configuration for
// mysql://user:password@host:port/database with the parameters left in
// q, which must hold no error: parameters the driver does not know
// become session variables. A URL listing several hosts
// (mysql://user@h1:3306,h2:3307/db) gets them all in Addr, separated by
// commas, for OpenDB. Unless the URL says otherwise, the driver
// interpolates arguments into statements (interpolateParams=true),
// saving two round trips per statement. Its errors are q's.
func FromURL(u *url.URL, q *dsn.Query) (*Config, error) {
	if err := q.Err(); err != nil {
		return nil, err
	}
	db := strings.TrimPrefix(u.Path, "/")
	switch {
	case u.Opaque != "":
		return nil, q.Errorf("write %s", Form)
	case db == "":
		return nil, q.Errorf("names no database; write %s", Form)
	case strings.Contains(db, "/"):
		return nil, q.Errorf("database name %q contains '/'", db)
	}
	drv := mysqldrv.NewConfig()
	if rest := q.Rest(); len(rest) > 0 {
		var err error
		if drv, err = mysqldrv.ParseDSN("/?" + rest.Encode()); err != nil {
			return nil, q.Errorf("driver parameters: %v", err)
		}
		if _, set := rest["interpolateParams"]; !set {
			drv.InterpolateParams = true
		}
	} else {
		drv.InterpolateParams = true
	}
	drv.User = u.User.Username()
	drv.Passwd, _ = u.User.Password()
	drv.Net = "tcp"
	drv.Addr = strings.Join(hosts(u), ",")
	drv.DBName = db
	return drv, nil
}

// hosts returns the host:port addresses of a URL that may list several
// hosts, separated by commas: a host left empty is DefaultHost, a port
// left out DefaultPort. Go's URL parser checks what follows the last
// colon as a port, so in a list the last host must have its port when
// any does (h1:3306,h2:3306), and an IPv6 address, in brackets, can only
// be the only host.
func hosts(u *url.URL) []string {
	var out []string
	for _, hp := range strings.Split(u.Host, ",") {
		host, port := hp, ""
		if i := strings.LastIndexByte(hp, ':'); i >= 0 && !strings.Contains(hp[i:], "]") {
			host, port = hp[:i], hp[i+1:]
		}
		host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
		out = append(out, net.JoinHostPort(cmp.Or(host, DefaultHost), cmp.Or(port, DefaultPort)))
	}
	return out
}

// Normalize returns a copy of cfg with what idforge relies on: ParseTime,
// ClientFoundRows (an UPDATE counts the rows it matched), and, unless
// set, Loc UTC and the session time_zone '+00:00' so that a timestamp
// reads as the right instant, and the dial timeout.
func Normalize(cfg *Config, timeout time.Duration) *Config {
	drv := cfg.Clone()
	drv.ParseTime = true
	drv.ClientFoundRows = true
	if drv.Loc == nil {
		drv.Loc = time.UTC
	}
	if _, ok := drv.Params["time_zone"]; !ok {
		if drv.Params == nil {
			drv.Params = map[string]string{}
		}
		drv.Params["time_zone"] = "'+00:00'"
	}
	if drv.Timeout == 0 {
		drv.Timeout = timeout
	}
	return drv
}

// Where names cfg's database in messages: user@host:port/database.
func Where(cfg *Config) string { return fmt.Sprintf("%s@%s/%s", cfg.User, cfg.Addr, cfg.DBName) }

// OpenDB returns a pool on cfg (see Normalize). When cfg.Addr lists several
// host:port separated by commas (the driver has no multi-host form of its
// own), each new connection tries the hosts in order and keeps the first
// that takes writes (@@read_only = 0): after a fail-over, once the old
// primary's connections have broken, the pool reaches the promoted
// replica without a restart. A connection to a database that does not
// exist fails with a *sqldb.NoDatabaseError.
func OpenDB(cfg *Config) (*sql.DB, error) {
	addrs := strings.Split(cfg.Addr, ",")
	c := &primaryConnector{}
	for _, addr := range addrs {
		one := cfg.Clone()
		one.Addr = addr
		conn, err := mysqldrv.NewConnector(one)
		if err != nil {
			return nil, dsn.Scrub(err, cfg.Passwd)
		}
		c.hosts = append(c.hosts, conn)
		c.addrs = append(c.addrs, addr)
	}
	host, port, _ := net.SplitHostPort(addrs[0])
	create := "mysql -h " + host + " -P " + port
	if cfg.User != "" {
		create += " -u " + cfg.User
	}
	if cfg.Passwd != "" {
		create += " -p"
	}
	create += " -e 'CREATE DATABASE `" + cfg.DBName + "`'"
	if len(addrs) == 1 {
		return sql.OpenDB(sqldb.Connector(c.hosts[0], create)), nil
	}
	return sql.OpenDB(sqldb.Connector(c, create)), nil
}

// openURL is Dialect.Open.
func openURL(u *url.URL, q *dsn.Query, set sqldb.Settings, _ string) (*sql.DB, error) {
	cfg, err := FromURL(u, q)
	if err != nil {
		return nil, err
	}
	db, err := OpenDB(Normalize(cfg, set.Timeout))
	if err != nil {
		return nil, q.Errorf("%v", err)
	}
	return db, nil
}

// primaryConnector connects to the first of several hosts that takes
// writes.
type primaryConnector struct {
	hosts []driver.Connector
	addrs []string
}

// errReadOnly is the reason a host was passed over.
var errReadOnly = errors.New("read-only (@@read_only = 1): not the primary")

func (c *primaryConnector) Connect(ctx context.Context) (driver.Conn, error) {
	var errs []error
	for i, host := range c.hosts {
		conn, err := host.Connect(ctx)
		if err == nil {
			if err = writable(ctx, conn); err == nil {
				return conn, nil
			}
			conn.Close()
		}
		errs = append(errs, fmt.Errorf("%s: %w", c.addrs[i], err))
	}
	// A connection error, not driver.ErrBadConn: database/sql would retry
	// that once more on the same connector, which tried every host.
	return nil, fmt.Errorf("no host takes writes: %w", errors.Join(errs...))
}

func (c *primaryConnector) Driver() driver.Driver { return c.hosts[0].Driver() }

// writable checks @@read_only on a new connection.
func writable(ctx context.Context, conn driver.Conn) error {
	q, ok := conn.(driver.QueryerContext)
	if !ok {
		return nil
	}
	rows, err := q.QueryContext(ctx, "SELECT @@global.read_only", nil)
	if err != nil {
		return err
	}
	defer rows.Close()
	vals := make([]driver.Value, 1)
	if err := rows.Next(vals); err != nil && err != io.EOF {
		return err
	}
	switch v := vals[0].(type) {
	case int64:
		if v != 0 {
			return errReadOnly
		}
	case []byte:
		if string(v) != "0" {
			return errReadOnly
		}
	}
	return nil
}

// fenceServer names the server: MariaDB's @@server_id, MySQL's
// @@server_id and @@server_uuid (which MariaDB lacks).
func fenceServer(ctx context.Context, q sqldb.Querier) (string, error) {
	var version string
	if err := q.QueryRowContext(ctx, `SELECT VERSION()`).Scan(&version); err != nil {
		return "", err
	}
	if strings.Contains(strings.ToLower(version), "mariadb") {
		return `CONCAT('mariadb server_id=', @@server_id)`, nil
	}
	return `CONCAT('mysql server_id=', @@server_id, ' server_uuid=', @@server_uuid)`, nil
}

// createFence creates and fills the fence in one CREATE TABLE … SELECT,
// whose metadata lock makes readers wait: DDL commits at once, so a
// transaction could not hide the table until its row is in.
func createFence(ctx context.Context, db *sql.DB, server string) error {
	_, err := db.ExecContext(ctx, "CREATE TABLE "+sqldb.FenceTable+` (
  id          INT          NOT NULL PRIMARY KEY,
  server      VARCHAR(255) NOT NULL,
  accepted_at TIMESTAMP    NOT NULL DEFAULT CURRENT_TIMESTAMP
) ENGINE=InnoDB SELECT 1 AS id, `+server+" AS server")
	return err
}

// raiseAutoID moves the table's AUTO_INCREMENT above floor; MySQL keeps
// it above the largest id.
func raiseAutoID(ctx context.Context, q sqldb.Querier, table string, floor int64) error {
	var next sql.NullInt64
	err := q.QueryRowContext(ctx, `SELECT AUTO_INCREMENT FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?`, table).Scan(&next)
	if err == nil && next.Int64 <= floor {
		_, err = q.ExecContext(ctx, fmt.Sprintf("ALTER TABLE `%s` AUTO_INCREMENT = %d", table, floor+1))
	}
	return err
}
