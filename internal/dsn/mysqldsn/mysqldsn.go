// Package mysqldsn builds go-sql-driver/mysql's configuration from a
// mysql:// URL, for the MySQL store and the SQL worker-ID provider.
package mysqldsn

import (
	"fmt"
	"net"
	"net/url"

	mysqldrv "github.com/go-sql-driver/mysql"
)

// Default host and port of a URL that names none.
const (
	DefaultHost = "127.0.0.1"
	DefaultPort = "3306"
)

// Config returns the driver's configuration for
// mysql://user:password@host:port/db: query holds the driver's parameters
// (idforge's own taken out), db is the database the caller read from the
// path. The error says which driver parameter is wrong.
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
	host, port := u.Hostname(), u.Port()
	if host == "" {
		host = DefaultHost
	}
	if port == "" {
		port = DefaultPort
	}
	drv.Addr = net.JoinHostPort(host, port)
	drv.DBName = db
	return drv, nil
}
