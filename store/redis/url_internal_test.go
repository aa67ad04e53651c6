package redis

import (
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/redisconn"
)

func TestParseURL(t *testing.T) {
	mysqlURL := "mysql://idforge:pw@db.internal:3306/idforge?timeout=2s&retries=1"
	u, err := url.Parse("redisseg://user:secret@redis.internal:6380/2?prefix=shop:seg:&factor=4&reserve=100000" +
		"&retry_after=250ms&pool_size=7&read_timeout=2s&store=" + url.QueryEscape(mysqlURL))
	if err != nil {
		t.Fatal(err)
	}
	p, err := parseURL(u)
	if err != nil {
		t.Fatal(err)
	}
	if p.storeURL != mysqlURL {
		t.Errorf("store URL = %q, want %q", p.storeURL, mysqlURL)
	}
	want := Config{Prefix: "shop:seg:", Factor: 4, Reserve: 100000, RetryAfter: 250 * time.Millisecond}
	if p.cfg != want {
		t.Errorf("Config = %+v, want %+v", p.cfg, want)
	}
	o := p.redis.Single()
	if o.Addr != "redis.internal:6380" || o.DB != 2 || o.Username != "user" || o.Password != "secret" || o.TLSConfig != nil {
		t.Errorf("redis options: addr %q db %d user %q password %q TLS %v", o.Addr, o.DB, o.Username, o.Password, o.TLSConfig != nil)
	}
	if o.PoolSize != 7 || o.ReadTimeout != 2*time.Second {
		t.Errorf("go-redis parameters lost: pool_size %d read_timeout %v", o.PoolSize, o.ReadTimeout)
	}
	if d := redisconn.FailFast; o.DialTimeout != d.DialTimeout || o.WriteTimeout != d.WriteTimeout || o.MaxRetries != d.MaxRetries ||
		o.DialerRetries != d.DialerRetries || !o.ContextTimeoutEnabled {
		t.Errorf("defaults not applied: dial %v write %v retries %d dial attempts %d context timeouts %v",
			o.DialTimeout, o.WriteTimeout, o.MaxRetries, o.DialerRetries, o.ContextTimeoutEnabled)
	}

	u, _ = url.Parse("redisseg://localhost?tls=true&store=sqlite:///var/lib/idforge/idforge.db")
	p, err = parseURL(u)
	if err != nil {
		t.Fatal(err)
	}
	if p.redis.Single().Addr != "localhost:6379" || p.redis.TLS() == nil || p.cfg != (Config{}) || p.storeURL != "sqlite:///var/lib/idforge/idforge.db" {
		t.Errorf("minimal URL: addr %q TLS %v config %+v store %q", p.redis.Single().Addr, p.redis.TLS() != nil, p.cfg, p.storeURL)
	}
}

func TestParseURLErrors(t *testing.T) {
	const db = "&store=mysql%3A%2F%2Fu%3Ainner-pw%40h%2Fd"
	tests := []struct{ name, url, want string }{
		{"no store", "redisseg://:outer-pw@h:6379/0", "store parameter"},
		{"empty store", "redisseg://h/0?store=", "store"},
		{"store not a URL", "redisseg://h/0?store=idforge.db", "not a store URL"},
		{"nested", "redisseg://h/0?store=" + url.QueryEscape("redisseg://h/0?store=sqlite:x.db"), "another redisseg"},
		{"factor 0", "redisseg://:outer-pw@h/0?factor=0" + db, "factor"},
		{"factor text", "redisseg://h/0?factor=ten" + db, "factor"},
		{"negative reserve", "redisseg://h/0?reserve=-1" + db, "reserve"},
		{"bad retry", "redisseg://h/0?retry_after=soon" + db, "retry_after"},
		{"bad tls", "redisseg://h/0?tls=maybe" + db, "tls"},
		{"unknown parameter", "redisseg://:outer-pw@h/0?colour=blue" + db, "colour"},
		{"bad db", "redisseg://h/x" + "?" + db[1:], "database number"},
		{"opaque", "redisseg:h?" + db[1:], "write redisseg://"},
		{"fragment", "redisseg://h/0?" + db[1:] + "#x", "fragment"},
		{"other scheme", "redis://h/0?" + db[1:], "scheme"},
	}
	for _, tt := range tests {
		u, err := url.Parse(tt.url)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		_, err = parseURL(u)
		if !errors.Is(err, idforge.ErrInvalidArgument) {
			t.Errorf("%s: error %v, want ErrInvalidArgument", tt.name, err)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, tt.want) {
			t.Errorf("%s: error %q does not mention %q", tt.name, msg, tt.want)
		}
		if strings.Contains(msg, "outer-pw") || strings.Contains(msg, "inner-pw") {
			t.Errorf("%s: error shows a password: %s", tt.name, msg)
		}
	}
}

func TestReserveSize(t *testing.T) {
	s := &Store{factor: 10, reserve: 0}
	for _, tt := range []struct{ n, want int64 }{
		{1, 10}, {1000, 10000}, {1 << 60, 1<<63 - 1}, {1<<63 - 1, 1<<63 - 1},
	} {
		if got := s.reserveSize(tt.n); got != tt.want {
			t.Errorf("reserveSize(%d) = %d, want %d", tt.n, got, tt.want)
		}
	}
	s.reserve = 5000
	if got := s.reserveSize(10); got != 5000 {
		t.Errorf("reserveSize(10) with Reserve 5000 = %d", got)
	}
}
