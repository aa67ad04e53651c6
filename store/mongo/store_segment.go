package mongo

import (
	"context"
	"errors"
	"fmt"
	"math"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/mongoconn"
	"github.com/idforge/idforge/store/internal/claim"
)

// ClaimSegment implements idforge.SegmentStore with Leaf's semantics: it
// adds step (the key's stored step when step is 0) to the key's max_id
// and returns [new max_id − step, new max_id), so a key (max_id 1, step
// 2000) yields [1, 2001) first. The claim is one findOneAndUpdate on the
// key's document: a filter that matches only a segment key whose max_id
// is an integer that can grow by step without passing the largest int64
// (and, for the stored step, whose step is the one this Store read), an
// $inc of max_id, and the document as the update left it. MongoDB applies
// it to the document atomically, so claims from any number of processes
// never overlap. With the default write concern (w=majority) it returns
// once a majority of the replica set has the claim, so no fail-over can
// hand its range out again.
//
// A transient failure (no primary, a connection reset, a primary
// stepping down) is retried with backoff, up to Config.Retries times,
// within the call's deadline. A claim whose reply was lost may have been
// applied: the retry then claims the next range and the first is never
// issued, a gap but never a value twice.
//
// Errors, each naming the key: ErrUnknownKey when there is no such key
// (also for a key of another strategy); ErrSpaceExhausted when the new
// max_id would pass the largest int64 (the document is left unchanged);
// ErrInvalidArgument for a negative step, a document whose max_id or step
// is not an integer, or, when step is 0, a stored step that is not
// positive; ErrClosed after Close; the context's error when it ends;
// otherwise the driver's error after the last attempt.
func (s *Store) ClaimSegment(ctx context.Context, key string, step int64) (idforge.Segment, error) {
	return claim.Segment(ctx, s.retry, key, step, s.claim)
}

// claim makes one attempt. It returns the driver's error unwrapped, so
// that the caller can tell whether to retry.
func (s *Store) claim(ctx context.Context, key string, step int64) (idforge.Segment, error) {
	if err := s.check(ctx); err != nil {
		return idforge.Segment{}, err
	}
	used, stepFilter := step, bson.E{Key: "step", Value: bson.D{{Key: "$type", Value: mongoconn.IntegerTypes}}}
	if step == 0 {
		stored, ok := s.steps.Load(key)
		if !ok {
			// Learn the stored step: whyNotClaimed reads the document
			// and caches it, or says why the key cannot be claimed.
			if err := s.whyNotClaimed(ctx, key, 0); !errors.Is(err, claim.ErrChanged) {
				return idforge.Segment{}, err
			}
			if stored, ok = s.steps.Load(key); !ok {
				return idforge.Segment{}, claim.ErrChanged
			}
		}
		used = stored.(int64)
		stepFilter.Value = used
	}
	filter := bson.D{
		{Key: "_id", Value: key},
		{Key: "strategy", Value: string(idforge.StrategySegment)},
		{Key: "max_id", Value: bson.D{{Key: "$type", Value: mongoconn.IntegerTypes}, {Key: "$lte", Value: math.MaxInt64 - used}}},
		stepFilter,
	}
	update := bson.D{
		{Key: "$inc", Value: bson.D{{Key: "max_id", Value: used}}},
		{Key: "$currentDate", Value: bson.D{{Key: "update_time", Value: true}}},
	}
	// No projection: the document is small, and FerretDB does not take
	// one with findAndModify.
	opts := options.FindOneAndUpdate().SetReturnDocument(options.After)
	var doc keyDoc
	err := s.claims.FindOneAndUpdate(ctx, filter, update, opts).Decode(&doc)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return idforge.Segment{}, s.whyNotClaimed(ctx, key, step)
	}
	if err != nil {
		return idforge.Segment{}, err
	}
	newMax, ok1 := mongoconn.Integer(doc.MaxID)
	rowStep, ok2 := mongoconn.Integer(doc.Step)
	if !ok1 || !ok2 {
		// Only if the document changed type between the filter and the
		// update, which MongoDB's single-document atomicity rules out.
		return idforge.Segment{}, errNotIntegers(key)
	}
	return claim.Claimed(newMax, rowStep, step), nil
}

// whyNotClaimed explains why a claim's update matched nothing, reading the
// key's document from the primary: a verdict error naming the key,
// claim.ErrChanged (after caching the stored step) when the document could
// be claimed now, or a driver error.
func (s *Store) whyNotClaimed(ctx context.Context, key string, step int64) error {
	var doc keyDoc
	err := s.claims.FindOne(ctx, bson.D{{Key: "_id", Value: key}}).Decode(&doc)
	if errors.Is(err, mongo.ErrNoDocuments) {
		s.steps.Delete(key)
		return claim.NotSegmentKey(key, "")
	}
	if err != nil {
		return err
	}
	if doc.Strategy != string(idforge.StrategySegment) {
		s.steps.Delete(key)
		return claim.NotSegmentKey(key, doc.Strategy)
	}
	maxID, ok1 := mongoconn.Integer(doc.MaxID)
	rowStep, ok2 := mongoconn.Integer(doc.Step)
	if !ok1 || !ok2 {
		s.steps.Delete(key)
		return errNotIntegers(key)
	}
	if err := claim.Unclaimable(key, maxID, rowStep, step); err != nil {
		s.steps.Delete(key)
		return err
	}
	s.steps.Store(key, rowStep)
	return claim.ErrChanged
}

// errNotIntegers is the error for a key document whose max_id or step is
// missing or not an integer (a double, a string): a hand edit got it
// wrong.
func errNotIntegers(key string) error {
	return fmt.Errorf("%w: key %q: document holds a max_id or step that is missing or not an integer (int or long; write NumberLong(…) in the mongo shell)",
		idforge.ErrInvalidArgument, key)
}

// ReturnSegment implements idforge.SegmentReturner: it sets key's max_id
// back to from if, and only if, it is still to, in one conditional
// updateOne, and reports whether it did. from == to succeeds without a
// change when max_id is to.
//
// Errors: ErrInvalidArgument when from > to or from < 1; ErrUnknownKey
// when there is no such segment key; ErrClosed after Close; the driver's
// error otherwise (not retried: a lost hand-back only leaves a gap).
func (s *Store) ReturnSegment(ctx context.Context, key string, from, to int64) (bool, error) {
	segKey := bson.D{{Key: "_id", Value: key}, {Key: "strategy", Value: string(idforge.StrategySegment)}}
	return s.life.Return(ctx, key, from, to, s.check, func(ctx context.Context) (bool, error) {
		res, err := s.claims.UpdateOne(ctx, append(segKey, bson.E{Key: "max_id", Value: to}),
			bson.D{{Key: "$set", Value: bson.D{{Key: "max_id", Value: from}}}, {Key: "$currentDate", Value: bson.D{{Key: "update_time", Value: true}}}})
		if err != nil {
			return false, err
		}
		return res.MatchedCount > 0, nil
	}, func(ctx context.Context) (bool, error) {
		n, err := s.claims.CountDocuments(ctx, segKey)
		return n > 0, err
	})
}

// GlobalOrder implements idforge.GlobalOrderStore. A claim is one
// findOneAndUpdate on the primary, applied to the document atomically;
// with w=majority it returns once a majority has it, which every later
// primary has too, so a claim that begins after another returned gets
// values above it (a deposed primary cannot get a majority to
// acknowledge, so its claims fail). A weaker write concern
// (allow_weak_writes) is refused.
func (s *Store) GlobalOrder(context.Context) error { return s.notLinear }
