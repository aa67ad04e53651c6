package memcache

import (
	"context"
	"math"
	"net"
	"net/url"
	"time"

	gomemcache "github.com/bradfitz/gomemcache/memcache"

	"github.com/idforge/idforge/internal/closeonce"
	"github.com/idforge/idforge/internal/dsn"
	"github.com/idforge/idforge/sequence"
)

func init() {
	sequence.Register(sequence.Scheme{Name: "memcache", Form: "memcache://host:11211?key=orders&create=true",
		Doc: "incr on one memcached item"}, openSource)
}

// openSource is the sequence.Opener of "memcache".
func openSource(ctx context.Context, u *url.URL) (sequence.Source, error) {
	q := dsn.NewQuery(u, "memcache source URL")
	cfg := SourceConfig{
		Key:    q.Required("key"),
		Start:  q.Int("start", 1, 1, math.MaxInt64),
		Create: q.Bool("create", false),
	}
	timeout := q.Duration("timeout", 3*time.Second, time.Millisecond)
	idle := q.Int("max_idle_conns", 16, 1, 10000)
	if err := q.Done(); err != nil {
		return nil, err
	}
	if u.Opaque != "" || u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") {
		return nil, q.Errorf("write memcache://host:port?key=name")
	}
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = "11211"
	}
	cl := gomemcache.New(net.JoinHostPort(host, port))
	cl.Timeout = timeout
	cl.MaxIdleConns = int(idle)
	s, err := NewSource(ctx, cl, cfg)
	if err := closeonce.Adopt(err, cl, func() *closeonce.Owned { return &s.owned }); err != nil {
		return nil, err
	}
	return s, nil
}
