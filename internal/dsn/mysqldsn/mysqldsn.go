// Package mysqldsn builds go-sql-driver/mysql's configuration from a
// mysql:// URL, for the MySQL store and the SQL worker-ID provider, and
// the connector that follows the primary among several hosts.
package mysqldsn

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"

	mysqldrv "github.com/go-sql-driver/mysql"

	"github.com/idforge/idforge/internal/dsn"
)

// Default host and port of a URL that names none.
const (
	DefaultHost = "127.0.0.1"
	DefaultPort = "3306"
)

// Config returns the driver's configuration for
// mysql://user:password@host:port/db: query holds the driver's parameters
// (idforge's own taken out), db is the database the caller read from the
// path. A URL listing several hosts (mysql://user@h1:3306,h2:3307/db)
// gets them all in Addr, separated by commas, for Connector. The error
// says which driver parameter is wrong.
func Config(u *url.URL, query url.Values, db string) (*mysqldrv.Config, error) {
	drv := mysqldrv.NewConfig()
	if len(query) > 0 {
		var err error
		if drv, err = mysqldrv.ParseDSN("/?" + query.Encode()); err != nil {
			return nil, fmt.Errorf("driver parameters: %w", err)
		}
	}
	drv.User = u.User.Username()
	drv.Passwd, _ = u.User.Password()
	drv.Net = "tcp"
	drv.Addr = strings.Join(dsn.Hosts(u, DefaultHost, DefaultPort), ",")
	drv.DBName = db
	return drv, nil
}

// Connector returns the driver's connector for drv. When drv.Addr lists
// several host:port separated by commas (go-sql-driver/mysql has no
// multi-host form of its own), each new connection tries the hosts in
// order and keeps the first that takes writes (@@read_only = 0): after a
// fail-over, once the old primary's connections have broken, the pool
// reaches the promoted replica without a restart. With one host it is the
// driver's own connector.
func Connector(drv *mysqldrv.Config) (driver.Connector, error) {
	addrs := strings.Split(drv.Addr, ",")
	if len(addrs) == 1 {
		return mysqldrv.NewConnector(drv)
	}
	c := &primaryConnector{}
	for _, addr := range addrs {
		one := drv.Clone()
		one.Addr = addr
		conn, err := mysqldrv.NewConnector(one)
		if err != nil {
			return nil, err
		}
		c.hosts = append(c.hosts, conn)
		c.addrs = append(c.addrs, addr)
	}
	return c, nil
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
			err = writable(ctx, conn)
			if err == nil {
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
