package postgres

import (
	"github.com/idforge/idforge/store/sqlpool"

	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/idforge/idforge/store/internal/sqltest"
)

func TestTransient(t *testing.T) {
	sqltest.CheckTransient(t, classifyError, []sqltest.TransientCase{
		{Err: &pgconn.PgError{Code: "40001"}, Want: true}, // serialization_failure
		{Err: fmt.Errorf("wrapped: %w", &pgconn.PgError{Code: "40P01"}), Want: true},
		{Err: &pgconn.PgError{Code: "08006"}, Want: true},  // connection_failure
		{Err: &pgconn.PgError{Code: "57P01"}, Want: true},  // admin_shutdown
		{Err: &pgconn.PgError{Code: "23505"}, Want: false}, // unique_violation
		{Err: &pgconn.PgError{Code: "42P01"}, Want: false}, // undefined_table
		{Err: &pgconn.PgError{Code: "22003"}, Want: false}, // numeric_value_out_of_range
	})
}

func TestConfigDefaults(t *testing.T) {
	conn, err := pgx.ParseConfig("postgres://u@h/db")
	if err != nil {
		t.Fatal(err)
	}
	cfg, drv, err := Config{Driver: conn}.normalize()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.MaxOpenConns != sqlpool.DefaultMaxOpenConns || cfg.MaxIdleConns != sqlpool.DefaultMaxIdleConns ||
		cfg.ConnMaxLifetime != sqlpool.DefaultConnMaxLifetime || cfg.Timeout != sqlpool.DefaultTimeout ||
		cfg.Retries != sqlpool.DefaultRetries || cfg.Logger == nil {
		t.Errorf("defaults not applied: %+v", cfg)
	}
	if drv == conn || drv.Database != "db" {
		t.Errorf("normalize did not copy the driver config")
	}
	for _, bad := range []Config{{}, {Driver: conn, Settings: sqlpool.Settings{MaxOpenConns: -1}}, {Driver: conn, Settings: sqlpool.Settings{Timeout: -time.Second}}} {
		if _, _, err := bad.normalize(); err == nil {
			t.Errorf("normalize(%+v) accepted it", bad)
		}
	}
}
