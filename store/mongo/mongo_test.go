package mongo_test

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/e2e"
	"github.com/idforge/idforge/internal/testsvc"
	"github.com/idforge/idforge/segment"
	"github.com/idforge/idforge/store"
	"github.com/idforge/idforge/store/mongo"
	"github.com/idforge/idforge/store/storetest"
)

var quiet = slog.New(slog.DiscardHandler)

// open opens a store on storeURL, closed when tb ends.
func open(tb testing.TB, storeURL string, forMigrate bool) *mongo.Store {
	tb.Helper()
	cfg, err := mongo.ParseURL(storeURL)
	if err != nil {
		tb.Fatalf("ParseURL: %v", err)
	}
	cfg.Logger, cfg.ForMigrate = quiet, forMigrate
	st, err := mongo.Open(context.Background(), cfg)
	if err != nil {
		tb.Fatalf("Open: %v", err)
	}
	tb.Cleanup(func() { st.Close() })
	return st
}

// fresh opens a migrated store on a new database and returns it with
// the database's URL.
func fresh(tb testing.TB) (*mongo.Store, string) {
	tb.Helper()
	u := testsvc.Mongo(tb)
	st := open(tb, u, true)
	if err := st.Migrate(context.Background()); err != nil {
		tb.Fatalf("Migrate: %v", err)
	}
	return st, u
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) idforge.Store {
		st, _ := fresh(t)
		return st
	})
}

func BenchmarkStore(b *testing.B) {
	storetest.Bench(b, func(b *testing.B) idforge.Store {
		st, _ := fresh(b)
		return st
	})
}

// TestOpenNotMigrated: Open refuses a database without idforge's
// collections and says what to do; ForMigrate (what `idforge migrate`
// uses) opens it, every call then says to migrate, and a store opened
// before the migration (by another node) catches up after it.
func TestOpenNotMigrated(t *testing.T) {
	ctx := context.Background()
	u := testsvc.Mongo(t)
	_, err := store.Open(ctx, u, store.Options{Logger: quiet})
	if err == nil || !strings.Contains(err.Error(), "idforge migrate") {
		t.Fatalf("Open on an empty database: %v, want an error saying to run idforge migrate", err)
	}
	early := open(t, u, true)
	if _, err := early.ClaimSegment(ctx, "k", 0); err == nil || !strings.Contains(err.Error(), "idforge migrate") {
		t.Fatalf("claim before migrating: %v", err)
	}
	if err := early.Ping(ctx); err == nil || !strings.Contains(err.Error(), "idforge migrate") {
		t.Fatalf("Ping before migrating: %v", err)
	}
	m := open(t, u, true)
	created, err := m.MigrateTables(ctx)
	if err != nil || !slices.Equal(created, []string{"idforge_keys", "idforge_serials", "idforge_definitions"}) {
		t.Fatalf("MigrateTables = %v, %v; want the keys, serials and definitions collections created", created, err)
	}
	if created, err := m.MigrateTables(ctx); err != nil || len(created) != 0 {
		t.Fatalf("second MigrateTables = %v, %v; want nothing created", created, err)
	}
	if err := early.CreateKey(ctx, idforge.Key{Name: "k", Strategy: idforge.StrategySegment, MaxID: 1, Step: 10}); err != nil {
		t.Fatalf("CreateKey on the store opened before the migration: %v", err)
	}
	if seg, err := early.ClaimSegment(ctx, "k", 0); err != nil || seg != (idforge.Segment{Start: 1, End: 11, Step: 10}) {
		t.Fatalf("claim after migrating = %+v, %v", seg, err)
	}
}

// TestBadDocuments: documents a hand edit got wrong are refused with a
// clear error and never changed.
func TestBadDocuments(t *testing.T) {
	ctx := context.Background()
	st, u := fresh(t)
	keys := testsvc.MongoDB(t, u).Collection(mongo.KeysCollection)
	_, err := keys.InsertMany(ctx, []any{
		bson.D{{Key: "_id", Value: "zero-step"}, {Key: "strategy", Value: "segment"}, {Key: "max_id", Value: int64(1)}, {Key: "step", Value: int64(0)}},
		bson.D{{Key: "_id", Value: "neg-step"}, {Key: "strategy", Value: "segment"}, {Key: "max_id", Value: int64(1)}, {Key: "step", Value: int32(-10)}},
		bson.D{{Key: "_id", Value: "double"}, {Key: "strategy", Value: "segment"}, {Key: "max_id", Value: 1000.0}, {Key: "step", Value: int64(10)}},
		bson.D{{Key: "_id", Value: "text"}, {Key: "strategy", Value: "segment"}, {Key: "max_id", Value: "1000"}, {Key: "step", Value: int64(10)}},
		bson.D{{Key: "_id", Value: "no-max"}, {Key: "strategy", Value: "segment"}, {Key: "step", Value: int64(10)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"zero-step", "neg-step", "double", "text", "no-max"} {
		_, err := st.ClaimSegment(ctx, key, 0)
		if !errors.Is(err, idforge.ErrInvalidArgument) || !strings.Contains(err.Error(), key) {
			t.Errorf("ClaimSegment(%q, 0): %v; want ErrInvalidArgument naming the key", key, err)
		}
	}
	for _, key := range []string{"double", "text", "no-max"} {
		if _, err := st.ClaimSegment(ctx, key, 5); !errors.Is(err, idforge.ErrInvalidArgument) {
			t.Errorf("ClaimSegment(%q, 5): %v; want ErrInvalidArgument", key, err)
		}
		if _, err := st.Key(ctx, key); !errors.Is(err, idforge.ErrInvalidArgument) {
			t.Errorf("Key(%q): %v; want ErrInvalidArgument", key, err)
		}
	}
	// Nothing was changed.
	var doc bson.M
	if err := keys.FindOne(ctx, bson.D{{Key: "_id", Value: "double"}}).Decode(&doc); err != nil || doc["max_id"] != 1000.0 {
		t.Fatalf("the double max_id became %v (%v)", doc["max_id"], err)
	}
	// An explicit step still works on an integer max_id.
	if seg, err := st.ClaimSegment(ctx, "neg-step", 5); err != nil || seg != (idforge.Segment{Start: 1, End: 6, Step: -10}) {
		t.Fatalf("ClaimSegment(neg-step, 5) = %+v, %v", seg, err)
	}
	if _, err := st.Keys(ctx); !errors.Is(err, idforge.ErrInvalidArgument) {
		t.Errorf("Keys with bad documents: %v; want ErrInvalidArgument", err)
	}
}

// TestStepChangedByHand: a step an operator changes in the document is
// used from the next claim on, although the store remembers steps.
func TestStepChangedByHand(t *testing.T) {
	ctx := context.Background()
	st, u := fresh(t)
	if err := st.CreateKey(ctx, idforge.Key{Name: "k", Strategy: idforge.StrategySegment, MaxID: 1, Step: 10}); err != nil {
		t.Fatal(err)
	}
	if seg, err := st.ClaimSegment(ctx, "k", 0); err != nil || seg.End != 11 {
		t.Fatalf("claim = %+v, %v", seg, err)
	}
	keys := testsvc.MongoDB(t, u).Collection(mongo.KeysCollection)
	if _, err := keys.UpdateOne(ctx, bson.D{{Key: "_id", Value: "k"}}, bson.D{{Key: "$set", Value: bson.D{{Key: "step", Value: int64(100)}}}}); err != nil {
		t.Fatal(err)
	}
	if seg, err := st.ClaimSegment(ctx, "k", 0); err != nil || seg != (idforge.Segment{Start: 11, End: 111, Step: 100}) {
		t.Fatalf("claim after the step changed = %+v, %v", seg, err)
	}
}

// TestMaxIDLowered: a max_id lowered by hand (or by a restore, or a
// fail-over that lost majority-unacknowledged writes) makes the store
// hand out a range again. The segment allocator, which remembers what it
// claimed, refuses that range with store_failed_over and never issues a
// value twice: it serves what it still holds, then keeps refusing until
// the operator repairs the key and restarts the node.
func TestMaxIDLowered(t *testing.T) {
	ctx := context.Background()
	st, u := fresh(t)
	if err := st.CreateKey(ctx, idforge.Key{Name: "k", Strategy: idforge.StrategySegment, MaxID: 1, Step: 100}); err != nil {
		t.Fatal(err)
	}
	a := segment.New(st, "k", segment.Settings{Logger: quiet, MaxStep: 100, RetryMin: time.Millisecond})
	defer a.Close()
	seen := map[int64]bool{}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for range 150 {
		id, err := a.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		seen[id] = true
	}
	keys := testsvc.MongoDB(t, u).Collection(mongo.KeysCollection)
	if _, err := keys.UpdateOne(ctx, bson.D{{Key: "_id", Value: "k"}}, bson.D{{Key: "$set", Value: bson.D{{Key: "max_id", Value: int64(1)}}}}); err != nil {
		t.Fatal(err)
	}
	var lastErr error
	for range 1000 {
		id, err := a.Next(ctx)
		if err != nil {
			lastErr = err
			continue
		}
		if seen[id] {
			t.Fatalf("ID %d issued twice after max_id was lowered", id)
		}
		seen[id] = true
	}
	if !errors.Is(lastErr, idforge.ErrStoreFailedOver) {
		t.Fatalf("after max_id was lowered: %v, want store_failed_over", lastErr)
	}
}

// TestOptionsReachDriver: the failover-safety defaults are in the client
// options Open connects with, a URL that weakens them is refused unless
// it says so, and what it says reaches the driver.
func TestOptionsReachDriver(t *testing.T) {
	const base = "mongodb://h1:27017,h2:27017/app?replicaSet=rs0"
	cfg, err := mongo.ParseURL(base)
	if err != nil {
		t.Fatal(err)
	}
	if wc := cfg.Client.WriteConcern; wc == nil || wc.W != "majority" {
		t.Errorf("default write concern = %+v, want w=majority", wc)
	}
	if rc := cfg.Client.ReadConcern; rc == nil || rc.Level != "majority" {
		t.Errorf("default read concern = %+v, want majority", rc)
	}
	if cfg.Database != "app" || len(cfg.Client.Hosts) != 2 || cfg.Client.ReplicaSet == nil || *cfg.Client.ReplicaSet != "rs0" {
		t.Errorf("config = %+v, client %+v", cfg, cfg.Client)
	}
	if cfg.Client.ServerSelectionTimeout == nil || *cfg.Client.ServerSelectionTimeout != mongo.DefaultTimeout {
		t.Errorf("server selection timeout = %v, want the store's timeout", cfg.Client.ServerSelectionTimeout)
	}

	cfg, err = mongo.ParseURL(base + "&journal=true&wTimeoutMS=2000&timeout=5s&retries=0")
	if err != nil {
		t.Fatal(err)
	}
	if wc := cfg.Client.WriteConcern; wc.W != "majority" || wc.Journal == nil || !*wc.Journal {
		t.Errorf("journal=true: write concern = %+v, want w=majority, j=true", wc)
	}
	if cfg.Timeout != 5*time.Second || cfg.Retries != -1 {
		t.Errorf("timeout, retries = %v, %d; want 5s, -1 (none)", cfg.Timeout, cfg.Retries)
	}

	for _, weak := range []string{"w=1", "w=0", "w=2", "journal=false", "w=majority&journal=false"} {
		_, err := mongo.ParseURL(base + "&" + weak)
		if !errors.Is(err, idforge.ErrInvalidArgument) || !strings.Contains(err.Error(), "allow_weak_writes=true") {
			t.Errorf("%s: %v; want ErrInvalidArgument naming allow_weak_writes", weak, err)
		}
		cfg, err := mongo.ParseURL(base + "&" + weak + "&allow_weak_writes=true")
		if err != nil {
			t.Errorf("%s with allow_weak_writes: %v", weak, err)
			continue
		}
		if wc := cfg.Client.WriteConcern; wc == nil || wc.W == "majority" && !strings.Contains(weak, "journal") {
			t.Errorf("%s with allow_weak_writes: write concern = %+v, not what the URL says", weak, wc)
		}
	}
	for _, level := range []string{"local", "available"} {
		_, err := mongo.ParseURL(base + "&readConcernLevel=" + level)
		if !errors.Is(err, idforge.ErrInvalidArgument) || !strings.Contains(err.Error(), "allow_weak_reads=true") {
			t.Errorf("readConcernLevel=%s: %v; want ErrInvalidArgument naming allow_weak_reads", level, err)
		}
		cfg, err := mongo.ParseURL(base + "&readConcernLevel=" + level + "&allow_weak_reads=true")
		if err != nil || cfg.Client.ReadConcern.Level != level {
			t.Errorf("readConcernLevel=%s with allow_weak_reads: %+v, %v", level, cfg.Client.ReadConcern, err)
		}
	}
	cfg, err = mongo.ParseURL(base + "&readConcernLevel=linearizable")
	if err != nil || cfg.Client.ReadConcern.Level != "linearizable" {
		t.Errorf("readConcernLevel=linearizable: %v", err)
	}
}

// TestFerretDBRefused: without allow_ferretdb=true, Open refuses the test
// server, FerretDB, whose findAndModify is not atomic on its own.
func TestFerretDBRefused(t *testing.T) {
	u, err := url.Parse(testsvc.Mongo(t))
	if err != nil {
		t.Fatal(err)
	}
	u.RawQuery = ""
	st, err := store.Open(context.Background(), u.String(), store.Options{Logger: quiet, ForMigrate: true})
	if err == nil {
		st.Close()
		t.Skipf("the server at %s=%q is not FerretDB", testsvc.MongoEnv, os.Getenv(testsvc.MongoEnv))
	}
	if !errors.Is(err, idforge.ErrInvalidArgument) || !strings.Contains(err.Error(), "allow_ferretdb=true") {
		t.Fatalf("Open on FerretDB: %v, want ErrInvalidArgument naming allow_ferretdb", err)
	}
}

// TestBadURLs: malformed URLs get an error wrapping ErrInvalidArgument
// that never shows the password.
func TestBadURLs(t *testing.T) {
	for _, raw := range []string{
		"mongodb://u:s3cret-pw@h:27017/db#frag",
		"mongodb:opaque",
		"mongodb://u:s3cret-pw@/db",
		"mongodb://u:s3cret-pw@h/a.b",
		"mongodb://u:s3cret-pw@h/db?timeout=soon",
		"mongodb://u:s3cret-pw@h/db?retries=-1",
		"mongodb://u:s3cret-pw@h/db?allow_weak_writes=perhaps",
		"mongodb://u:s3cret-pw@h/db?w=1",
		"mongodb://u:s3cret-pw@h/db?connectTimeoutMS=never",
		"mongodb://u:s3cret-pw@h:notaport/db",
		"mongodb://u:s3cret-pw@h/db?authMechanism=NOPE",
		"mongo://u:s3cret-pw@h/db",
		"mongodb+srv://u:s3cret-pw@h1,h2/db",
		"%zz",
	} {
		_, err := mongo.ParseURL(raw)
		if !errors.Is(err, idforge.ErrInvalidArgument) {
			t.Errorf("ParseURL(%s): %v, want ErrInvalidArgument", raw, err)
			continue
		}
		if strings.Contains(err.Error(), "s3cret-pw") {
			t.Errorf("ParseURL(%s) leaks the password: %v", raw, err)
		}
	}
}

// TestUnreachable: a server nobody answers at fails Open within the
// timeout, with an error that names no password; a store whose server
// goes away fails its calls rather than hang, and recovers.
func TestUnreachable(t *testing.T) {
	ctx := context.Background()
	_, err := store.Open(ctx, "mongodb://u:s3cret-pw@127.0.0.1:1/db?timeout=500ms", store.Options{Logger: quiet})
	if err == nil || strings.Contains(err.Error(), "s3cret-pw") {
		t.Fatalf("Open on an unreachable server: %v", err)
	}

	_, u := fresh(t)
	st := open(t, u, false)
	if err := st.CreateKey(ctx, idforge.Key{Name: "k", Strategy: idforge.StrategySegment, MaxID: 1, Step: 10}); err != nil {
		t.Fatal(err)
	}
	proxied, p := viaProxy(t, u, "retries=5&timeout=10s")
	pst := open(t, proxied, false)
	if seg, err := pst.ClaimSegment(ctx, "k", 0); err != nil || seg.Start != 1 {
		t.Fatalf("claim through the proxy = %+v, %v", seg, err)
	}
	p.Cut()
	time.AfterFunc(300*time.Millisecond, p.Restore)
	if seg, err := pst.ClaimSegment(ctx, "k", 0); err != nil || seg.Start != 11 {
		t.Fatalf("claim during a short outage = %+v, %v; want [11, 21) after retries", seg, err)
	}

	proxied, p = viaProxy(t, u, "retries=0&timeout=1s")
	pst = open(t, proxied, false)
	p.Cut()
	if _, err := pst.ClaimSegment(ctx, "k", 0); err == nil || errors.Is(err, idforge.ErrUnknownKey) || !strings.Contains(err.Error(), `"k"`) {
		t.Fatalf("claim during an outage without retries: %v", err)
	}
	p.Restore()
	if seg, err := pst.ClaimSegment(ctx, "k", 0); err != nil || seg.Start < 21 {
		t.Fatalf("claim after the outage = %+v, %v; want one after every earlier claim", seg, err)
	}
}

// viaProxy returns rawURL pointed at a proxy in front of its server, with
// query as its parameters.
func viaProxy(t *testing.T, rawURL, query string) (string, *e2e.Proxy) {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	p := e2e.StartProxy(t, u.Host)
	u.Host = p.Addr()
	u.RawQuery = query + "&" + testsvc.MongoTestParams
	return u.String(), p
}

// TestStoresClaimConcurrently runs several Stores on one database, as
// several nodes would: their claims never overlap and leave no gap.
func TestStoresClaimConcurrently(t *testing.T) {
	ctx := context.Background()
	_, u := fresh(t)
	const stores, perStore, claims, step = 3, 4, 25, 7
	sts := make([]*mongo.Store, stores)
	for i := range sts {
		sts[i] = open(t, u, false)
	}
	if err := sts[0].CreateKey(ctx, idforge.Key{Name: "k", Strategy: idforge.StrategySegment, MaxID: 1, Step: step}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var segs []idforge.Segment
	var wg sync.WaitGroup
	errs := make(chan error, stores*perStore)
	for _, st := range sts {
		for range perStore {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range claims {
					seg, err := st.ClaimSegment(ctx, "k", 0)
					if err != nil {
						errs <- err
						return
					}
					mu.Lock()
					segs = append(segs, seg)
					mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	covered := map[int64]bool{}
	for _, s := range segs {
		for v := s.Start; v < s.End; v++ {
			if covered[v] {
				t.Fatalf("value %d claimed twice", v)
			}
			covered[v] = true
		}
	}
	if want := stores * perStore * claims * step; len(covered) != want {
		t.Fatalf("%d values claimed, want %d without gaps", len(covered), want)
	}
}
