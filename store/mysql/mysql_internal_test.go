package mysql

import (
	"testing"
	"time"

	"github.com/idforge/idforge/internal/sqldb"
	mysqldrv "github.com/idforge/idforge/internal/sqldb/mysql"
)

func TestConfigDefaults(t *testing.T) {
	cfg, drv, err := Config{Driver: &mysqldrv.Config{DBName: "db"}}.normalize()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.MaxOpenConns != sqldb.DefaultMaxOpenConns || cfg.MaxIdleConns != sqldb.DefaultMaxIdleConns ||
		cfg.ConnMaxLifetime != sqldb.DefaultConnMaxLifetime || cfg.Timeout != sqldb.DefaultTimeout ||
		cfg.Retries != sqldb.DefaultRetries || cfg.Logger == nil {
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
	for _, bad := range []Config{{}, {Driver: &mysqldrv.Config{}}, {Driver: &mysqldrv.Config{DBName: "db"}, Settings: Settings{MaxOpenConns: -1}}} {
		if _, _, err := bad.normalize(); err == nil {
			t.Errorf("normalize(%+v) accepted it", bad)
		}
	}
}
