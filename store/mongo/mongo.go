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

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/mongoconn"
	"github.com/idforge/idforge/store"
	"github.com/idforge/idforge/store/internal/claim"
)

// Defaults for the Config fields left zero.
const (
	// DefaultTimeout bounds each call whose context has no earlier
	// deadline.
	DefaultTimeout = mongoconn.DefaultTimeout
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
	// (mongoconn.DefaultDatabase).
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
	life    claim.Life // DB is host/database; no password
	retry   claim.Retry

	// ready records that KeysCollection has been seen; until then (a
	// database not migrated) calls look again, `idforge migrate` may have
	// run elsewhere.
	ready atomic.Bool
	// steps caches each key's stored step (key → int64), so that a claim
	// of the stored step is one findOneAndUpdate.
	steps sync.Map
	// notLinear says why claims are not linearizable (GlobalOrder); nil
	// when they are.
	notLinear error
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
	dbName := cmp.Or(cfg.Database, mongoconn.DefaultDatabase)
	s := &Store{life: claim.Life{Backend: "mongodb", DB: serverName(cfg.Client) + "/" + dbName, Timeout: cmp.Or(cfg.Timeout, DefaultTimeout),
		Log: cmp.Or(cfg.Logger, slog.Default()), Gone: func(err error) bool { return errors.Is(err, mongo.ErrClientDisconnected) }}}
	s.retry = claim.Retry{Life: &s.life, Thing: "document", Retries: max(cmp.Or(cfg.Retries, DefaultRetries), 0), Classify: mongoconn.Transient}
	cctx, cancel := s.life.Context(ctx)
	defer cancel()
	client, err := mongoconn.Connect(cctx, cfg.Client, cfg.AllowFerretDB)
	if errors.Is(err, idforge.ErrInvalidArgument) {
		return nil, fmt.Errorf("%w: mongodb: %s: %v", idforge.ErrInvalidArgument, s.life.DB, err)
	} else if err != nil {
		return nil, s.life.Wrap(cctx, err, "connect to "+s.life.DB)
	}
	s.client = client
	if wc := cfg.Client.WriteConcern; wc == nil || wc.W != "majority" || wc.Journal != nil && !*wc.Journal {
		s.notLinear = fmt.Errorf("%w: mongodb: %s: its write concern is weaker than w=majority, so a fail-over may lose a claim that returned, and a later claim would get values below it",
			idforge.ErrInvalidArgument, s.life.DB)
	}
	s.db = client.Database(dbName)
	s.keys = s.db.Collection(KeysCollection)
	s.claims = s.db.Collection(KeysCollection, options.Collection().SetReadPreference(readpref.Primary()))
	s.serials = s.db.Collection(SerialsCollection)
	s.defs = s.db.Collection(DefinitionsCollection)
	if err := claim.OpenErr(s.check(cctx), cfg.ForMigrate); err != nil {
		client.Disconnect(context.Background())
		return nil, err
	}
	s.life.Log.Debug("mongodb store opened", "db", s.life.DB, "migrated", s.ready.Load())
	return s, nil
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

// check returns nil once KeysCollection exists, looking for it while it
// has not been seen, and a *claim.NotMigrated while it does not exist.
func (s *Store) check(ctx context.Context) error {
	if s.ready.Load() {
		return nil
	}
	missing, err := s.missing(ctx)
	if err != nil {
		return err
	}
	if slices.Contains(missing, KeysCollection) {
		return &claim.NotMigrated{Backend: "mongodb", DB: s.life.DB, Missing: "collection " + KeysCollection, Kind: "collections"}
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
		return nil, s.life.Wrap(ctx, err, "list collections")
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
	return s.life.Ping(ctx, s.check, func(ctx context.Context) error { return s.client.Ping(ctx, readpref.Primary()) })
}

// Close disconnects from the server. It is idempotent: later calls return
// the first call's result. Calls made after Close return an error
// wrapping idforge.ErrClosed.
func (s *Store) Close() error {
	return s.life.Close(func() error {
		ctx, cancel := context.WithTimeout(context.Background(), s.life.Timeout)
		defer cancel()
		return s.client.Disconnect(ctx)
	})
}

// start begins a call: it returns an error wrapping idforge.ErrClosed
// after Close and one saying to run `idforge migrate` while the
// collections do not exist; otherwise ctx bounded by the store's timeout.
// The caller defers cancel in every case.
func (s *Store) start(ctx context.Context) (context.Context, context.CancelFunc, error) {
	ctx, cancel, err := s.life.Begin(ctx)
	if err == nil {
		err = s.check(ctx)
	}
	return ctx, cancel, err
}
