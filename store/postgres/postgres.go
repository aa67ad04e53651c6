package postgres

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/idforge/idforge/internal/sqlfence"
	"github.com/idforge/idforge/store/internal/sqlstore"
	"github.com/idforge/idforge/store/sqlpool"
)

// Config configures Open. ParseURL builds one from a store URL. Every
// field but Driver may be left zero for its default.
type Config struct {
	// Driver is the connection as github.com/jackc/pgx/v5 describes it:
	// hosts, user, password, database, TLS and run-time parameters. It is
	// required; Open uses a copy.
	Driver *pgx.ConnConfig
	// Settings are the pool, timeout and retry settings every SQL
	// store shares (see package sqlpool).
	sqlpool.Settings
}

// Store is an idforge.Store kept in a PostgreSQL database. It is safe for
// concurrent use, and any number of Stores, in any number of processes,
// may share one database. Create it with Open and release it with Close.
//
// Its methods are those of idforge.Store, idforge.SegmentReturner,
// idforge.Migrator and idforge.SerialStore, as those interfaces and the
// package documentation describe them: CreateKey takes a transaction's
// advisory lock per name, ClaimSegment is one UPDATE … RETURNING, and
// Close makes later calls fail with idforge.ErrClosed.
type Store struct {
	*shared
}

// shared is the SQL store every backend is made of; embedded under this
// unexported name, it lends Store its methods and nothing else.
type shared = sqlstore.Store

// Open connects to the database cfg names, checks that it holds idforge's
// tables and returns a Store using it. It never creates tables (DBAs own
// the schema of a production server; see Migrate), so on a database
// without leaf_alloc it fails with an error saying to run
// `idforge migrate`, unless cfg.ForMigrate is set. A database with Leaf's
// leaf_alloc but no idforge_keys opens, and serves segment keys; one
// without idforge_serials (idforge_definitions) opens, and its SerialStore
// (DefinitionStore) calls fail, saying
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
	s, err := sqlstore.OpenServer(ctx, stdlib.OpenDB(*drv), name, drv.Password, set, dialect)
	if err != nil {
		return nil, err
	}
	return &Store{s}, nil
}

// normalize applies the defaults and returns the settings and the driver
// configuration Open uses.
func (cfg Config) normalize() (sqlstore.Settings, *pgx.ConnConfig, error) {
	set, err := sqlstore.ServerSettings("postgres", cfg.Driver, cfg.Settings)
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
	Fence:          sqlfence.Postgres,
}

// isDuplicateKey reports whether err is SQLSTATE 23505, unique_violation.
func isDuplicateKey(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}
