package coord

import (
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/idforge/idforge/internal/dsn"
)

// ParseURL checks what the coordinator providers ask of a URL:
// scheme://[user:password@]host[:port][,host2…]/<path>?…, one of schemes
// (the first names the URL in messages: "etcd worker URL"). path names
// what the path holds, for the message about an opaque URL. It returns
// the URL's Query, whose Errorf makes the provider's errors, and the
// hosts with defaultPort added where they have none.
func ParseURL(u *url.URL, path, defaultPort string, schemes ...string) (*dsn.Query, []string, error) {
	q := dsn.NewQuery(u, schemes[0]+" worker URL")
	if !slices.Contains(schemes, u.Scheme) {
		return nil, nil, q.Errorf("scheme %q, want %s", u.Scheme, strings.Join(schemes, " or "))
	}
	if u.Opaque != "" {
		return nil, nil, q.Errorf("want %s://host:port/%s", u.Scheme, path)
	}
	hosts, err := Hosts(u.Host, defaultPort)
	if err != nil {
		return nil, nil, q.Errorf("%v", err)
	}
	return q, hosts, nil
}

// DefaultDialTimeout is how long Acquire waits for its first contact with
// the coordinator (etcd's first answer, a ZooKeeper session) before it
// resumes the cached ID, when the URL sets no dial_timeout.
const DefaultDialTimeout = 3 * time.Second

// DialTimeout reads the URL's dial_timeout (DefaultDialTimeout when it
// sets none) from q.
func DialTimeout(q *dsn.Query) time.Duration {
	return q.Duration("dial_timeout", DefaultDialTimeout, time.Nanosecond)
}
