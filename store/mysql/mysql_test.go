package mysql_test

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/testsvc"
	"github.com/idforge/idforge/store"
	"github.com/idforge/idforge/store/internal/sqltest"
	"github.com/idforge/idforge/store/mysql"
	"github.com/idforge/idforge/store/storetest"
)

var backend = sqltest.Backend{
	NewDatabase:         testsvc.MySQL,
	RawDB:               testsvc.MySQLDB,
	Open:                open,
	UnreachableURL:      "mysql://u:s3cret-pw@127.0.0.1:1/db?timeout=1s",
	DescribeTable:       showCreateTable,
	CheckMigratedSchema: checkMigratedSchema,
	LeafDDL:             leafDDL,
	LeafRow:             leafRow,
	LeafIgnoresCase:     true,
}

// open is sqltest.Backend.Open.
func open(ctx context.Context, rawURL string, forMigrate bool) (sqltest.Store, error) {
	cfg, err := mysql.ParseURL(rawURL)
	if err != nil {
		return nil, err
	}
	cfg.Logger = sqltest.Quiet
	cfg.ForMigrate = forMigrate
	st, err := mysql.Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return st, nil
}

func showCreateTable(tb testing.TB, db *sql.DB, table string) string {
	tb.Helper()
	var ddl string
	if err := db.QueryRow("SHOW CREATE TABLE "+table).Scan(new(string), &ddl); err != nil {
		tb.Fatal(err)
	}
	return ddl
}

func checkMigratedSchema(t *testing.T, schema string) {
	// What MariaDB and MySQL 8 both print.
	for _, want := range []string{"utf8mb4_bin", "on update current_timestamp", "engine=innodb", "`max_id` bigint", "`step` int",
		"`name` varchar(128) character set utf8mb4 collate utf8mb4_bin not null", "`template` varchar(1024) not null",
		"`time_zone` varchar(64) default null"} {
		if !strings.Contains(strings.ToLower(schema), strings.ToLower(want)) {
			t.Errorf("schema lacks %q:\n%s", want, schema)
		}
	}
}

// leafDDL is Leaf's own table, exactly as its scripts/leaf_alloc.sql
// creates it; %s is the description column's name.
const leafDDL = "CREATE TABLE `leaf_alloc` (\n" +
	"  `biz_tag` varchar(128) NOT NULL DEFAULT '',\n" +
	"  `max_id` bigint(20) NOT NULL DEFAULT '1',\n" +
	"  `step` int(11) NOT NULL,\n" +
	"  `%s` varchar(256) DEFAULT NULL,\n" +
	"  `update_time` timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,\n" +
	"  PRIMARY KEY (`biz_tag`)\n" +
	") ENGINE=InnoDB"

const leafRow = "INSERT INTO leaf_alloc(biz_tag, max_id, step, `%s`) VALUES('leaf-segment-test', 1, 2000, 'Test leaf Segment Mode Get Id')"

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) idforge.Store { return backend.Fresh(t) })
}

func BenchmarkStore(b *testing.B) {
	storetest.Bench(b, func(b *testing.B) idforge.Store { return backend.Fresh(b) })
}

func TestSQLStore(t *testing.T) { sqltest.Run(t, backend) }

func BenchmarkGapless(b *testing.B) { sqltest.BenchGapless(b, backend) }

func TestParseURL(t *testing.T) {
	tests := []struct {
		url  string
		want func(c mysql.Config) bool
	}{
		{"mysql://root@127.0.0.1:3306/db", func(c mysql.Config) bool {
			return c.Driver.User == "root" && c.Driver.Passwd == "" && c.Driver.Addr == "127.0.0.1:3306" && c.Driver.DBName == "db" &&
				c.MaxOpenConns == 0 && c.Timeout == 0 && c.Retries == 0
		}},
		{"mysql://u:p%40ss@db.example:3307/idforge", func(c mysql.Config) bool {
			return c.Driver.User == "u" && c.Driver.Passwd == "p@ss" && c.Driver.Addr == "db.example:3307" && c.Driver.Net == "tcp"
		}},
		{"mysql:///db", func(c mysql.Config) bool { return c.Driver.Addr == "127.0.0.1:3306" }},
		{"mysql://[::1]/db", func(c mysql.Config) bool { return c.Driver.Addr == "[::1]:3306" }},
		{"MYSQL://h/db", func(c mysql.Config) bool { return c.Driver.Addr == "h:3306" }},
		{"mysql://h/db?max_open_conns=20&max_idle_conns=3&conn_max_lifetime=1h&timeout=500ms&retries=4", func(c mysql.Config) bool {
			return c.MaxOpenConns == 20 && c.MaxIdleConns == 3 && c.ConnMaxLifetime == time.Hour && c.Timeout == 500*time.Millisecond && c.Retries == 4
		}},
		// An explicit 0 means none, not the default.
		{"mysql://h/db?max_idle_conns=0&conn_max_lifetime=0&retries=0", func(c mysql.Config) bool {
			return c.MaxIdleConns < 0 && c.ConnMaxLifetime < 0 && c.Retries < 0
		}},
		// The last of repeated values counts.
		{"mysql://h/db?retries=1&retries=3", func(c mysql.Config) bool { return c.Retries == 3 }},
		// Driver parameters pass through; idforge's do not.
		{"mysql://h/db?readTimeout=2s&tls=skip-verify&innodb_lock_wait_timeout=5&timeout=1s", func(c mysql.Config) bool {
			return c.Driver.ReadTimeout == 2*time.Second && c.Driver.TLS != nil && c.Driver.Params["innodb_lock_wait_timeout"] == "5" &&
				c.Driver.Timeout == 0 && c.Timeout == time.Second && c.Driver.Params["timeout"] == ""
		}},
	}
	for _, tt := range tests {
		c, err := mysql.ParseURL(tt.url)
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
		{"mysql://u:secret@h:3306", "no database"},
		{"mysql://u:secret@h:3306/", "no database"},
		{"mysql://u:secret@h/a/b", "contains '/'"},
		{"mysql:db", "write mysql://"},
		{"postgres://u:secret@h/db", "scheme"},
		{"mysql://u:secret@h/db#frag", "fragment"},
		{"mysql://u:secret@h/db?max_open_conns=abc", "max_open_conns"},
		{"mysql://u:secret@h/db?max_open_conns=0", "max_open_conns"},
		{"mysql://u:secret@h/db?max_idle_conns=-1", "max_idle_conns"},
		{"mysql://u:secret@h/db?conn_max_lifetime=soon", "conn_max_lifetime"},
		{"mysql://u:secret@h/db?timeout=0s", "timeout"},
		{"mysql://u:secret@h/db?timeout=-1s", "timeout"},
		{"mysql://u:secret@h/db?retries=-1", "retries"},
		{"mysql://u:secret@h/db?retries=2.5", "retries"},
		{"mysql://u:secret@h/db?parseTime=maybe", "driver parameters"},
		{"mysql://u:secret@h:port/db", "invalid port"},
		{"mysql://u:secret@h/db%zz", "invalid URL escape"},
	}
	for _, tt := range tests {
		_, err := mysql.ParseURL(tt.url)
		if !errors.Is(err, idforge.ErrInvalidArgument) || !strings.Contains(err.Error(), tt.mention) {
			t.Errorf("ParseURL(%q): %v; want ErrInvalidArgument mentioning %q", tt.url, err, tt.mention)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("ParseURL(%q) leaks the password: %v", tt.url, err)
		}
	}
}

func TestRegistered(t *testing.T) {
	if !slices.Contains(store.Names(), "mysql") {
		t.Fatalf("store.Names() = %q, want mysql registered", store.Names())
	}
}

// A store on a URL listing a MariaDB primary and its replica follows the
// replica once it is promoted, without being reopened, and refuses to
// claim there until repaired.
func TestFollowsPromotedReplica(t *testing.T) {
	testsvc.Slow(t)
	primary := testsvc.StartMariaDB(t, 1)
	replica := testsvc.StartMariaDB(t, 2)
	replica.ReplicateFrom(primary.Addr())
	primary.Exec("CREATE DATABASE idf")
	sqltest.FollowsPromotedReplica(t, backend, sqltest.Replicated{
		URL:         "mysql://root@" + primary.Addr() + "," + replica.Addr() + "/idf?timeout=2s",
		CatchUp:     func() { replica.CatchUp(primary) },
		KillPrimary: primary.Kill, Promote: replica.Promote,
	})
}
