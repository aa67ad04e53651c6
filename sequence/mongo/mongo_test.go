package mongo_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	drv "go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/testsvc"
	"github.com/idforge/idforge/sequence"
	"github.com/idforge/idforge/sequence/internal/seqtest"
	"github.com/idforge/idforge/sequence/mongo"
)

// withParams appends query parameters to a database URL.
func withParams(raw, params string) string {
	if strings.Contains(raw, "?") {
		return raw + "&" + params
	}
	return raw + "?" + params
}

// db returns a fresh database's URL and the database itself.
func db(t *testing.T) (string, *drv.Database) {
	t.Helper()
	u := testsvc.Mongo(t)
	return u, testsvc.MongoDB(t, u)
}

func TestSourceConcurrent(t *testing.T) {
	u, _ := db(t)
	ctx := context.Background()
	got := seqtest.Collect(t, func(tb testing.TB) idforge.Generator {
		// A generous call timeout: 32 goroutines on a busy machine queue
		// at the test server, and this test is about uniqueness, not speed.
		s, err := sequence.Open(ctx, withParams(u, "name=orders&timeout=30s"))
		if err != nil {
			tb.Fatal(err)
		}
		return s
	}, 4, 8, 40)
	seqtest.Unique(t, got)
	if len(got) != 4*8*40 {
		t.Fatalf("%d values", len(got))
	}
	for _, v := range got {
		if v < 1 || v > 4*8*40 {
			t.Fatalf("value %d outside [1, %d]: the counter should have no gaps here", v, 4*8*40)
		}
	}
}

// TestSourceLostDocument: a deleted or lowered document is reported,
// never restarted; a repaired one serves again.
func TestSourceLostDocument(t *testing.T) {
	u, d := db(t)
	ctx := context.Background()
	s, err := sequence.Open(ctx, withParams(u, "name=lost&start=10"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := int64(10); i < 15; i++ {
		if v, err := s.Next(ctx); err != nil || v != i {
			t.Fatalf("Next = %d, %v; want %d", v, err, i)
		}
	}
	coll := d.Collection(mongo.DefaultSourceCollection)
	coll.DeleteOne(ctx, bson.D{{Key: "_id", Value: "lost"}})
	if _, err := s.Next(ctx); !errors.Is(err, sequence.ErrCounterLost) || !errors.Is(err, idforge.ErrUnavailable) {
		t.Fatalf("after the document vanished: %v, want ErrCounterLost", err)
	}
	if n, _ := coll.CountDocuments(ctx, bson.D{{Key: "_id", Value: "lost"}}); n != 0 {
		t.Fatal("Next re-created the lost document")
	}
	coll.InsertOne(ctx, bson.D{{Key: "_id", Value: "lost"}, {Key: "current_value", Value: int64(2)}}) // a stale copy
	if _, err := s.Next(ctx); !errors.Is(err, sequence.ErrCounterLost) {
		t.Fatalf("after the document went back: %v, want ErrCounterLost", err)
	}
	coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: "lost"}}, bson.D{{Key: "$set", Value: bson.D{{Key: "current_value", Value: 1000.0}}}})
	if _, err := s.Next(ctx); !errors.Is(err, idforge.ErrInvalidArgument) {
		t.Fatalf("with a double in the document: %v, want ErrInvalidArgument", err)
	}
	coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: "lost"}}, bson.D{{Key: "$set", Value: bson.D{{Key: "current_value", Value: int64(100)}}}})
	if v, err := s.Next(ctx); err != nil || v != 101 {
		t.Fatalf("after repair: %d, %v", v, err)
	}
	if _, err := sequence.Open(ctx, withParams(u, "name=absent&create=false")); !errors.Is(err, sequence.ErrCounterLost) {
		t.Fatalf("create=false on a missing document: %v, want ErrCounterLost", err)
	}
}

func TestSourceOverflow(t *testing.T) {
	u, d := db(t)
	ctx := context.Background()
	d.Collection(mongo.DefaultSourceCollection).InsertOne(ctx, bson.D{{Key: "_id", Value: "big"}, {Key: "current_value", Value: int64(9223372036854775806)}})
	s, err := sequence.Open(ctx, withParams(u, "name=big"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if v, err := s.Next(ctx); err != nil || v != 9223372036854775807 {
		t.Fatalf("%d, %v", v, err)
	}
	if _, err := s.Next(ctx); !errors.Is(err, idforge.ErrSpaceExhausted) {
		t.Fatalf("past the largest int64: %v", err)
	}
}

func TestSourceBadURLs(t *testing.T) {
	u, _ := db(t)
	ctx := context.Background()
	plain, _ := url.Parse(u)
	plain.RawQuery = ""
	for _, bad := range []string{
		u,                                      // no name
		withParams(u, "name=bad name"),         // bad name
		withParams(u, "name=x&collection=a.b"), // bad collection
		withParams(u, "name=x&w=1"),            // weakened write concern
		withParams(u, "name=x&readConcernLevel=local"),
		withParams(u, "name=x&timeout=soon"),
		plain.String() + "?name=x", // FerretDB without allow_ferretdb
	} {
		if s, err := sequence.Open(ctx, bad); !errors.Is(err, idforge.ErrInvalidArgument) && !errors.Is(err, idforge.ErrInvalidKey) {
			if err == nil {
				s.Close()
			}
			t.Errorf("Open(%s): %v, want ErrInvalidArgument or ErrInvalidKey", bad, err)
		}
	}
	if _, err := sequence.Open(ctx, "mongodb://u:s3cret-pw@127.0.0.1:1/db?name=x&timeout=300ms"); err == nil || strings.Contains(err.Error(), "s3cret-pw") ||
		!errors.Is(err, idforge.ErrUnavailable) {
		t.Errorf("Open on an unreachable server: %v, want ErrUnavailable without the password", err)
	}
}

func TestCounterStore(t *testing.T) {
	u, d := db(t)
	seqtest.CounterSuite(t, func(tb testing.TB) sequence.CounterStore {
		// A client of its own, as another process would have.
		c, err := drv.Connect(options.Client().ApplyURI(u))
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { c.Disconnect(context.Background()) })
		st, err := mongo.NewCounterStore(c.Database(d.Name()), mongo.CounterStoreConfig{})
		if err != nil {
			tb.Fatal(err)
		}
		return st
	}, func(tb testing.TB, name string) {
		res, err := d.Collection(mongo.DefaultCounterCollection).DeleteOne(context.Background(), bson.D{{Key: "_id", Value: name}})
		if err != nil || res.DeletedCount != 1 {
			tb.Fatalf("delete counter %s: %+v, %v", name, res, err)
		}
	})
}

func TestOpenCounterURL(t *testing.T) {
	u, _ := db(t)
	ctx := context.Background()
	c, err := sequence.OpenCounter(ctx, withParams(u, "name=order_seq&period=second&cap=16383&over_cap=refuse&tz=Asia/Shanghai&dir="+t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	n, p, err := c.Next(ctx, seqtest.T0)
	if err != nil || n != 1 {
		t.Fatalf("%d, %v", n, err)
	}
	if got := p.Format("060102150405"); got != "250413200000" {
		t.Fatalf("period %s, want 250413200000 (Shanghai)", got)
	}
	for _, bad := range []string{
		withParams(u, "period=second"),
		withParams(u, "name=x&period=fortnight"),
		withParams(u, "name=x&period=day&collection=no-dash"),
		withParams(u, "name=x&period=day&w=0"),
	} {
		if _, err := sequence.OpenCounter(ctx, bad); !errors.Is(err, idforge.ErrInvalidArgument) {
			t.Errorf("OpenCounter(%s): %v, want ErrInvalidArgument", bad, err)
		}
	}
}
