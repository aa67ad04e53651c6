package mysql

import (
	"errors"

	mysqldrv "github.com/go-sql-driver/mysql"
)

// Server error numbers after which a claim is tried again: the statement
// or transaction was rolled back, or the connection is gone, and a new
// attempt can succeed.
var transientCodes = map[uint16]bool{
	1040: true, // ER_CON_COUNT_ERROR: too many connections
	1053: true, // ER_SERVER_SHUTDOWN
	1205: true, // ER_LOCK_WAIT_TIMEOUT
	1213: true, // ER_LOCK_DEADLOCK
	1927: true, // ER_CONNECTION_KILLED (MariaDB)
	2006: true, // CR_SERVER_GONE_ERROR, as relayed by proxies
	2013: true, // CR_SERVER_LOST, as relayed by proxies
	4031: true, // ER_CLIENT_INTERACTION_TIMEOUT (MySQL 8)
}

// classifyError is MySQL's sqlstore.Dialect.ClassifyError: a server error
// is transient when its number is one of transientCodes, and the driver's
// ErrInvalidConn (a connection that broke mid-command) always is. Other
// errors are left to claim.Transient.
func classifyError(err error) (transient, known bool) {
	var me *mysqldrv.MySQLError
	if errors.As(err, &me) {
		return transientCodes[me.Number], true
	}
	if errors.Is(err, mysqldrv.ErrInvalidConn) {
		return true, true
	}
	return false, false
}
