package postgres

import (
	"errors"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// SQLSTATEs after which a claim is tried again, besides class 08
// (connection exception): the statement or transaction was rolled back,
// or the server is going away, and a new attempt can succeed.
var transientCodes = map[string]bool{
	"40001": true, // serialization_failure
	"40P01": true, // deadlock_detected
	"55P03": true, // lock_not_available
	"53300": true, // too_many_connections
	"57P01": true, // admin_shutdown
	"57P02": true, // crash_shutdown
	"57P03": true, // cannot_connect_now (starting up, or in recovery)
}

// classifyError is PostgreSQL's sqlstore.Dialect.ClassifyError: a server
// error is transient when its SQLSTATE is one of transientCodes or of
// class 08, and so is a request pgx knows was never sent. Other errors are
// left to claim.Transient.
func classifyError(err error) (transient, known bool) {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return transientCodes[pe.Code] || strings.HasPrefix(pe.Code, "08"), true
	}
	if pgconn.SafeToRetry(err) {
		return true, true
	}
	return false, false
}
