package mysql

import (
	"github.com/idforge/idforge/store/sqlpool"

	"fmt"
	"testing"
	"time"

	mysqldrv "github.com/go-sql-driver/mysql"

	"github.com/idforge/idforge/store/internal/sqltest"
)

func TestTransient(t *testing.T) {
	sqltest.CheckTransient(t, classifyError, []sqltest.TransientCase{
		{Err: &mysqldrv.MySQLError{Number: 1213, Message: "Deadlock found"}, Want: true},
		{Err: fmt.Errorf("wrapped: %w", &mysqldrv.MySQLError{Number: 1205}), Want: true},
		{Err: &mysqldrv.MySQLError{Number: 1927}, Want: true},
		{Err: &mysqldrv.MySQLError{Number: 1062}, Want: false}, // duplicate entry
		{Err: &mysqldrv.MySQLError{Number: 1146}, Want: false}, // no such table
		{Err: &mysqldrv.MySQLError{Number: 1690}, Want: false}, // value out of range
		{Err: mysqldrv.ErrInvalidConn, Want: true},
	})
}

func TestConfigDefaults(t *testing.T) {
	cfg, drv, err := Config{Driver: &mysqldrv.Config{DBName: "db"}}.normalize()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.MaxOpenConns != sqlpool.DefaultMaxOpenConns || cfg.MaxIdleConns != sqlpool.DefaultMaxIdleConns ||
		cfg.ConnMaxLifetime != sqlpool.DefaultConnMaxLifetime || cfg.Timeout != sqlpool.DefaultTimeout ||
		cfg.Retries != sqlpool.DefaultRetries || cfg.Logger == nil {
		t.Errorf("defaults not applied: %+v", cfg)
	}
	if !drv.ParseTime || !drv.ClientFoundRows || drv.Loc != time.UTC || drv.Params["time_zone"] != "'+00:00'" {
		t.Errorf("driver settings not applied: %+v", drv)
	}
	// The caller's driver config is left alone, and its time_zone kept.
	mine := &mysqldrv.Config{DBName: "db", Params: map[string]string{"time_zone": "'+08:00'"}}
	_, drv, _ = Config{Driver: mine}.normalize()
	if mine.ParseTime || drv.Params["time_zone"] != "'+08:00'" {
		t.Errorf("normalize changed the caller's config or overrode time_zone: %+v / %+v", mine, drv)
	}
	for _, bad := range []Config{{}, {Driver: &mysqldrv.Config{}}, {Driver: &mysqldrv.Config{DBName: "db"}, Settings: sqlpool.Settings{MaxOpenConns: -1}}} {
		if _, _, err := bad.normalize(); err == nil {
			t.Errorf("normalize(%+v) accepted it", bad)
		}
	}
}
