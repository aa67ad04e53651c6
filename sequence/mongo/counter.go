package mongo

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"net/url"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/closeonce"
	"github.com/idforge/idforge/internal/dsn"
	"github.com/idforge/idforge/internal/mongoconn"
	"github.com/idforge/idforge/sequence"
)

// DefaultCounterCollection is CounterStoreConfig.Collection when left
// empty.
const DefaultCounterCollection = "idforge_counter"

// CounterStoreConfig configures a CounterStore. The zero value means the
// defaults.
type CounterStoreConfig struct {
	// Collection holds the counters' documents: letters, digits and '_';
	// DefaultCounterCollection when empty.
	Collection string
	// Timeout bounds each call whose context has no earlier deadline
	// (default 5s).
	Timeout time.Duration
}

// CounterStore keeps per-period counters in MongoDB, one document per
// counter name holding the period it counts in and the count, which is
// also the counter's mark. It is safe for concurrent use.
type CounterStore struct {
	coll    *mongo.Collection
	timeout time.Duration
	owned   closeonce.Owned // the client, when the store opened it
	ensured sync.Map        // name → struct{}: the document exists
}

var _ sequence.CounterStore = (*CounterStore)(nil)

// counterDoc is a counter's document.
type counterDoc struct {
	Period bson.RawValue `bson:"period"`
	N      bson.RawValue `bson:"n"`
}

// mark returns the document as a Mark, or an error naming the counter
// when a hand edit left it without integers.
func (d counterDoc) mark(name string) (sequence.Mark, error) {
	p, ok1 := mongoconn.Integer(d.Period)
	n, ok2 := mongoconn.Integer(d.N)
	if !ok1 || !ok2 {
		return sequence.Mark{}, fmt.Errorf("%w: mongodb counter %q: period and n must be integers (int or long)", idforge.ErrInvalidArgument, name)
	}
	return sequence.Mark{Stamp: p, N: n}, nil
}

// NewCounterStore returns a store in db, whose client the caller keeps
// owning. It returns an error wrapping idforge.ErrInvalidArgument for a
// bad collection name.
func NewCounterStore(db *mongo.Database, cfg CounterStoreConfig) (*CounterStore, error) {
	cfg.Collection = cmp.Or(cfg.Collection, DefaultCounterCollection)
	if !validCollection(cfg.Collection) {
		return nil, fmt.Errorf("%w: mongodb counter store: collection name %q (want letters, digits and _)", idforge.ErrInvalidArgument, cfg.Collection)
	}
	return &CounterStore{coll: primary(db, cfg.Collection), timeout: cmp.Or(cfg.Timeout, mongoconn.DefaultTimeout)}, nil
}

func (s *CounterStore) ctx(ctx context.Context) (context.Context, context.CancelFunc) {
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) <= s.timeout {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, s.timeout)
}

// LoadMark implements sequence.CounterStore: it creates the name's
// document when missing and returns what it holds.
func (s *CounterStore) LoadMark(ctx context.Context, name string) (sequence.Mark, error) {
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	_, err := s.coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: name}},
		bson.D{{Key: "$setOnInsert", Value: bson.D{{Key: "period", Value: int64(0)}, {Key: "n", Value: int64(0)}}}},
		options.UpdateOne().SetUpsert(true))
	if err != nil && !mongo.IsDuplicateKeyError(err) {
		return sequence.Mark{}, fmt.Errorf("%w: mongodb counter %q: create: %w", idforge.ErrUnavailable, name, err)
	}
	m, err := s.read(ctx, name)
	if err != nil {
		return sequence.Mark{}, err
	}
	s.ensured.Store(name, struct{}{})
	return m, nil
}

// read returns the counter's document from the primary.
func (s *CounterStore) read(ctx context.Context, name string) (sequence.Mark, error) {
	var doc counterDoc
	err := s.coll.FindOne(ctx, bson.D{{Key: "_id", Value: name}}).Decode(&doc)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return sequence.Mark{}, fmt.Errorf("%w: the document of counter %q was deleted; re-create it with the last period and count issued",
			sequence.ErrCounterLost, name)
	}
	if err != nil {
		return sequence.Mark{}, fmt.Errorf("%w: mongodb counter %q: %w", idforge.ErrUnavailable, name, err)
	}
	return doc.mark(name)
}

// maxCASRounds bounds how often Count reads the document again after
// another node changed it between the read and the write.
const maxCASRounds = 1000

// Count implements sequence.CounterStore with single-document operations:
// it reads the document, decides as the interface says, and writes with a
// filter that matches only the document it read: an $inc of n when the
// count goes on in the stored period, otherwise a $set of the new period
// and count. When another node wrote first, the filter matches nothing
// and Count reads again.
func (s *CounterStore) Count(ctx context.Context, req sequence.CountRequest) (sequence.CountResult, error) {
	if _, ok := s.ensured.Load(req.Name); !ok {
		if _, err := s.LoadMark(ctx, req.Name); err != nil {
			return sequence.CountResult{}, err
		}
	}
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	for range maxCASRounds {
		stored, err := s.read(ctx, req.Name)
		if err != nil {
			return sequence.CountResult{}, err
		}
		target, cur, full := req.Base(stored)
		if full {
			return sequence.CountResult{Stamp: target, Full: true}, nil
		}
		if cur == math.MaxInt64 {
			return sequence.CountResult{}, fmt.Errorf("%w: mongodb counter %q", idforge.ErrSpaceExhausted, req.Name)
		}
		if !stored.Less(req.Floor) && target == stored.Stamp {
			// Counting on in the stored period: $inc, atomic on its own.
			limit := cmp.Or(req.Cap, int64(math.MaxInt64))
			var doc counterDoc
			err := s.coll.FindOneAndUpdate(ctx,
				bson.D{{Key: "_id", Value: req.Name}, {Key: "period", Value: target}, {Key: "n", Value: bson.D{{Key: "$lt", Value: limit}}}},
				bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: int64(1)}}}},
				options.FindOneAndUpdate().SetReturnDocument(options.After)).Decode(&doc)
			if errors.Is(err, mongo.ErrNoDocuments) {
				continue // the period moved on, or the cap was reached: look again
			}
			if err != nil {
				return sequence.CountResult{}, fmt.Errorf("%w: mongodb counter %q: %w", idforge.ErrUnavailable, req.Name, err)
			}
			got, err := doc.mark(req.Name)
			if err != nil {
				return sequence.CountResult{}, err
			}
			return sequence.CountResult{Stamp: got.Stamp, N: got.N}, nil
		}
		// A later period, or a floor above the document: compare and set.
		res, err := s.coll.UpdateOne(ctx,
			bson.D{{Key: "_id", Value: req.Name}, {Key: "period", Value: stored.Stamp}, {Key: "n", Value: stored.N}},
			bson.D{{Key: "$set", Value: bson.D{{Key: "period", Value: target}, {Key: "n", Value: cur + 1}}}})
		if err != nil {
			return sequence.CountResult{}, fmt.Errorf("%w: mongodb counter %q: %w", idforge.ErrUnavailable, req.Name, err)
		}
		if res.MatchedCount == 1 {
			return sequence.CountResult{Stamp: target, N: cur + 1}, nil
		}
	}
	return sequence.CountResult{}, fmt.Errorf("%w: mongodb counter %q: the document kept changing under %d attempts", idforge.ErrUnavailable, req.Name, maxCASRounds)
}

// Close disconnects the client if the store opened it
// (sequence.OpenCounter). It is idempotent.
func (s *CounterStore) Close() error {
	return s.owned.Close()
}

// openCounterStore is the sequence.CounterOpener of "mongodb" and
// "mongodb+srv".
func openCounterStore(ctx context.Context, u *url.URL, _ string) (sequence.CounterStore, error) {
	q := dsn.NewQuery(u, "mongodb counter URL")
	cfg := CounterStoreConfig{Collection: q.String("collection", DefaultCounterCollection)}
	if err := q.Err(); err != nil {
		return nil, err
	}
	if !validCollection(cfg.Collection) {
		return nil, q.Errorf("collection %q: want letters, digits and _", cfg.Collection)
	}
	db, timeout, err := connect(ctx, u, q)
	if err != nil {
		return nil, err
	}
	cfg.Timeout = timeout
	s, err := NewCounterStore(db, cfg)
	if err := closeonce.Adopt(err, disconnect(db), func() *closeonce.Owned { return &s.owned }); err != nil {
		return nil, err
	}
	return s, nil
}
