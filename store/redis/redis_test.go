package redis_test

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/testsvc"
	"github.com/idforge/idforge/store"
	"github.com/idforge/idforge/store/memstore"
	_ "github.com/idforge/idforge/store/mysql"
	_ "github.com/idforge/idforge/store/postgres"
	"github.com/idforge/idforge/store/redis"
	_ "github.com/idforge/idforge/store/sqlite"
	"github.com/idforge/idforge/store/storetest"
)

var quiet = slog.New(slog.DiscardHandler)

// storeURL returns a redisseg URL for the shared test Redis, under a
// prefix of tb's own (testsvc.Redis deletes its keys when tb ends), in
// front of the durable store dbURL.
func storeURL(tb testing.TB, dbURL string, params ...string) string {
	tb.Helper()
	r, err := url.Parse(testsvc.Redis(tb))
	if err != nil {
		tb.Fatal(err)
	}
	q := url.Values{}
	q.Set("store", dbURL)
	q.Set("prefix", r.Query().Get("prefix")+":")
	for i := 0; i+1 < len(params); i += 2 {
		q.Set(params[i], params[i+1])
	}
	u := url.URL{Scheme: redis.Scheme, User: r.User, Host: r.Host, Path: r.Path, RawQuery: q.Encode()}
	return u.String()
}

// sqliteURL returns the URL of a fresh SQLite file.
func sqliteURL(tb testing.TB) string {
	return "sqlite://" + filepath.ToSlash(filepath.Join(tb.TempDir(), "idforge.db"))
}

// openURL opens a store with store.Open, migrated, closed when tb ends.
func openURL(tb testing.TB, rawURL string) idforge.Store {
	tb.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, rawURL, store.Options{Logger: quiet, ForMigrate: true})
	if err != nil {
		tb.Fatalf("store.Open: %v", err)
	}
	tb.Cleanup(func() { st.Close() })
	if m, ok := st.(idforge.Migrator); ok {
		if err := m.Migrate(ctx); err != nil {
			tb.Fatalf("Migrate: %v", err)
		}
	}
	return st
}

func TestConformanceSQLite(t *testing.T) {
	storetest.RunWith(t, func(t *testing.T) idforge.Store { return openURL(t, storeURL(t, sqliteURL(t))) }, gappy)
}

func TestConformanceMySQL(t *testing.T) {
	storetest.RunWith(t, func(t *testing.T) idforge.Store { return openURL(t, storeURL(t, testsvc.MySQL(t))) }, gappy)
}

func TestConformancePostgres(t *testing.T) {
	storetest.RunWith(t, func(t *testing.T) idforge.Store { return openURL(t, storeURL(t, testsvc.Postgres(t))) }, gappy)
}

// TestConformanceSentinel runs the suite through Redis Sentinel (a
// primary, one replica, three sentinels started by the test).
func TestConformanceSentinel(t *testing.T) {
	testsvc.Slow(t)
	ss, _ := testsvc.StartRedisSentinelSet(t, 1)
	storetest.RunWith(t, func(t *testing.T) idforge.Store {
		q := url.Values{"store": {sqliteURL(t)}, "prefix": {t.Name() + ":"}}
		return openURL(t, ss.URL("redisseg+sentinel", q.Encode()))
	}, gappy)
}

// gappy relaxes the suite's contiguity check: racing claims install
// blocks over each other and abandon room, leaving gaps (doc.go), never
// overlaps, which the suite still refuses.
var gappy = storetest.Options{MayLeaveGaps: true}

// TestConformanceTinyReserve runs the suite with reservations as short as
// the claims (factor 1): every other claim adds room, through the
// refill lock, the install script and the background refill.
func TestConformanceTinyReserve(t *testing.T) {
	storetest.RunWith(t, func(t *testing.T) idforge.Store { return openURL(t, storeURL(t, sqliteURL(t), "factor", "1")) }, gappy)
}

// BenchmarkStore compares claims through Redis with claims from the
// database alone, for SQLite and MariaDB/MySQL (storetest's key has step
// 1000, so with the default factor a reservation is made every 10
// claims):
//
//	go test -run '^$' -bench . -benchtime 2s ./store/redis/
func BenchmarkStore(b *testing.B) {
	b.Run("redis+sqlite", func(b *testing.B) {
		storetest.Bench(b, func(b *testing.B) idforge.Store { return openURL(b, storeURL(b, sqliteURL(b))) })
	})
	// Reservations so long that none is made while the benchmark runs:
	// the cost of the claim script alone.
	b.Run("redis-only", func(b *testing.B) {
		storetest.Bench(b, func(b *testing.B) idforge.Store {
			return openURL(b, storeURL(b, sqliteURL(b), "reserve", "1000000000000"))
		})
	})
	b.Run("sqlite", func(b *testing.B) {
		storetest.Bench(b, func(b *testing.B) idforge.Store { return openURL(b, sqliteURL(b)) })
	})
	b.Run("redis+mysql", func(b *testing.B) {
		storetest.Bench(b, func(b *testing.B) idforge.Store { return openURL(b, storeURL(b, testsvc.MySQL(b))) })
	})
	b.Run("mysql", func(b *testing.B) {
		storetest.Bench(b, func(b *testing.B) idforge.Store { return openURL(b, testsvc.MySQL(b)) })
	})
}

// TestRegistered checks that store.Open knows the scheme and that a bad
// URL fails before anything is opened.
func TestRegistered(t *testing.T) {
	ctx := context.Background()
	_, err := store.Open(ctx, "redisseg://127.0.0.1:6379/0", store.Options{Logger: quiet})
	if !errors.Is(err, idforge.ErrInvalidArgument) || !strings.Contains(err.Error(), "store parameter") {
		t.Fatalf("URL without store: %v, want ErrInvalidArgument about the store parameter", err)
	}
	_, err = store.Open(ctx, "redisseg://:pw-outer@127.0.0.1:6379/0?factor=0&store="+
		url.QueryEscape("mysql://u:pw-inner@127.0.0.1:1/db"), store.Options{Logger: quiet})
	if !errors.Is(err, idforge.ErrInvalidArgument) {
		t.Fatalf("factor=0: %v, want ErrInvalidArgument", err)
	}
	if msg := err.Error(); strings.Contains(msg, "pw-outer") || strings.Contains(msg, "pw-inner") {
		t.Fatalf("error shows a password: %s", msg)
	}
}

// TestOpenWithRedisDown opens a store whose Redis does not answer: it
// opens, claims go to the database, and Ping is fine.
func TestOpenWithRedisDown(t *testing.T) {
	ctx := context.Background()
	q := url.Values{"store": {sqliteURL(t)}, "dial_timeout": {"200ms"}}
	st := openURL(t, "redisseg://127.0.0.1:1/0?"+q.Encode())
	if err := st.CreateKey(ctx, idforge.Key{Name: "k", Strategy: idforge.StrategySegment, Step: 10, MaxID: 1}); err != nil {
		t.Fatal(err)
	}
	seg, err := st.ClaimSegment(ctx, "k", 0)
	if err != nil || seg != (idforge.Segment{Start: 1, End: 11, Step: 10}) {
		t.Fatalf("ClaimSegment = %+v, %v; want [1, 11) from the database", seg, err)
	}
	if err := st.Ping(ctx); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	stats := st.(*redis.Store).Stats()
	if stats.RedisUp || stats.DirectClaims != 1 || stats.RedisClaims != 0 {
		t.Fatalf("Stats = %+v, want Redis down and one direct claim", stats)
	}
}

// TestNew checks New's argument errors.
func TestNew(t *testing.T) {
	rdb := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:1"})
	defer rdb.Close()
	db := openURL(t, sqliteURL(t))
	tests := []struct {
		name string
		cfg  redis.Config
	}{
		{"no Redis", redis.Config{DB: db}},
		{"no DB", redis.Config{Redis: rdb}},
		{"negative factor", redis.Config{Redis: rdb, DB: db, Factor: -1}},
		{"negative reserve", redis.Config{Redis: rdb, DB: db, Reserve: -1}},
		{"negative retry", redis.Config{Redis: rdb, DB: db, RetryAfter: -time.Second}},
	}
	for _, tt := range tests {
		if _, err := redis.New(tt.cfg); !errors.Is(err, idforge.ErrInvalidArgument) {
			t.Errorf("%s: New error %v, want ErrInvalidArgument", tt.name, err)
		}
	}
}

// TestSerialsKeptInDatabase: serial definitions go to the database, where
// they outlive the Store, and Redis holds none of them.
func TestSerialsKeptInDatabase(t *testing.T) {
	ctx := context.Background()
	dbURL := sqliteURL(t)
	u := storeURL(t, dbURL)
	st := openURL(t, u)
	def := idforge.Serial{Name: "orders", Template: "ORD{seq}", TimeZone: "Asia/Shanghai", Description: "kept"}
	if err := st.(idforge.SerialStore).CreateSerial(ctx, def); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	for _, rawURL := range []string{dbURL, u} {
		ss := openURL(t, rawURL).(idforge.SerialStore)
		got, err := ss.Serial(ctx, "orders")
		if err != nil {
			t.Fatalf("Serial through %s: %v", rawURL, err)
		}
		got.Updated = time.Time{}
		if got != def {
			t.Fatalf("Serial through %s = %+v, want %+v", rawURL, got, def)
		}
		err = ss.CreateSerial(ctx, def)
		if !errors.Is(err, idforge.ErrKeyExists) {
			t.Fatalf("CreateSerial of a taken name through %s: %v, want ErrKeyExists", rawURL, err)
		}
	}
}

// TestSerialsWithoutSerialStore: over a database that keeps no serials,
// every serial call fails with ErrInvalidArgument saying so.
func TestSerialsWithoutSerialStore(t *testing.T) {
	ctx := context.Background()
	db := struct{ idforge.Store }{memstore.New()} // hides memstore's SerialStore
	st, err := redis.New(redis.Config{Redis: goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:1"}), DB: db, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	errs := map[string]error{"CreateSerial": st.CreateSerial(ctx, idforge.Serial{Name: "sn", Template: "SN{seq}"})}
	_, errs["Serial"] = st.Serial(ctx, "sn")
	_, errs["Serials"] = st.Serials(ctx)
	for name, err := range errs {
		if !errors.Is(err, idforge.ErrInvalidArgument) || !strings.Contains(err.Error(), "keeps no serial") {
			t.Errorf("%s: %v, want ErrInvalidArgument saying the store keeps no serials", name, err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Serials(ctx); !errors.Is(err, idforge.ErrClosed) {
		t.Errorf("Serials after Close: %v, want ErrClosed", err)
	}
}

// steplessDB is a database whose claims of a given size report no stored
// step, as MySQL's do when the read after the claim fails.
type steplessDB struct{ idforge.Store }

func (d steplessDB) ClaimSegment(ctx context.Context, key string, step int64) (idforge.Segment, error) {
	seg, err := d.Store.ClaimSegment(ctx, key, step)
	if step > 0 {
		seg.Step = 0
	}
	return seg, err
}

// A block reserved without its step never teaches Redis a step of 0,
// which made every claim of the key's step an empty segment.
func TestReservationWithoutStep(t *testing.T) {
	ctx := context.Background()
	db := openURL(t, sqliteURL(t))
	if err := db.CreateKey(ctx, idforge.Key{Name: "k", Strategy: idforge.StrategySegment, Step: 10, MaxID: 1}); err != nil {
		t.Fatal(err)
	}
	r, err := url.Parse(testsvc.Redis(t))
	if err != nil {
		t.Fatal(err)
	}
	rdb := goredis.NewClient(&goredis.Options{Addr: r.Host})
	defer rdb.Close()
	st, err := redis.New(redis.Config{Redis: rdb, DB: steplessDB{db}, Prefix: r.Query().Get("prefix") + ":", Factor: 2, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	last := int64(0)
	for i := range 50 {
		seg, err := st.ClaimSegment(ctx, "k", 0)
		if err != nil {
			t.Fatal(err)
		}
		if seg.Len() != 10 || seg.Start < last {
			t.Fatalf("claim %d: [%d, %d), want 10 IDs from %d on", i, seg.Start, seg.End, last)
		}
		last = seg.End
	}
}
