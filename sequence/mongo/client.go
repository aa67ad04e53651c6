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
	"github.com/idforge/idforge/internal/mongoconn"
	"github.com/idforge/idforge/sequence"
)

func init() {
	for _, scheme := range mongoconn.Schemes {
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
	if err := mongoconn.Check(u); err != nil {
		return nil, 0, q.Errorf("%v", err)
	}
	timeout := q.Duration("timeout", mongoconn.DefaultTimeout, time.Millisecond)
	weak := mongoconn.TakeWeak(q)
	allowFerretDB := q.Bool("allow_ferretdb", false)
	if err := q.Err(); err != nil {
		return nil, 0, err
	}
	name, _ := mongoconn.Database(u)
	opts, err := mongoconn.Config(u, q.Rest(), weak, timeout)
	if err != nil {
		return nil, 0, q.Errorf("%v", err)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c, err := mongoconn.Connect(ctx, opts, allowFerretDB)
	if errors.Is(err, idforge.ErrInvalidArgument) {
		return nil, 0, q.Errorf("%v", err)
	} else if err != nil {
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
