package testsvc_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	"github.com/idforge/idforge/internal/testsvc"
)

// TestFreshDatabases checks that each call yields a new database that
// exists during the test and is gone after it.
func TestFreshDatabases(t *testing.T) {
	tests := []struct {
		name    string
		fresh   func(testing.TB) string
		open    func(testing.TB, string) *sql.DB
		scheme  string
		adminDB string // a database that always exists
		current string
		exists  string
	}{
		{"mysql", testsvc.MySQL, testsvc.MySQLDB, "mysql://", "", "SELECT DATABASE()",
			"SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name = ?"},
		{"postgres", testsvc.Postgres, testsvc.PostgresDB, "postgres://", "postgres", "SELECT current_database()",
			"SELECT COUNT(*) FROM pg_database WHERE datname = $1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var url, name string
			t.Run("inner", func(t *testing.T) {
				url = tt.fresh(t)
				if other := tt.fresh(t); other == url {
					t.Fatalf("two calls returned the same URL %s", url)
				}
				if !strings.HasPrefix(url, tt.scheme) || !strings.Contains(url, "/idforge_t_") {
					t.Fatalf("URL %s", url)
				}
				db := tt.open(t, url)
				if err := db.QueryRowContext(context.Background(), tt.current).Scan(&name); err != nil {
					t.Fatal(err)
				}
				if !strings.HasPrefix(name, "idforge_t_") {
					t.Fatalf("connected to database %q", name)
				}
			})
			if name == "" {
				t.Skip("inner test skipped: service unavailable")
			}
			// The inner test's cleanup has dropped the database.
			admin := tt.open(t, strings.Replace(url, "/"+name, "/"+tt.adminDB, 1))
			var n int
			if err := admin.QueryRowContext(context.Background(), tt.exists, name).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n != 0 {
				t.Errorf("database %s still exists after its test ended", name)
			}
		})
	}
}
