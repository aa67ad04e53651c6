package postgres_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/testsvc"
	"github.com/idforge/idforge/store"
	"github.com/idforge/idforge/store/internal/sqltest"
	"github.com/idforge/idforge/store/postgres"
	"github.com/idforge/idforge/store/storetest"
)

var backend = sqltest.Backend{
	NewDatabase:         testsvc.Postgres,
	RawDB:               testsvc.PostgresDB,
	Open:                open,
	UnreachableURL:      "postgres://u:s3cret-pw@127.0.0.1:1/db?timeout=1s&sslmode=disable",
	DescribeTable:       describeTable,
	CheckMigratedSchema: checkMigratedSchema,
	LeafDDL:             leafDDL,
	LeafRow:             leafRow,
	LeafIgnoresCase:     false,
	BeforeLeafTable:     farFromUTC,
}

// open is sqltest.Backend.Open.
func open(ctx context.Context, rawURL string, forMigrate bool) (sqltest.Store, error) {
	cfg, err := postgres.ParseURL(rawURL)
	if err != nil {
		return nil, err
	}
	cfg.Logger = sqltest.Quiet
	cfg.ForMigrate = forMigrate
	st, err := postgres.Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return st, nil
}

// describeSQL describes a table: each column with its type, collation,
// nullability and default.
const describeSQL = `
SELECT string_agg(concat_ws(' ', column_name, data_type, collation_name, is_nullable, column_default), E'\n' ORDER BY ordinal_position)
  FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1`

func describeTable(tb testing.TB, db *sql.DB, table string) string {
	tb.Helper()
	var columns string
	if err := db.QueryRow(describeSQL, table).Scan(&columns); err != nil {
		tb.Fatal(err)
	}
	return columns
}

func checkMigratedSchema(t *testing.T, schema string) {
	for _, want := range []string{"biz_tag character varying C NO ''", "max_id bigint NO 1", "step integer NO",
		"update_time timestamp with time zone NO CURRENT_TIMESTAMP", "strategy character varying NO",
		"name character varying C NO", "template character varying NO", "time_zone character varying YES"} {
		if !strings.Contains(schema, want) {
			t.Errorf("schema lacks %q:\n%s", want, schema)
		}
	}
}

// farFromUTC sets the database's time zone far from UTC, so that a plain
// timestamp read as UTC would be hours off.
func farFromUTC(t *testing.T, storeURL string) {
	admin := testsvc.PostgresDB(t, storeURL)
	sqltest.MustExec(t, admin, "DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET timezone = %L', current_database(), 'Asia/Kathmandu'); END $$")
	admin.Close()
}

// leafDDL is Leaf's table (scripts/leaf_alloc.sql) in PostgreSQL's words,
// as a port of Leaf to PostgreSQL creates it: the same columns, a plain
// timestamp, the database's default collation. %s is the description
// column's name.
const leafDDL = `CREATE TABLE leaf_alloc (
  biz_tag varchar(128) NOT NULL DEFAULT '',
  max_id bigint NOT NULL DEFAULT '1',
  step int NOT NULL,
  "%s" varchar(256) DEFAULT NULL,
  update_time timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP,
  PRIMARY KEY (biz_tag)
)`

const leafRow = `INSERT INTO leaf_alloc(biz_tag, max_id, step, "%s") VALUES('leaf-segment-test', 1, 2000, 'Test leaf Segment Mode Get Id')`

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) idforge.Store { return backend.Fresh(t) })
}

func BenchmarkStore(b *testing.B) {
	storetest.Bench(b, func(b *testing.B) idforge.Store { return backend.Fresh(b) })
}

func TestSQLStore(t *testing.T) { sqltest.Run(t, backend) }

func BenchmarkGapless(b *testing.B) { sqltest.BenchGapless(b, backend) }

// TestConcurrentMigrate runs Migrate from several stores at once on an
// empty database, as several `idforge migrate` runs would.
func TestConcurrentMigrate(t *testing.T) {
	u := testsvc.Postgres(t)
	errs := make(chan error, 4)
	for range 4 {
		st := backend.MustOpen(t, u, true)
		go func() { errs <- st.Migrate(context.Background()) }()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// TestMigrateKeepsLeafTableBehindUserSchema: with the default search path
// ("$user", public) and a schema named after the user, a Leaf table in
// public must not be shadowed by a new leaf_alloc in the user's schema.
func TestMigrateKeepsLeafTableBehindUserSchema(t *testing.T) {
	u := testsvc.Postgres(t)
	db := testsvc.PostgresDB(t, u)
	sqltest.MustExec(t, db, fmt.Sprintf(strings.Replace(leafDDL, "leaf_alloc", "public.leaf_alloc", 1), "description"))
	sqltest.MustExec(t, db, strings.Replace(fmt.Sprintf(leafRow, "description"), "leaf_alloc", "public.leaf_alloc", 1))
	sqltest.MustExec(t, db, "DO $$ BEGIN EXECUTE format('CREATE SCHEMA %I', current_user); END $$")

	st := backend.Migrated(t, u)
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM pg_class WHERE relname = 'leaf_alloc' AND relkind = 'r'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatalf("%d tables named leaf_alloc after Migrate, want Leaf's alone", n)
	}
	sqltest.WantSegment(t, sqltest.MustClaim(t, st, "leaf-segment-test", 0), idforge.Segment{Start: 1, End: 2001, Step: 2000})
	if err := st.CreateKey(context.Background(), idforge.Key{Name: "snow", Strategy: idforge.StrategySnowflake}); err != nil {
		t.Fatal(err)
	}
}

func TestParseURL(t *testing.T) {
	for _, env := range []string{"PGHOST", "PGPORT", "PGUSER", "PGPASSWORD", "PGDATABASE", "PGSSLMODE"} {
		t.Setenv(env, "")
	}
	tests := []struct {
		url  string
		want func(c postgres.Config) bool
	}{
		{"postgres://postgres@127.0.0.1:5432/db?sslmode=disable", func(c postgres.Config) bool {
			return c.Driver.User == "postgres" && c.Driver.Password == "" && c.Driver.Host == "127.0.0.1" && c.Driver.Port == 5432 &&
				c.Driver.Database == "db" && c.Driver.TLSConfig == nil && c.MaxOpenConns == 0 && c.Timeout == 0 && c.Retries == 0
		}},
		{"postgresql://u:p%40ss@db.example:5433/idforge?sslmode=disable", func(c postgres.Config) bool {
			return c.Driver.User == "u" && c.Driver.Password == "p@ss" && c.Driver.Host == "db.example" && c.Driver.Port == 5433
		}},
		{"POSTGRES://h/db?sslmode=disable", func(c postgres.Config) bool { return c.Driver.Host == "h" && c.Driver.Port == 5432 }},
		{"postgres://h/db?sslmode=disable&max_open_conns=20&max_idle_conns=3&conn_max_lifetime=1h&timeout=500ms&retries=4", func(c postgres.Config) bool {
			return c.MaxOpenConns == 20 && c.MaxIdleConns == 3 && c.ConnMaxLifetime == time.Hour && c.Timeout == 500*time.Millisecond && c.Retries == 4
		}},
		// An explicit 0 means none, not the default.
		{"postgres://h/db?max_idle_conns=0&conn_max_lifetime=0&retries=0", func(c postgres.Config) bool {
			return c.MaxIdleConns < 0 && c.ConnMaxLifetime < 0 && c.Retries < 0
		}},
		// The last of repeated values counts.
		{"postgres://h/db?retries=1&retries=3", func(c postgres.Config) bool { return c.Retries == 3 }},
		// Other parameters pass through to pgx; idforge's do not.
		{"postgres://h/db?sslmode=require&application_name=idf&search_path=ids&timeout=1s&connect_timeout=2", func(c postgres.Config) bool {
			return c.Driver.TLSConfig != nil && c.Driver.RuntimeParams["application_name"] == "idf" &&
				c.Driver.RuntimeParams["search_path"] == "ids" && c.Driver.RuntimeParams["timeout"] == "" &&
				c.Driver.ConnectTimeout == 2*time.Second && c.Timeout == time.Second
		}},
	}
	for _, tt := range tests {
		c, err := postgres.ParseURL(tt.url)
		if err != nil {
			t.Errorf("ParseURL(%q): %v", tt.url, err)
			continue
		}
		if !tt.want(c) {
			t.Errorf("ParseURL(%q) = %+v, driver %+v", tt.url, c, *c.Driver)
		}
	}
}

func TestParseURLErrors(t *testing.T) {
	tests := []struct{ url, mention string }{
		{"postgres:db", "write postgres://"},
		{"mysql://u:secret@h/db", "scheme"},
		{"postgres://u:secret@h/db#frag", "fragment"},
		{"postgres://u:secret@h/db?max_open_conns=abc", "max_open_conns"},
		{"postgres://u:secret@h/db?max_open_conns=0", "max_open_conns"},
		{"postgres://u:secret@h/db?max_idle_conns=-1", "max_idle_conns"},
		{"postgres://u:secret@h/db?conn_max_lifetime=soon", "conn_max_lifetime"},
		{"postgres://u:secret@h/db?timeout=0s", "timeout"},
		{"postgres://u:secret@h/db?timeout=-1s", "timeout"},
		{"postgres://u:secret@h/db?retries=-1", "retries"},
		{"postgres://u:secret@h/db?retries=2.5", "retries"},
		{"postgres://u:secret@h/db?sslmode=sometimes", "sslmode"},
		{"postgres://u@h/db?password=secret&sslmode=sometimes", "sslmode"},
		{"postgres://u@h/db?password=secret&max_open_conns=x", "max_open_conns"},
		{"postgres://u:secret@h/db?connect_timeout=soon", "connect_timeout"},
		{"postgres://u:secret@h:port/db", "invalid port"},
		{"postgres://u:secret@h/db%zz", "invalid URL escape"},
	}
	for _, tt := range tests {
		_, err := postgres.ParseURL(tt.url)
		if !errors.Is(err, idforge.ErrInvalidArgument) || !strings.Contains(err.Error(), tt.mention) {
			t.Errorf("ParseURL(%q): %v; want ErrInvalidArgument mentioning %q", tt.url, err, tt.mention)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("ParseURL(%q) leaks the password: %v", tt.url, err)
		}
	}
}

func TestRegistered(t *testing.T) {
	for _, scheme := range []string{"postgres", "postgresql"} {
		if !slices.Contains(store.Names(), scheme) {
			t.Errorf("store.Names() = %q, want %s registered", store.Names(), scheme)
		}
	}
}

// A store on a URL listing a PostgreSQL primary and its standby, with
// target_session_attrs=read-write, follows the standby once it is
// promoted, without being reopened, and refuses to claim there until
// repaired.
func TestFollowsPromotedReplica(t *testing.T) {
	testsvc.Slow(t)
	primary := testsvc.StartPostgres(t)
	primary.Exec("CREATE DATABASE idf")
	standby := testsvc.StartStandby(t, primary.Addr())
	sqltest.FollowsPromotedReplica(t, backend, sqltest.Replicated{
		URL: "postgres://postgres@" + primary.Addr() + "," + standby.Addr() +
			"/idf?sslmode=disable&target_session_attrs=read-write&timeout=2s&connect_timeout=2",
		CatchUp:     func() { standby.CatchUp(primary) },
		KillPrimary: primary.Kill, Promote: standby.Promote,
	})
}
