package postgres

import (
	"context"

	"github.com/idforge/idforge/internal/sqldb"
	"github.com/idforge/idforge/internal/sqldb/postgres"
	"github.com/idforge/idforge/store/internal/sqlstore"
)

// Config configures Open. ParseURL builds one from a store URL. Every
// field but Driver may be left zero for its default.
type Config struct {
	// Driver is the connection as github.com/jackc/pgx/v5 describes it:
	// hosts, user, password, database, TLS and run-time parameters. It is
	// required; Open uses a copy, which connects within Timeout unless
	// it sets a connect_timeout.
	Driver *postgres.Config
	// Settings are the pool, timeout and retry settings every SQL
	// store shares.
	Settings
}

// Settings are the pool, timeout and retry settings every SQL store
// shares; each field documents its default.
type Settings = sqldb.Settings

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
	s, err := sqlstore.OpenServer(ctx, postgres.OpenDB(drv, set.Timeout), postgres.Where(drv), drv.Password, set, backend)
	if err != nil {
		return nil, err
	}
	return &Store{s}, nil
}

// normalize applies the defaults and returns the settings and the driver
// configuration Open uses.
func (cfg Config) normalize() (Settings, *postgres.Config, error) {
	set, err := sqlstore.ServerSettings("postgres", cfg.Driver, cfg.Settings)
	if err != nil {
		return set, nil, err
	}
	return set, cfg.Driver.Copy(), nil
}

// backend is the store's PostgreSQL backend.
var backend = &sqlstore.Backend{
	Dialect:      postgres.Dialect,
	SQL:          statements,
	UpdateTime:   "update_time::timestamptz", // see KeySegment
	WithNameLock: withNameLock,
	CreateTables: createTables,
}
