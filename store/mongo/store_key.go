package mongo

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/mongoconn"
	"github.com/idforge/idforge/store"
)

// keyDoc is a document of KeysCollection. max_id and step are kept raw so
// that a value a hand edit made a double or a string is told apart.
type keyDoc struct {
	Name        string        `bson:"_id"`
	Strategy    string        `bson:"strategy,omitempty"`
	MaxID       bson.RawValue `bson:"max_id,omitempty"`
	Step        bson.RawValue `bson:"step,omitempty"`
	Description string        `bson:"description,omitempty"`
	Updated     time.Time     `bson:"update_time"`
}

func (d *keyDoc) key() (idforge.Key, error) {
	k := idforge.Key{Name: d.Name, Strategy: idforge.Strategy(d.Strategy), Description: d.Description, Updated: d.Updated.UTC()}
	if k.Strategy != idforge.StrategySegment {
		return k, nil
	}
	maxID, ok1 := mongoconn.Integer(d.MaxID)
	step, ok2 := mongoconn.Integer(d.Step)
	if !ok1 || !ok2 {
		return idforge.Key{}, errNotIntegers(d.Name)
	}
	k.MaxID, k.Step = maxID, step
	return k, nil
}

// CreateKey implements idforge.KeyStore: it inserts the key's document,
// its name as _id, so that MongoDB's unique _id index decides between
// creators of one name, whatever their strategies, in any number of
// processes. A segment key's document holds max_id = k.MaxID (the first
// ID issued) and step = k.Step, both as 64-bit integers.
//
// Errors: those of idforge.Key.Validate; ErrKeyExists when the name is
// taken; an error saying to run `idforge migrate` on a database without
// idforge's collections; ErrClosed after Close.
func (s *Store) CreateKey(ctx context.Context, k idforge.Key) error {
	if err := s.life.CheckOpen(); err != nil {
		return err
	}
	if err := k.Validate(); err != nil {
		return err
	}
	doc := bson.D{{Key: "_id", Value: k.Name}, {Key: "strategy", Value: string(k.Strategy)}}
	if k.Strategy == idforge.StrategySegment {
		doc = append(doc, bson.E{Key: "max_id", Value: k.MaxID}, bson.E{Key: "step", Value: k.Step})
	}
	if k.Description != "" {
		doc = append(doc, bson.E{Key: "description", Value: k.Description})
	}
	doc = append(doc, bson.E{Key: "update_time", Value: time.Now().UTC()})
	return s.insert(ctx, s.keys, doc, fmt.Errorf("%w: %q", idforge.ErrKeyExists, k.Name), fmt.Sprintf("create key %q", k.Name))
}

// Key implements idforge.KeyStore. It returns an error wrapping
// idforge.ErrUnknownKey when there is no such key, one wrapping
// ErrInvalidArgument for a segment key whose document a hand edit left
// without integer max_id and step, and ErrClosed after Close.
func (s *Store) Key(ctx context.Context, name string) (idforge.Key, error) {
	return findOne(ctx, s, s.keys, name, fmt.Errorf("%w: %q", idforge.ErrUnknownKey, name), fmt.Sprintf("read key %q", name), (*keyDoc).key)
}

// Keys implements idforge.KeyStore: every key, sorted by name in byte
// order (the _id index's order for strings). It returns an error wrapping
// ErrClosed after Close.
func (s *Store) Keys(ctx context.Context) ([]idforge.Key, error) {
	return list(ctx, s, s.keys, "list keys", (*keyDoc).key)
}

// list is the common part of Keys and Serials: every document of coll,
// sorted by _id (names in byte order), decoded as D and converted by conv,
// once the database is migrated.
func list[D, T any](ctx context.Context, s *Store, coll *mongo.Collection, what string, conv func(*D) (T, error)) ([]T, error) {
	return find(ctx, s, coll, bson.D{}, what, conv)
}

// find is list of the documents matching filter.
func find[D, T any](ctx context.Context, s *Store, coll *mongo.Collection, filter bson.D, what string, conv func(*D) (T, error)) ([]T, error) {
	ctx, cancel, err := s.start(ctx)
	defer cancel()
	if err != nil {
		return nil, err
	}
	cur, err := coll.Find(ctx, filter, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return nil, s.life.Wrap(ctx, err, what)
	}
	var docs []D
	if err := cur.All(ctx, &docs); err != nil {
		return nil, s.life.Wrap(ctx, err, what)
	}
	out := make([]T, 0, len(docs))
	for i := range docs {
		v, err := conv(&docs[i])
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// insert is the common part of CreateKey and CreateSerial: it inserts doc
// into coll once the database is migrated, and returns taken for a
// duplicate _id.
func (s *Store) insert(ctx context.Context, coll *mongo.Collection, doc any, taken error, what string) error {
	ctx, cancel, err := s.start(ctx)
	defer cancel()
	if err != nil {
		return err
	}
	_, err = coll.InsertOne(ctx, doc)
	switch {
	case err == nil:
		return nil
	case mongo.IsDuplicateKeyError(err):
		return taken
	}
	return s.life.Wrap(ctx, err, what)
}

// findOne is the common part of Key and Serial: it decodes the document
// of coll whose _id is name as D, once the database is migrated, and
// returns it converted by conv, or unknown when there is none.
func findOne[D, T any](ctx context.Context, s *Store, coll *mongo.Collection, name string, unknown error, what string, conv func(*D) (T, error)) (T, error) {
	var zero T
	ctx, cancel, err := s.start(ctx)
	defer cancel()
	if err != nil {
		return zero, err
	}
	var doc D
	err = coll.FindOne(ctx, bson.D{{Key: "_id", Value: name}}).Decode(&doc)
	switch {
	case err == nil:
		return conv(&doc)
	case errors.Is(err, mongo.ErrNoDocuments):
		return zero, unknown
	}
	return zero, s.life.Wrap(ctx, err, what)
}

// UpdateKey implements idforge.KeyUpdater: it sets the step (segment keys)
// and description of the key's document, never its max_id. Errors:
// ErrUnknownKey when there is no such key, those of
// idforge.Key.ValidateUpdate, ErrClosed after Close.
func (s *Store) UpdateKey(ctx context.Context, name string, step int64, description string) error {
	k, err := store.KeyToUpdate(ctx, s, name, step, description)
	if err != nil {
		return err
	}
	set := bson.D{{Key: "description", Value: description}, {Key: "update_time", Value: time.Now().UTC()}}
	if k.Strategy == idforge.StrategySegment {
		set = append(set, bson.E{Key: "step", Value: step})
	}
	ctx, cancel, err := s.start(ctx)
	defer cancel()
	if err != nil {
		return err
	}
	res, err := s.keys.UpdateOne(ctx, bson.D{{Key: "_id", Value: k.Name}}, bson.D{{Key: "$set", Value: set}})
	if err != nil {
		return s.life.Wrap(ctx, err, fmt.Sprintf("update key %q", name))
	}
	if res.MatchedCount == 0 {
		return fmt.Errorf("%w: %q", idforge.ErrUnknownKey, name)
	}
	return nil
}
