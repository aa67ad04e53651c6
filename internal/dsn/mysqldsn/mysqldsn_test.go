package mysqldsn_test

import (
	"context"
	"database/sql"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/idforge/idforge/internal/dsn/mysqldsn"
	"github.com/idforge/idforge/internal/testsvc"
)

func TestConfigHosts(t *testing.T) {
	u, err := url.Parse("mysql://u:pw@h1,h2:3307/db")
	if err != nil {
		t.Fatal(err)
	}
	drv, err := mysqldsn.Config(u, nil, "db")
	if err != nil || drv.Addr != "h1:3306,h2:3307" || drv.User != "u" || drv.Passwd != "pw" {
		t.Fatalf("Config = %+v, %v", drv, err)
	}
}

// A connection goes to the first host that answers and takes writes;
// when none does, the error names every host.
func TestConnectorSkipsHosts(t *testing.T) {
	shared, err := url.Parse(testsvc.MySQL(t))
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse("mysql://" + shared.User.String() + "@127.0.0.1:1," + shared.Host + shared.Path)
	drv, err := mysqldsn.Config(u, nil, strings.TrimPrefix(shared.Path, "/"))
	if err != nil {
		t.Fatal(err)
	}
	drv.Timeout = time.Second
	c, err := mysqldsn.Connector(drv)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(c)
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var one int
	if err := db.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil {
		t.Fatalf("through a dead host then the shared server: %v", err)
	}

	drv.Addr = "127.0.0.1:1,127.0.0.1:2"
	c, err = mysqldsn.Connector(drv)
	if err != nil {
		t.Fatal(err)
	}
	dead := sql.OpenDB(c)
	defer dead.Close()
	err = dead.PingContext(ctx)
	if err == nil || !strings.Contains(err.Error(), "no host takes writes") ||
		!strings.Contains(err.Error(), "127.0.0.1:1") || !strings.Contains(err.Error(), "127.0.0.1:2") {
		t.Fatalf("no host answering: %v; want an error naming both", err)
	}
}
