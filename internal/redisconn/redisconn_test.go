package redisconn_test

import (
	"errors"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/dsn"
	"github.com/idforge/idforge/internal/redisconn"
)

func parse(t *testing.T, raw string, waits bool) (*redisconn.Options, error) {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	q := dsn.NewQuery(u, "redis URL")
	return redisconn.Parse(u, q, strings.HasPrefix(u.Scheme, "rediss"), waits, redisconn.Defaults{PoolSize: 2})
}

func TestParse(t *testing.T) {
	o, err := parse(t, "redis+sentinel://:secret@s1,s2:26380/mymaster?db=3&sentinel_password=spw&addr=[::1]:26381&pool_size=5", true)
	if err != nil {
		t.Fatal(err)
	}
	f := o.Failover()
	if o.Topology != redisconn.Sentinel || f == nil || f.MasterName != "mymaster" || f.DB != 3 || f.Password != "secret" ||
		f.SentinelPassword != "spw" || f.PoolSize != 5 ||
		!slices.Equal(f.SentinelAddrs, []string{"s1:26379", "s2:26380", "[::1]:26381"}) {
		t.Errorf("sentinel options: %+v", f)
	}
	if o.Replication != (redisconn.Replication{MinReplicas: 1, Timeout: redisconn.DefaultWaitTimeout}) {
		t.Errorf("sentinel replication %+v, want 1 replica, the default timeout", o.Replication)
	}

	o, err = parse(t, "rediss+cluster://u:pw@n1:7000,n2:7001?min_replicas=2&wait_timeout=1s", true)
	if err != nil {
		t.Fatal(err)
	}
	c := o.Cluster()
	if c == nil || c.Username != "u" || c.Password != "pw" || c.TLSConfig == nil || c.PoolSize != 2 ||
		!slices.Equal(c.Addrs, []string{"n1:7000", "n2:7001"}) {
		t.Errorf("cluster options: %+v", c)
	}
	if o.Replication != (redisconn.Replication{MinReplicas: 2, Timeout: time.Second}) {
		t.Errorf("cluster replication %+v", o.Replication)
	}

	o, err = parse(t, "redis://h:6380/2", true)
	if err != nil {
		t.Fatal(err)
	}
	if s := o.Single(); s == nil || s.Addr != "h:6380" || s.DB != 2 || o.Replication.MinReplicas != 0 {
		t.Errorf("single: %+v, replication %+v", s, o.Replication)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		url   string
		waits bool
		want  string
	}{
		{"redis://h1,h2/0", true, "redis+sentinel"},
		{"redis+sentinel://s1:26379?db=0", true, "names no master"},
		{"redis+cluster://n1/3", true, "database 0 only"},
		{"redis+sentinel://:topsecret@s1/m?read_timeout=200ms", true, "must exceed wait_timeout"},
		{"redis+sentinel://s1/m?sentinel_password=topsecret&min_replicas=-1", true, "min_replicas"},
		{"redis://h/0?min_replicas=1", false, "unexpected option"},
		{"redis+cluster://n1,n2:", true, "empty host or port"},
	} {
		_, err := parse(t, tc.url, tc.waits)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, idforge.ErrInvalidArgument) {
			t.Errorf("%s: error %v, want one containing %q", tc.url, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "topsecret") {
			t.Errorf("%s: the error shows the password: %v", tc.url, err)
		}
	}
}

// redisconn.FailFast's read timeout leaves room for the WAIT reply, whatever the
// wait_timeout: the URL need not set read_timeout to raise wait_timeout.
func TestFailFastReadsOutlastWait(t *testing.T) {
	u, _ := url.Parse("redis+sentinel://127.0.0.1:26379/m?wait_timeout=2s")
	o, err := redisconn.Parse(u, dsn.NewQuery(u, "test URL"), false, true, redisconn.FailFast)
	if err != nil {
		t.Fatal(err)
	}
	if rt := o.Failover().ReadTimeout; rt != redisconn.FailFast.ReadTimeout+2*time.Second || !o.Failover().ContextTimeoutEnabled || o.Failover().MaxRetries != 1 {
		t.Fatalf("read timeout %v, context timeouts %v, retries %d; want %v, true, 1", rt, o.Failover().ContextTimeoutEnabled, o.Failover().MaxRetries, redisconn.FailFast.ReadTimeout+2*time.Second)
	}
}
