package mysql

import (
	"context"
	"fmt"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/sqldb"
	"github.com/idforge/idforge/internal/sqldb/mysql"
	"github.com/idforge/idforge/store/internal/sqlstore"
)

// Config configures Open. ParseURL builds one from a store URL. Every
// field but Driver may be left zero for its default.
type Config struct {
	// Driver is the connection as github.com/go-sql-driver/mysql
	// describes it: address, user, password, database, TLS and driver
	// parameters. It is required and must name a database. Addr may list
	// several host:port separated by commas (ParseURL makes it so from
	// mysql://user@h1:3306,h2:3307/db): every new connection then goes to
	// the first of them that takes writes (@@read_only = 0), so that the
	// store follows the primary after a fail-over. Open works on
	// a copy, on which it sets ParseTime and ClientFoundRows (idforge
	// relies on both), and, unless they are set, Loc to UTC, the
	// session time_zone to '+00:00', so that update_time reads as the
	// right instant, and the dial timeout to Timeout.
	Driver *mysql.Config
	// Settings are the pool, timeout and retry settings every SQL
	// store shares.
	Settings
}

// Settings are the pool, timeout and retry settings every SQL store
// shares; each field documents its default.
type Settings = sqldb.Settings

// Store is an idforge.Store kept in a MySQL or MariaDB database. It is
// safe for concurrent use, and any number of Stores, in any number of
// processes, may share one database. Create it with Open and release it
// with Close.
//
// Its methods are those of idforge.Store, idforge.SegmentReturner,
// idforge.Migrator and idforge.SerialStore, as those interfaces and the
// package documentation describe them: CreateKey takes a named server
// lock (GET_LOCK) per name, a claim is one UPDATE (see the package
// documentation), and Close makes later calls fail with
// idforge.ErrClosed.
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
// unusable (no Driver, no database, a negative MaxOpenConns), the
// driver's error when the server cannot be reached within cfg.Timeout
// (when ctx has no earlier deadline), and an error naming the columns
// when leaf_alloc, idforge_keys or idforge_serials is not the table
// idforge expects. Nothing is left open when Open fails. Errors never
// contain the password.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	set, drv, err := cfg.normalize()
	if err != nil {
		return nil, err
	}
	db, err := mysql.OpenDB(drv)
	if err != nil {
		return nil, fmt.Errorf("%w: mysql: %v", idforge.ErrInvalidArgument, err)
	}
	s, err := sqlstore.OpenServer(ctx, db, mysql.Where(drv), drv.Passwd, set, newBackend(drv.DBName))
	if err != nil {
		return nil, err
	}
	return &Store{s}, nil
}

// normalize applies the defaults and returns the settings and the driver
// configuration Open uses.
func (cfg Config) normalize() (Settings, *mysql.Config, error) {
	set, err := sqlstore.ServerSettings("mysql", cfg.Driver, cfg.Settings)
	if err != nil {
		return set, nil, err
	}
	if cfg.Driver.DBName == "" {
		return set, nil, fmt.Errorf("%w: mysql: no database named; write mysql://user@host:port/database", idforge.ErrInvalidArgument)
	}
	return set, mysql.Normalize(cfg.Driver, set.Timeout), nil
}

// newBackend returns the store's MySQL backend for the database dbName.
func newBackend(dbName string) *sqlstore.Backend {
	return &sqlstore.Backend{
		Dialect:       mysql.Dialect,
		SQL:           statements,
		ClaimInsertID: true,
		WithNameLock:  nameLocker{dbName}.withLock,
		CreateTables:  createTables,
	}
}
