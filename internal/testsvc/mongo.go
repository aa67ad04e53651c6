package testsvc

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// MongoEnv names the MongoDB server tests use, as a connection string
// (mongodb://[user:password@]host:port/); DefaultMongo when unset.
const MongoEnv = "IDFORGE_TEST_MONGO"

// DefaultMongo is the MongoDB server used when MongoEnv is unset: the
// FerretDB server of tools/ferretdb that .ci/run starts.
const DefaultMongo = "mongodb://127.0.0.1:27017/"

// StartMongo is how the test server is started on a development machine,
// from the repository's root, for skip messages.
const StartMongo = "(cd tools/ferretdb && go build -o /tmp/idforge-ferretdb-server . ) && " +
	"nohup /tmp/idforge-ferretdb-server -listen 127.0.0.1:27017 -dir /tmp/idforge-ferretdb >/tmp/idforge-ferretdb.log 2>&1 &"

// mongoClients caches one client per server URL for the whole test
// binary, and the error of an unreachable server so that later tests skip
// at once.
var mongoClients struct {
	mu      sync.Mutex
	clients map[string]*mongo.Client
	errs    map[string]error
}

// MongoAdmin returns the admin connection string of the server (MongoEnv
// or DefaultMongo) and a client connected to it, shared by the whole test
// binary. When the server cannot be reached the test is skipped with a
// message saying how to start it, or fails under CI (CI=true).
func MongoAdmin(tb testing.TB) (*url.URL, *mongo.Client) {
	tb.Helper()
	raw := os.Getenv(MongoEnv)
	if raw == "" {
		raw = DefaultMongo
	}
	u, err := url.Parse(raw)
	if err != nil {
		tb.Fatalf("testsvc: %s: bad URL: %v", MongoEnv, err)
	}
	mongoClients.mu.Lock()
	defer mongoClients.mu.Unlock()
	if mongoClients.clients == nil {
		mongoClients.clients = map[string]*mongo.Client{}
		mongoClients.errs = map[string]error{}
	}
	c, err := mongoClients.clients[raw], mongoClients.errs[raw]
	if c == nil && err == nil {
		c, err = mongoConnect(raw)
		mongoClients.clients[raw], mongoClients.errs[raw] = c, err
	}
	if err != nil {
		msg := fmt.Sprintf("testsvc: MongoDB at %s is unreachable (%v); start the test server (FerretDB) with\n\t%s\nor point %s at another server",
			u.Redacted(), err, StartMongo, MongoEnv)
		if os.Getenv("CI") == "true" {
			tb.Fatal(msg)
		}
		tb.Skip(msg)
	}
	return u, c
}

func mongoConnect(raw string) (*mongo.Client, error) {
	opts := options.Client().ApplyURI(raw).SetServerSelectionTimeout(3 * time.Second).SetConnectTimeout(3 * time.Second)
	c, err := mongo.Connect(opts)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Ping(ctx, nil); err != nil {
		c.Disconnect(context.Background())
		return nil, err
	}
	return c, nil
}

// Mongo returns the idforge store URL of a database of its own on the
// MongoDB server, e.g.
// "mongodb://127.0.0.1:27017/idforge_t_1f2e3d4c5b6a7988?allow_ferretdb=true",
// and drops the database when tb ends. MongoDB creates a database when
// something is first written to it, so the database starts empty. The
// only parameter is allow_ferretdb=true: the test server is FerretDB
// behind a front that runs one command at a time (tools/ferretdb), which
// the store may use; against MongoDB the parameter changes nothing.
func Mongo(tb testing.TB) string {
	tb.Helper()
	u, c := MongoAdmin(tb)
	name := randomName()
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
		defer cancel()
		if err := c.Database(name).Drop(ctx); err != nil {
			tb.Errorf("testsvc: MongoDB: drop database %s: %v", name, err)
		}
	})
	store := *u
	store.Path = "/" + name
	store.RawPath = ""
	store.RawQuery = MongoTestParams
	return store.String()
}

// MongoTestParams are the parameters of the store URLs Mongo returns.
const MongoTestParams = "allow_ferretdb=true"

// MongoDB returns the database of a store URL returned by Mongo, on the
// shared client, for documents a test writes or reads by hand.
func MongoDB(tb testing.TB, storeURL string) *mongo.Database {
	tb.Helper()
	_, c := MongoAdmin(tb)
	u, err := url.Parse(storeURL)
	if err != nil {
		tb.Fatalf("testsvc: store URL: %v", err)
	}
	name := u.Path
	if len(name) > 0 && name[0] == '/' {
		name = name[1:]
	}
	if name == "" {
		tb.Fatalf("testsvc: store URL %s names no database", u.Redacted())
	}
	return c.Database(name)
}
