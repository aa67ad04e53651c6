package postgres

import (
	"net/url"
	"testing"
	"time"

	"github.com/idforge/idforge/internal/dsn"
	"github.com/idforge/idforge/internal/sqldb"
	"github.com/idforge/idforge/internal/sqldb/postgres"
)

func TestConfigDefaults(t *testing.T) {
	u, _ := url.Parse("postgres://u@h/db")
	conn, err := postgres.FromURL(u, dsn.NewQuery(u, "test URL"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, drv, err := Config{Driver: conn}.normalize()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.MaxOpenConns != sqldb.DefaultMaxOpenConns || cfg.MaxIdleConns != sqldb.DefaultMaxIdleConns ||
		cfg.ConnMaxLifetime != sqldb.DefaultConnMaxLifetime || cfg.Timeout != sqldb.DefaultTimeout ||
		cfg.Retries != sqldb.DefaultRetries || cfg.Logger == nil {
		t.Errorf("defaults not applied: %+v", cfg)
	}
	if drv == conn || drv.Database != "db" {
		t.Errorf("normalize did not copy the driver config")
	}
	for _, bad := range []Config{{}, {Driver: conn, Settings: Settings{MaxOpenConns: -1}}, {Driver: conn, Settings: Settings{Timeout: -time.Second}}} {
		if _, _, err := bad.normalize(); err == nil {
			t.Errorf("normalize(%+v) accepted it", bad)
		}
	}
}
