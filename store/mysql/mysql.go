package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	mysqldrv "github.com/go-sql-driver/mysql"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/dsn"
	"github.com/idforge/idforge/internal/dsn/mysqldsn"
	"github.com/idforge/idforge/internal/sqlfence"
	"github.com/idforge/idforge/store/internal/sqlstore"
	"github.com/idforge/idforge/store/sqlpool"
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
	// relies on both), and, unless they are set, Loc to UTC and the
	// session time_zone to '+00:00', so that update_time reads as the
	// right instant.
	Driver *mysqldrv.Config
	// Settings are the pool, timeout and retry settings every SQL
	// store shares (see package sqlpool).
	sqlpool.Settings
}

// Store is an idforge.Store kept in a MySQL or MariaDB database. It is
// safe for concurrent use, and any number of Stores, in any number of
// processes, may share one database. Create it with Open and release it
// with Close.
//
// Its methods are those of idforge.Store, idforge.SegmentReturner,
// idforge.Migrator and idforge.SerialStore, as those interfaces and the
// package documentation describe them: CreateKey takes a named server
// lock (GET_LOCK) per name, ClaimSegment is Leaf's UPDATE then SELECT in
// one transaction, and Close makes later calls fail with
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
	conn, err := mysqldsn.Connector(drv)
	if err != nil {
		return nil, dsn.Scrub(fmt.Errorf("%w: mysql: %v", idforge.ErrInvalidArgument, err), drv.Passwd)
	}
	name := fmt.Sprintf("%s@%s/%s", drv.User, drv.Addr, drv.DBName)
	s, err := sqlstore.OpenServer(ctx, sql.OpenDB(conn), name, drv.Passwd, set, newDialect(drv.DBName))
	if err != nil {
		return nil, err
	}
	return &Store{s}, nil
}

// normalize applies the defaults and returns the settings and the driver
// configuration Open uses.
func (cfg Config) normalize() (sqlstore.Settings, *mysqldrv.Config, error) {
	set, err := sqlstore.ServerSettings("mysql", cfg.Driver, cfg.Settings)
	if err != nil {
		return set, nil, err
	}
	if cfg.Driver.DBName == "" {
		return set, nil, fmt.Errorf("%w: mysql: no database named; write mysql://user@host:port/database", idforge.ErrInvalidArgument)
	}
	drv := cfg.Driver.Clone()
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
	return set, drv, nil
}

// newDialect returns MySQL's dialect for the database dbName.
func newDialect(dbName string) *sqlstore.Dialect {
	return &sqlstore.Dialect{
		Name:           "mysql",
		QuoteIdent:     func(ident string) string { return "`" + ident + "`" },
		Prepare:        true,
		ClaimReturns:   false, // MySQL has no UPDATE … RETURNING
		SQL:            statements,
		ClassifyError:  classifyError,
		IsDuplicateKey: isDuplicateKey,
		WithNameLock:   nameLocker{dbName}.withLock,
		CreateTables:   createTables,
		Fence:          sqlfence.MySQL,
	}
}

// isDuplicateKey reports whether err is ER_DUP_ENTRY.
func isDuplicateKey(err error) bool {
	var me *mysqldrv.MySQLError
	return errors.As(err, &me) && me.Number == 1062
}
