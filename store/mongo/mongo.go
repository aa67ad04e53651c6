package mongo

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/readpref"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/topology"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/dsn/mongodsn"
	"github.com/idforge/idforge/store"
	"github.com/idforge/idforge/store/internal/claim"
)

// Defaults for the Config fields left zero.
const (
	// DefaultTimeout bounds each call whose context has no earlier
	// deadline.
	DefaultTimeout = 3 * time.Second
	// DefaultRetries is how many times a claim is tried again after a
	// transient failure.
	DefaultRetries = 2
)

// The collections idforge keeps in its database.
const (
	// KeysCollection holds one document per key, its name as _id.
	KeysCollection = "idforge_keys"
	// SerialsCollection holds one document per serial definition, its
	// name as _id.
	SerialsCollection = "idforge_serials"
	// DefinitionsCollection holds one document per operator's definition
	// (idforge.DefinitionStore), "<kind>/<name>" as _id.
	DefinitionsCollection = "idforge_definitions"
)

// Config configures Open. ParseURL builds one from a store URL. Client
// is required; every other field may be left zero for its default.
type Config struct {
	// Client is the driver's configuration: hosts, credentials, TLS,
	// write and read concerns. Open connects with it as given: build it
	// with ParseURL, or apply the failover-safety defaults the package
	// documentation describes yourself.
	Client *options.ClientOptions
	// Database names the database; empty means "idforge"
	// (mongodsn's DefaultDatabase).
	Database string
	// Timeout bounds each call (with its retries) whose context has no
	// earlier deadline. 0 means DefaultTimeout. Migrate is bounded by its
	// context only.
	Timeout time.Duration
	// Retries is how many times ClaimSegment tries again after a
	// transient failure (no primary reachable, connection reset, a
	// primary stepping down …), waiting 50 ms, then 100 ms, and so on.
	// 0 means DefaultRetries; a negative value disables retries.
	Retries int
	// ForMigrate lets Open succeed on a database without idforge's
	// collections, so that Migrate can create them (`idforge migrate`).
	// Until they exist every other call fails with an error saying to run
	// `idforge migrate`.
	ForMigrate bool
	// AllowFerretDB lets Open use a FerretDB server. FerretDB 1.x applies
	// findAndModify and update as a read and then a write of the
	// document, not atomically, so concurrent claims can repeat IDs; Open
	// refuses it unless this is set, which is only right for a FerretDB
	// that runs one command at a time (the test server of tools/ferretdb).
	AllowFerretDB bool
	// Logger receives the store's log records. Nil means slog.Default().
	Logger *slog.Logger
}

// Store is an idforge.Store kept in a MongoDB database. It is safe for
// concurrent use, and any number of Stores, in any number of processes,
// may share one database. Create it with Open and release it with Close.
//
// Every write is one single-document operation, atomic on its own: the
// store needs no multi-document transaction (FerretDB has none).
type Store struct {
	client  *mongo.Client
	db      *mongo.Database
	keys    *mongo.Collection // catalogue reads follow the URL's read preference
	claims  *mongo.Collection // claims and the reads that explain them: the primary
	serials *mongo.Collection
	defs    *mongo.Collection
	name    string // host/database, for messages; no password
	log     *slog.Logger
	timeout time.Duration
	retry   claim.Retry

	// ready records that KeysCollection has been seen; until then (a
	// database not migrated) calls look again, `idforge migrate` may have
	// run elsewhere.
	ready atomic.Bool
	// steps caches each key's stored step (key → int64), so that a claim
	// of the stored step is one findOneAndUpdate.
	steps sync.Map

	closed    atomic.Bool
	closeOnce sync.Once
	closeErr  error
}

var _ store.Backend = (*Store)(nil)

// Open connects to the server cfg names and returns a Store once it
// answers and the database has KeysCollection (or cfg.ForMigrate is set).
// It returns an error wrapping idforge.ErrInvalidArgument for a Config
// without Client or with a negative Timeout, an error saying to run
// `idforge migrate` for a database without idforge's collections, and
// the driver's error, naming the server, when it does not answer within
// the Timeout.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	if cfg.Client == nil {
		return nil, fmt.Errorf("%w: mongodb: Config.Client is required", idforge.ErrInvalidArgument)
	}
	if cfg.Timeout < 0 {
		return nil, fmt.Errorf("%w: mongodb: negative Timeout", idforge.ErrInvalidArgument)
	}
	if err := cfg.Client.Validate(); err != nil {
		return nil, fmt.Errorf("%w: mongodb: %v", idforge.ErrInvalidArgument, err)
	}
	s := &Store{timeout: cmp.Or(cfg.Timeout, DefaultTimeout), log: cmp.Or(cfg.Logger, slog.Default())}
	dbName := cmp.Or(cfg.Database, mongodsn.DefaultDatabase)
	s.name = serverName(cfg.Client) + "/" + dbName
	s.retry = claim.Retry{Backend: "mongodb", DB: s.name, Thing: "document", Retries: max(cmp.Or(cfg.Retries, DefaultRetries), 0),
		Timeout: s.timeout, Log: s.log, Closed: s.closed.Load, Transient: transient, Verdict: isVerdict, Wrap: s.wrap}
	client, err := mongo.Connect(cfg.Client)
	if err != nil {
		return nil, fmt.Errorf("%w: mongodb: %s: %v", idforge.ErrInvalidArgument, s.name, err)
	}
	s.client = client
	s.db = client.Database(dbName)
	s.keys = s.db.Collection(KeysCollection)
	s.claims = s.db.Collection(KeysCollection, options.Collection().SetReadPreference(readpref.Primary()))
	s.serials = s.db.Collection(SerialsCollection)
	s.defs = s.db.Collection(DefinitionsCollection)
	if err := s.open(ctx, cfg.ForMigrate, cfg.AllowFerretDB); err != nil {
		client.Disconnect(context.Background())
		return nil, err
	}
	s.log.Debug("mongodb store opened", "db", s.name, "migrated", s.ready.Load())
	return s, nil
}

func (s *Store) open(ctx context.Context, forMigrate, allowFerretDB bool) error {
	ctx, cancel := s.opContext(ctx)
	defer cancel()
	if err := s.client.Ping(ctx, readpref.Primary()); err != nil {
		return s.wrap(ctx, err, "connect to "+s.name)
	}
	if err := mongodsn.CheckServer(ctx, s.client, allowFerretDB); err != nil {
		if !errors.Is(err, mongodsn.ErrFerretDB) {
			return s.wrap(ctx, err, "connect to "+s.name)
		}
		return fmt.Errorf("%w: mongodb: %s: %v", idforge.ErrInvalidArgument, s.name, err)
	}
	err := s.check(ctx)
	var nm *notMigratedError
	if forMigrate && errors.As(err, &nm) {
		return nil
	}
	return err
}

// serverName is the hosts of a client configuration, for messages.
func serverName(o *options.ClientOptions) string {
	if len(o.Hosts) == 0 {
		return "(no host)"
	}
	name := o.Hosts[0]
	if len(o.Hosts) > 1 {
		name += fmt.Sprintf(",…(%d hosts)", len(o.Hosts))
	}
	return name
}

// notMigratedError is the error for a database without idforge's
// collections.
type notMigratedError struct{ db string }

func (e *notMigratedError) Error() string {
	return fmt.Sprintf("mongodb: database %s has no collection %s: run `idforge migrate` to create idforge's collections", e.db, KeysCollection)
}

// check returns nil once KeysCollection exists, looking for it while it
// has not been seen, and a *notMigratedError while it does not exist.
func (s *Store) check(ctx context.Context) error {
	if s.ready.Load() {
		return nil
	}
	missing, err := s.missing(ctx)
	if err != nil {
		return err
	}
	if slices.Contains(missing, KeysCollection) {
		return &notMigratedError{db: s.name}
	}
	s.ready.Store(true)
	return nil
}

// Collections are idforge's collections, in the order Migrate creates
// them.
var Collections = []string{KeysCollection, SerialsCollection, DefinitionsCollection}

// missing returns the collections of Collections the database lacks.
func (s *Store) missing(ctx context.Context) ([]string, error) {
	names, err := s.db.ListCollectionNames(ctx, bson.D{{Key: "name", Value: bson.D{{Key: "$in", Value: Collections}}}})
	if err != nil {
		return nil, s.wrap(ctx, err, "list collections")
	}
	var missing []string
	for _, c := range Collections {
		if !slices.Contains(names, c) {
			missing = append(missing, c)
		}
	}
	return missing, nil
}

// Ping reports whether the primary answers and the database has been
// migrated. It returns an error wrapping idforge.ErrClosed after Close.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.checkOpen(); err != nil {
		return err
	}
	ctx, cancel := s.opContext(ctx)
	defer cancel()
	if err := s.client.Ping(ctx, readpref.Primary()); err != nil {
		return s.wrap(ctx, err, "ping")
	}
	return s.check(ctx)
}

// Close disconnects from the server. It is idempotent: later calls return
// the first call's result. Calls made after Close return an error
// wrapping idforge.ErrClosed.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.closed.Store(true)
		ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
		defer cancel()
		if err := s.client.Disconnect(ctx); err != nil {
			s.closeErr = fmt.Errorf("mongodb: close %s: %w", s.name, err)
		}
		s.log.Debug("mongodb store closed", "db", s.name)
	})
	return s.closeErr
}

func (s *Store) checkOpen() error {
	if s.closed.Load() {
		return claim.Closed("mongodb", s.name)
	}
	return nil
}

// start begins a call: it returns an error wrapping idforge.ErrClosed
// after Close and one saying to run `idforge migrate` while the
// collections do not exist; otherwise ctx bounded by the store's timeout.
// The caller defers cancel in every case.
func (s *Store) start(ctx context.Context) (context.Context, context.CancelFunc, error) {
	if err := s.checkOpen(); err != nil {
		return ctx, func() {}, err
	}
	ctx, cancel := s.opContext(ctx)
	return ctx, cancel, s.check(ctx)
}

// opContext applies the store's timeout to ctx unless ctx ends earlier.
func (s *Store) opContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return claim.Context(ctx, s.timeout)
}

// wrap adds what was being done to a driver error (see claim.Wrap); the
// driver's ErrClientDisconnected counts as Close.
func (s *Store) wrap(ctx context.Context, err error, what string) error {
	return claim.Wrap(ctx, err, s.closed.Load() || errors.Is(err, mongo.ErrClientDisconnected), "mongodb", s.name, what)
}

// transient reports whether retrying a claim may cure err: the failures
// of the connection claim.Transient knows, the driver's network
// errors, no server to select, and the server's errors that say so (a
// primary stepping down or shutting down, a write concern not met).
func transient(err error) bool {
	return claim.Transient(err, classify)
}

// retryableCodes are server error codes after which the next attempt may
// find a primary: HostUnreachable, HostNotFound, WriteConcernFailed,
// NetworkTimeout, ShutdownInProgress, PrimarySteppedDown,
// ExceededTimeLimit, SocketException, NotWritablePrimary,
// InterruptedAtShutdown, InterruptedDueToReplStateChange,
// NotPrimaryNoSecondaryOk, NotPrimaryOrSecondary.
var retryableCodes = []int{6, 7, 64, 89, 91, 189, 262, 9001, 10107, 11600, 11602, 13435, 13436}

func classify(err error) (transient, known bool) {
	if mongo.IsNetworkError(err) {
		return true, true
	}
	var se mongo.ServerError
	if errors.As(err, &se) {
		if se.HasErrorLabel("RetryableWriteError") || se.HasErrorLabel("NetworkError") {
			return true, true
		}
		for _, c := range retryableCodes {
			if se.HasErrorCode(c) {
				return true, true
			}
		}
		return false, true
	}
	if errors.Is(err, mongo.ErrClientDisconnected) {
		return false, true
	}
	// No server could be selected: no primary for now.
	if errors.As(err, new(topology.ServerSelectionError)) {
		return true, true
	}
	return false, false
}
