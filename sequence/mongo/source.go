package mongo

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/url"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/atomicmax"
	"github.com/idforge/idforge/internal/closeonce"
	"github.com/idforge/idforge/internal/dsn"
	"github.com/idforge/idforge/internal/mongoconn"
	"github.com/idforge/idforge/internal/wait"
	"github.com/idforge/idforge/sequence"
)

// DefaultSourceCollection is SourceConfig.Collection when left empty.
const DefaultSourceCollection = "idforge_sequence"

// SourceConfig configures a Source. Name is required; the zero value of
// every other field means its default.
type SourceConfig struct {
	// Collection holds the counters' documents: letters, digits and '_',
	// DefaultSourceCollection when empty.
	Collection string
	// Name is the counter document's _id; it follows
	// idforge.ValidateKeyName.
	Name string
	// Start is the first value issued from a document NewSource creates
	// (default 1, at least 1).
	Start int64
	// NoCreate makes NewSource fail instead of creating a missing
	// document.
	NoCreate bool
	// Timeout bounds each call whose context has no earlier deadline
	// (default 5s).
	Timeout time.Duration
}

// Source issues the values of one document: $inc of current_value. It is
// safe for concurrent use.
type Source struct {
	coll    *mongo.Collection
	name    string
	timeout time.Duration
	owned   closeonce.Owned // the client, when the source opened it
	// seen is the largest value this source has seen the document hold.
	seen   atomic.Int64
	closed atomic.Bool
}

var _ sequence.Source = (*Source)(nil)

// seqDoc is a counter document.
type seqDoc struct {
	Value bson.RawValue `bson:"current_value"`
}

// NewSource returns a source on the document cfg.Name of cfg.Collection
// in db, whose client the caller keeps owning. Unless cfg.NoCreate is set
// it creates the document (holding Start-1) when it is missing. It
// returns an error wrapping idforge.ErrInvalidArgument for a bad
// configuration or a document that does not hold an integer, and
// sequence.ErrCounterLost when the document is missing and may not be
// created.
func NewSource(ctx context.Context, db *mongo.Database, cfg SourceConfig) (*Source, error) {
	cfg.Collection = cmp.Or(cfg.Collection, DefaultSourceCollection)
	cfg.Start = cmp.Or(cfg.Start, 1)
	cfg.Timeout = cmp.Or(cfg.Timeout, mongoconn.DefaultTimeout)
	switch err := idforge.ValidateKeyName(cfg.Name); {
	case err != nil:
		return nil, fmt.Errorf("mongodb source: name: %w", err)
	case !validCollection(cfg.Collection):
		return nil, fmt.Errorf("%w: mongodb source: collection name %q (want letters, digits and _)", idforge.ErrInvalidArgument, cfg.Collection)
	case cfg.Start < 1:
		return nil, fmt.Errorf("%w: mongodb source %q: start %d is below 1", idforge.ErrInvalidArgument, cfg.Name, cfg.Start)
	}
	s := &Source{coll: primary(db, cfg.Collection), name: cfg.Name, timeout: cfg.Timeout}
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	if !cfg.NoCreate {
		_, err := s.coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: cfg.Name}},
			bson.D{{Key: "$setOnInsert", Value: bson.D{{Key: "current_value", Value: cfg.Start - 1}}}},
			options.UpdateOne().SetUpsert(true))
		if err != nil && !mongo.IsDuplicateKeyError(err) { // two creators: one inserted
			return nil, fmt.Errorf("%w: mongodb source %q: create: %w", idforge.ErrUnavailable, cfg.Name, err)
		}
	}
	var doc seqDoc
	err := s.coll.FindOne(ctx, bson.D{{Key: "_id", Value: cfg.Name}}).Decode(&doc)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, fmt.Errorf("%w: %w: mongodb source %q: the document does not exist; create it (above every value ever issued from it, if it was lost) or allow creation",
			sequence.ErrCounterLost, idforge.ErrUnavailable, cfg.Name)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: mongodb source %q: %w", idforge.ErrUnavailable, cfg.Name, err)
	}
	v, ok := mongoconn.Integer(doc.Value)
	if !ok || v < 0 {
		return nil, fmt.Errorf("%w: mongodb source %q: current_value is %v, not a counter (an int or long ≥ 0)", idforge.ErrInvalidArgument, cfg.Name, doc.Value)
	}
	s.seen.Store(v)
	return s, nil
}

func (s *Source) ctx(ctx context.Context) (context.Context, context.CancelFunc) {
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) <= s.timeout {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, s.timeout)
}

// Next returns the document's next value. It returns an error wrapping
// sequence.ErrCounterLost (and idforge.ErrUnavailable) when the document
// has been deleted or holds less than this source saw; ErrInvalidArgument
// when it holds something other than an integer; ErrSpaceExhausted at the
// largest int64; ErrUnavailable wrapping the driver's error when the
// server fails (a network failure is tried once more: a repeated
// increment may leave a gap, never a duplicate); ErrClosed after Close.
func (s *Source) Next(ctx context.Context) (int64, error) {
	if s.closed.Load() {
		return 0, fmt.Errorf("mongodb source %q: %w", s.name, idforge.ErrClosed)
	}
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	floor := s.seen.Load()
	filter := bson.D{{Key: "_id", Value: s.name},
		{Key: "current_value", Value: bson.D{{Key: "$type", Value: mongoconn.IntegerTypes}, {Key: "$lt", Value: int64(math.MaxInt64)}}}}
	update := bson.D{{Key: "$inc", Value: bson.D{{Key: "current_value", Value: int64(1)}}}}
	var doc seqDoc
	var err error
	for attempt := 0; ; attempt++ {
		err = s.coll.FindOneAndUpdate(ctx, filter, update, options.FindOneAndUpdate().SetReturnDocument(options.After)).Decode(&doc)
		if transient, _ := mongoconn.Transient(err); err == nil || attempt == 2 || !transient || ctx.Err() != nil {
			break
		}
		if wait.For(ctx, time.Duration(10+rand.IntN(40))*time.Millisecond) != nil {
			break
		}
	}
	if errors.Is(err, mongo.ErrNoDocuments) {
		return 0, s.why(ctx, floor)
	}
	if err != nil {
		return 0, fmt.Errorf("%w: mongodb source %q: %w", idforge.ErrUnavailable, s.name, err)
	}
	v, ok := mongoconn.Integer(doc.Value)
	if !ok {
		return 0, fmt.Errorf("%w: mongodb source %q: current_value is %v after $inc", idforge.ErrInvalidArgument, s.name, doc.Value)
	}
	if v <= floor {
		return 0, fmt.Errorf("%w: %w: mongodb source %q: $inc answered %d, but the document held %d before: it went back (restored from a backup, or a fail-over lost writes); set it above every value issued",
			sequence.ErrCounterLost, idforge.ErrUnavailable, s.name, v, floor)
	}
	atomicmax.Raise(&s.seen, v)
	return v, nil
}

// why explains an increment that matched no document.
func (s *Source) why(ctx context.Context, floor int64) error {
	var doc seqDoc
	err := s.coll.FindOne(ctx, bson.D{{Key: "_id", Value: s.name}}).Decode(&doc)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return fmt.Errorf("%w: %w: mongodb source %q: the document was deleted after reaching %d; re-create it above every value issued (never lower)",
			sequence.ErrCounterLost, idforge.ErrUnavailable, s.name, floor)
	}
	if err != nil {
		return fmt.Errorf("%w: mongodb source %q: %w", idforge.ErrUnavailable, s.name, err)
	}
	v, ok := mongoconn.Integer(doc.Value)
	switch {
	case !ok:
		return fmt.Errorf("%w: mongodb source %q: current_value is %v, not an integer (write NumberLong(…) in the mongo shell)", idforge.ErrInvalidArgument, s.name, doc.Value)
	case v == math.MaxInt64:
		return fmt.Errorf("%w: mongodb source %q", idforge.ErrSpaceExhausted, s.name)
	}
	return fmt.Errorf("%w: mongodb source %q: the document holds %d but was not incremented", idforge.ErrUnavailable, s.name, v)
}

// Close disconnects the client if the source opened it (sequence.Open).
// It is idempotent.
func (s *Source) Close() error {
	s.closed.Store(true)
	return s.owned.Close()
}

// openSource is the sequence.Opener of "mongodb" and "mongodb+srv".
func openSource(ctx context.Context, u *url.URL) (sequence.Source, error) {
	q := dsn.NewQuery(u, "mongodb source URL")
	cfg := SourceConfig{
		Name:       q.Required("name"),
		Collection: q.String("collection", DefaultSourceCollection),
		Start:      q.Int("start", 1, 1, math.MaxInt64),
		NoCreate:   !q.Bool("create", true),
	}
	db, timeout, err := connect(ctx, u, q)
	if err != nil {
		return nil, err
	}
	cfg.Timeout = timeout
	s, err := NewSource(ctx, db, cfg)
	if err := closeonce.Adopt(err, disconnect(db), func() *closeonce.Owned { return &s.owned }); err != nil {
		return nil, err
	}
	return s, nil
}
