// Package sqlpool holds what the SQL server stores (store/mysql and
// store/postgres) are configured with besides their driver's own
// configuration: the connection pool, the bound on each call, the retries
// of a claim, whether the store opens for `idforge migrate`, and the
// logger. Both backends' Config embed Settings, so each rule and default
// here is written once.
package sqlpool

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/idforge/idforge"
)

// Defaults of the Settings fields left zero.
const (
	DefaultMaxOpenConns    = 10
	DefaultMaxIdleConns    = 5
	DefaultConnMaxLifetime = 30 * time.Minute
	DefaultTimeout         = 3 * time.Second
	DefaultRetries         = 2
)

// ServerDefaults are the Default constants as Settings, for WithDefaults.
var ServerDefaults = Settings{MaxOpenConns: DefaultMaxOpenConns, MaxIdleConns: DefaultMaxIdleConns,
	ConnMaxLifetime: DefaultConnMaxLifetime, Timeout: DefaultTimeout, Retries: DefaultRetries}

// Settings configure a SQL store's use of its database. Every field may
// be left zero for its default.
type Settings struct {
	// MaxOpenConns caps the connections to the server. 0 means
	// DefaultMaxOpenConns.
	MaxOpenConns int
	// MaxIdleConns is how many idle connections are kept for reuse. 0
	// means DefaultMaxIdleConns; a negative value keeps none.
	MaxIdleConns int
	// ConnMaxLifetime closes connections once they are this old. 0 means
	// DefaultConnMaxLifetime; a negative value keeps them forever.
	ConnMaxLifetime time.Duration
	// Timeout bounds each call (with its retries) whose context has no
	// earlier deadline. 0 means DefaultTimeout. Migrate is bounded by its
	// context only: DDL may legitimately wait for locks. (store/sqlite,
	// which uses Settings internally, sets it negative: no bound but the
	// context; WithDefaults refuses that for a server.)
	Timeout time.Duration
	// Retries is how many times ClaimSegment tries again after a
	// transient failure (connection refused or reset, deadlock,
	// serialization failure, lock wait timeout …), waiting 50 ms, then
	// 100 ms, and so on. 0 means DefaultRetries; a negative value
	// disables retries.
	Retries int
	// ForMigrate lets the store open on a database that has no leaf_alloc
	// table yet, so that Migrate can create it (this is what
	// `idforge migrate` does). Until the table exists, every other call
	// fails with an error saying to run `idforge migrate`.
	ForMigrate bool
	// Logger receives the store's log records. Nil means slog.Default().
	Logger *slog.Logger
}

// WithDefaults checks s and fills in the fields left zero: the logger
// with slog.Default(), the others from defaults. It returns an error
// wrapping idforge.ErrInvalidArgument, starting with name, for a negative
// MaxOpenConns or Timeout.
func (s Settings) WithDefaults(name string, defaults Settings) (Settings, error) {
	if s.MaxOpenConns < 0 || s.Timeout < 0 {
		return s, fmt.Errorf("%w: %s: negative MaxOpenConns or Timeout", idforge.ErrInvalidArgument, name)
	}
	if s.MaxOpenConns == 0 {
		s.MaxOpenConns = defaults.MaxOpenConns
	}
	if s.MaxIdleConns == 0 {
		s.MaxIdleConns = defaults.MaxIdleConns
	}
	if s.ConnMaxLifetime == 0 {
		s.ConnMaxLifetime = defaults.ConnMaxLifetime
	}
	if s.Timeout == 0 {
		s.Timeout = defaults.Timeout
	}
	if s.Retries == 0 {
		s.Retries = defaults.Retries
	}
	if s.Logger == nil {
		s.Logger = slog.Default()
	}
	return s, nil
}
