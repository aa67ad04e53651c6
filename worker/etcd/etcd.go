package etcd

import (
	"crypto/tls"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/idforge/idforge/internal/dsn"
	"github.com/idforge/idforge/worker"
	"github.com/idforge/idforge/worker/internal/coord"
	"github.com/idforge/idforge/worker/internal/holder"
)

// Defaults of the URL parameters.
const (
	// DefaultPrefix is the key prefix when the URL has no path.
	DefaultPrefix = "/idforge/workers"
	// DefaultTTL is the lease time to live when the URL sets no ttl.
	DefaultTTL = 10 * time.Second
	// DefaultDialTimeout bounds the first request of Acquire when the URL
	// sets no dial_timeout.
	DefaultDialTimeout = coord.DefaultDialTimeout
)

// defaultPort is added to hosts written without one.
const defaultPort = "2379"

func init() {
	open := holder.Opener(Open)
	worker.Register(worker.Scheme{Name: "etcd", Form: "etcd://[user:password@]host:2379[,host2:2379…]/prefix?ttl=10s",
		Doc: "a key bound to an etcd lease"}, open)
	worker.Register(worker.Scheme{Name: "etcds", Form: "etcds://…", Doc: "etcd:// over TLS"}, open)
}

// Provider hands out worker IDs held under etcd leases. It is safe for
// concurrent use; each Acquire opens its own client, which the lease
// closes on Release.
type Provider struct {
	endpoints   []string
	prefix      string
	ttl         time.Duration
	maxDrift    time.Duration
	dialTimeout time.Duration
	username    string
	password    string
	tls         *tls.Config
	desc        string      // redacted URL
	node        holder.Node // its Cache is nil without a data directory
}

var _ worker.Provider = (*Provider)(nil)

// Open returns the Provider for an etcd:// or etcds:// URL (see the
// package documentation). It does not contact etcd. A malformed URL is
// an error wrapping idforge.ErrInvalidArgument.
func Open(u *url.URL, opts worker.Options) (*Provider, error) {
	p := &Provider{prefix: DefaultPrefix, ttl: DefaultTTL, desc: dsn.Redacted(u)}
	q, hosts, err := coord.ParseURL(u, "prefix", defaultPort, "etcd", "etcds")
	if err != nil {
		return nil, err
	}
	scheme := "http://"
	if u.Scheme == "etcds" {
		scheme = "https://"
		p.tls = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	for _, h := range hosts {
		p.endpoints = append(p.endpoints, scheme+h)
	}
	if prefix := strings.TrimRight(u.Path, "/"); prefix != "" {
		p.prefix = prefix
	}
	if u.User != nil {
		p.username = u.User.Username()
		p.password, _ = u.User.Password()
	}
	q.Func("ttl", func(v string) (err error) {
		p.ttl, err = parseTTL(v)
		return err
	})
	p.dialTimeout = coord.DialTimeout(q)
	p.maxDrift = coord.MaxDrift(q)
	if err := q.Done(); err != nil {
		return nil, err
	}
	p.node = holder.NewNode(opts, p.desc, true)
	return p, nil
}

// parseTTL accepts a Go duration or a bare number of seconds; etcd leases
// count whole seconds.
func parseTTL(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		n, nerr := strconv.ParseInt(s, 10, 64)
		if nerr != nil {
			return 0, fmt.Errorf("a duration such as 10s")
		}
		d = time.Duration(n) * time.Second
	}
	if d < time.Second || d%time.Second != 0 {
		return 0, fmt.Errorf("whole seconds, at least 1s: etcd leases count seconds")
	}
	return d, nil
}

// Describe returns the URL with its password redacted.
func (p *Provider) Describe() string { return p.desc }

// TTL returns the lease time to live the URL asked for.
func (p *Provider) TTL() time.Duration { return p.ttl }

// Prefix returns the key prefix under which worker IDs are kept.
func (p *Provider) Prefix() string { return p.prefix }

func (p *Provider) idKey(n int64) string    { return p.prefix + "/id/" + strconv.FormatInt(n, 10) }
func (p *Provider) lastKey(n int64) string  { return p.prefix + "/last/" + strconv.FormatInt(n, 10) }
func (p *Provider) clockKey(n int64) string { return p.prefix + "/clock/" + strconv.FormatInt(n, 10) }
