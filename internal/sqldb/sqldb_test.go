package sqldb_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"

	"github.com/idforge/idforge/internal/sqldb"
	"github.com/idforge/idforge/internal/sqldb/mysql"
	"github.com/idforge/idforge/internal/sqldb/postgres"
	"github.com/idforge/idforge/internal/sqldb/sqlite"
)

func TestRebind(t *testing.T) {
	for in, want := range map[string]string{
		"SELECT 1":                            "SELECT 1",
		"UPDATE t SET a = ? WHERE b = ?":      "UPDATE t SET a = $1 WHERE b = $2",
		"INSERT INTO t VALUES (?, 'é', ?, ?)": "INSERT INTO t VALUES ($1, 'é', $2, $3)",
	} {
		if got := postgres.Dialect.Rebind(in); got != want {
			t.Errorf("Rebind(%q) = %q, want %q", in, got, want)
		}
		if got := mysql.Dialect.Rebind(in); got != in {
			t.Errorf("MySQL's Rebind(%q) = %q, want it unchanged", in, got)
		}
	}
}

func TestUpserts(t *testing.T) {
	const ins = "INSERT INTO t (k, v) VALUES (?, ?)"
	for _, tt := range []struct{ got, want string }{
		{mysql.Dialect.InsertIgnore(ins, "k"), ins + " ON DUPLICATE KEY UPDATE k = k"},
		{sqlite.Dialect.InsertIgnore(ins, "k"), ins + " ON CONFLICT (k) DO NOTHING"},
		{mysql.Dialect.Upsert(ins, "k", "v"), ins + " ON DUPLICATE KEY UPDATE v = VALUES(v)"},
		{postgres.Dialect.Upsert(ins, "k", "v"), ins + " ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v"},
	} {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}

// Errors every driver meets: the connection failed at the network level
// (transient), or the caller gave up (never).
func TestKindOfCommon(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want sqldb.Kind
	}{
		{driver.ErrBadConn, sqldb.Transient},
		{io.ErrUnexpectedEOF, sqldb.Transient},
		{&net.OpError{Op: "dial", Net: "tcp", Err: &net.AddrError{Err: "refused"}}, sqldb.Transient},
		{fmt.Errorf("dial: %w", syscall.ECONNREFUSED), sqldb.Transient},
		{syscall.ECONNRESET, sqldb.Transient},
		{nil, sqldb.Other},
		{context.Canceled, sqldb.Other},
		{context.DeadlineExceeded, sqldb.Other}, // a net.Error, but the caller's
		{fmt.Errorf("x: %w", context.DeadlineExceeded), sqldb.Other},
		{sql.ErrNoRows, sqldb.Other},
		{errors.New("sql: database is closed"), sqldb.Other},
	} {
		if got := sqldb.KindOf(tt.err); got != tt.want {
			t.Errorf("KindOf(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}

func TestSettingsDefaults(t *testing.T) {
	set, err := sqldb.Settings{}.WithDefaults("x")
	if err != nil || set.MaxOpenConns != sqldb.DefaultMaxOpenConns || set.Timeout != sqldb.DefaultTimeout || set.Logger == nil {
		t.Errorf("WithDefaults() = %+v, %v", set, err)
	}
	if _, err := (sqldb.Settings{Timeout: -1}).WithDefaults("x"); err == nil {
		t.Error("a negative Timeout was accepted")
	}
}
