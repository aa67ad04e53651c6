package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/store/internal/sqlstore"
)

// Defaults for the Config fields left zero.
const (
	DefaultMaxOpenConns    = 10
	DefaultMaxIdleConns    = 5
	DefaultConnMaxLifetime = 30 * time.Minute
	DefaultTimeout         = 3 * time.Second
	DefaultRetries         = 2
)

// defaults are the Default constants as sqlstore.Settings.
var defaults = sqlstore.Settings{MaxOpenConns: DefaultMaxOpenConns, MaxIdleConns: DefaultMaxIdleConns,
	ConnMaxLifetime: DefaultConnMaxLifetime, Timeout: DefaultTimeout, Retries: DefaultRetries}

// Config configures Open. ParseURL builds one from a store URL. Every
// field but Driver may be left zero for its default.
type Config struct {
	// Driver is the connection as github.com/jackc/pgx/v5 describes it:
	// hosts, user, password, database, TLS and run-time parameters. It is
	// required; Open uses a copy.
	Driver *pgx.ConnConfig
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
	// context only: DDL may legitimately wait for locks.
	Timeout time.Duration
	// Retries is how many times ClaimSegment tries again after a
	// transient failure (connection refused or reset, deadlock,
	// serialization failure, lock timeout …), waiting 50 ms, then 100 ms,
	// and so on. 0 means DefaultRetries; a negative value disables
	// retries.
	Retries int
	// ForMigrate lets Open succeed on a database that has no leaf_alloc
	// table yet, so that Migrate can create it (this is what
	// `idforge migrate` does). Until the table exists, every other call
	// fails with an error saying to run `idforge migrate`.
	ForMigrate bool
	// Logger receives the store's log records. Nil means slog.Default().
	Logger *slog.Logger
}

// Store is an idforge.Store kept in a PostgreSQL database. It is safe for
// concurrent use, and any number of Stores, in any number of processes,
// may share one database. Create it with Open and release it with Close.
type Store struct {
	core *sqlstore.Store // the work; Store adds PostgreSQL's driver setup
}

var (
	_ idforge.Store           = (*Store)(nil)
	_ idforge.SegmentReturner = (*Store)(nil)
	_ idforge.Migrator        = (*Store)(nil)
	_ idforge.SerialStore     = (*Store)(nil)
)

// Open connects to the database cfg names, checks that it holds idforge's
// tables and returns a Store using it. It never creates tables (DBAs own
// the schema of a production server; see Migrate), so on a database
// without leaf_alloc it fails with an error saying to run
// `idforge migrate`, unless cfg.ForMigrate is set. A database with Leaf's
// leaf_alloc but no idforge_keys opens, and serves segment keys; one
// without idforge_serials opens, and its SerialStore calls fail, saying
// to run `idforge migrate`.
//
// It returns an error wrapping idforge.ErrInvalidArgument when cfg is
// unusable (no Driver, a negative MaxOpenConns), the driver's error when
// the server cannot be reached within cfg.Timeout (when ctx has no earlier
// deadline), and an error naming the columns when leaf_alloc,
// idforge_keys or idforge_serials is not the table idforge expects.
// Nothing is left open when Open fails. Errors never contain the password.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	set, drv, err := cfg.normalize()
	if err != nil {
		return nil, err
	}
	name := fmt.Sprintf("%s@%s/%s", drv.User, net.JoinHostPort(drv.Host, strconv.Itoa(int(drv.Port))), drv.Database)
	s, err := sqlstore.Open(ctx, stdlib.OpenDB(*drv), name, set, dialect)
	if err != nil {
		return nil, sqlstore.Scrub(err, drv.Password)
	}
	return &Store{core: s}, nil
}

// normalize applies the defaults and returns the settings and the driver
// configuration Open uses.
func (cfg Config) normalize() (sqlstore.Settings, *pgx.ConnConfig, error) {
	if cfg.Driver == nil {
		return sqlstore.Settings{}, nil, fmt.Errorf("%w: postgres: Config.Driver is nil", idforge.ErrInvalidArgument)
	}
	set, err := sqlstore.Settings{MaxOpenConns: cfg.MaxOpenConns, MaxIdleConns: cfg.MaxIdleConns, ConnMaxLifetime: cfg.ConnMaxLifetime,
		Timeout: cfg.Timeout, Retries: cfg.Retries, ForMigrate: cfg.ForMigrate, Logger: cfg.Logger}.WithDefaults("postgres", defaults)
	if err != nil {
		return set, nil, err
	}
	return set, cfg.Driver.Copy(), nil
}

// dialect is PostgreSQL's.
var dialect = &sqlstore.Dialect{
	Name:           "postgres",
	QuoteIdent:     func(ident string) string { return `"` + ident + `"` },
	Prepare:        false, // pgx prepares and caches every statement per connection
	ClaimReturns:   true,
	SQL:            statements,
	ClassifyError:  classifyError,
	IsDuplicateKey: isDuplicateKey,
	WithNameLock:   withNameLock,
	CreateTables:   createTables,
}

// isDuplicateKey reports whether err is SQLSTATE 23505, unique_violation.
func isDuplicateKey(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}

// Ping reports whether the server answers and leaf_alloc can be read. It
// returns an error wrapping idforge.ErrClosed after Close.
func (s *Store) Ping(ctx context.Context) error { return s.core.Ping(ctx) }

// Close closes the connections. It is idempotent: later calls return the
// first call's result. Calls made after Close return an error wrapping
// idforge.ErrClosed.
func (s *Store) Close() error { return s.core.Close() }
