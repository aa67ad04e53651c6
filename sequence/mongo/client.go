package mongo

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/readpref"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/closeonce"
	"github.com/idforge/idforge/internal/dsn"
	"github.com/idforge/idforge/internal/dsn/mongodsn"
	"github.com/idforge/idforge/sequence"
)

// defaultTimeout bounds connecting and each call without an earlier
// deadline.
const defaultTimeout = 5 * time.Second

func init() {
	for _, scheme := range mongodsn.Schemes {
		sequence.Register(sequence.Scheme{Name: scheme, Form: scheme + "://[user:password@]host/database?name=orders",
			Doc: "$inc on one MongoDB document"}, openSource)
		sequence.RegisterCounter(sequence.Scheme{Name: scheme, Form: scheme + "://[user:password@]host/database?name=waybill&period=day",
			Doc: "per-period counters in MongoDB documents"}, openCounterStore)
	}
}

// disconnect is what closes the client of db, which an opener connected.
func disconnect(db *mongo.Database) closeonce.Func {
	return func() error { return db.Client().Disconnect(context.Background()) }
}

// connect opens a client from u and the parameters left in q and returns
// the database u names, once the primary answers. It takes the
// connection's idforge parameters from q first.
func connect(ctx context.Context, u *url.URL, q *dsn.Query) (*mongo.Database, time.Duration, error) {
	if err := mongodsn.Check(u); err != nil {
		return nil, 0, q.Errorf("%v", err)
	}
	timeout := q.Duration("timeout", defaultTimeout, time.Millisecond)
	weak := mongodsn.TakeWeak(q)
	allowFerretDB := q.Bool("allow_ferretdb", false)
	if err := q.Err(); err != nil {
		return nil, 0, err
	}
	name, _ := mongodsn.Database(u)
	opts, err := mongodsn.Config(u, q.Rest(), weak, timeout)
	if err != nil {
		return nil, 0, q.Errorf("%v", err)
	}
	c, err := mongo.Connect(opts)
	if err != nil {
		return nil, 0, q.Errorf("%v", err)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err = c.Ping(ctx, readpref.Primary())
	if err == nil {
		err = mongodsn.CheckServer(ctx, c, allowFerretDB)
	}
	if err != nil {
		c.Disconnect(context.Background())
		if errors.Is(err, mongodsn.ErrFerretDB) {
			return nil, 0, q.Errorf("%v", err)
		}
		return nil, 0, fmt.Errorf("%w: %s: connect: %w", idforge.ErrUnavailable, dsn.Redacted(u), err)
	}
	return c.Database(name), timeout, nil
}

// primary returns coll of db read from the primary, for the reads that
// decide.
func primary(db *mongo.Database, coll string) *mongo.Collection {
	return db.Collection(coll, options.Collection().SetReadPreference(readpref.Primary()))
}

// validCollection reports whether name is a collection name idforge
// takes: 1 to 64 letters, digits and '_'.
func validCollection(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for _, c := range name {
		if !(c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}
