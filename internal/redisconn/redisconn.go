// Package redisconn is the one place where idforge turns a Redis URL into
// a go-redis client, for every part kept in Redis (the redisseg segment
// store, the INCR sources and per-period counters, the worker-ID
// leases), and where the writes that hand out values are made to reach
// replicas before the values are handed out.
//
// # URL forms
//
// Each part has its own scheme (redis, rediss, redisseg); a "+sentinel"
// or "+cluster" suffix picks the topology, and go-redis's own clients
// serve it (NewClient, NewFailoverClient, NewClusterClient):
//
//	redis://[[user]:password@]host[:port][/db]
//	redis+sentinel://[[user]:password@]s1[:26379],s2[:26379],…/master[?db=N]
//	redis+cluster://[[user]:password@]n1[:6379],n2[:6379],…
//
// The user and password are those of the Redis servers; sentinels that
// require a password of their own take sentinel_username and
// sentinel_password. An IPv6 address, which url.Parse cannot read in a
// list, is given as a repeated addr=[::1]:26379 parameter. The
// parameters min_replicas and wait_timeout are idforge's (see
// Replication); every other one is go-redis's (dial_timeout, pool_size,
// …), and an unknown one is an error.
package redisconn

import (
	"cmp"
	"crypto/tls"
	"errors"
	"fmt"
	"math"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/idforge/idforge/internal/dsn"
)

// Topology is how the Redis servers of a URL are arranged.
type Topology int

// The topologies, picked by the scheme's suffix.
const (
	// Single is one server (and replicas the client does not know of):
	// no suffix.
	Single Topology = iota
	// Sentinel is a primary found through Redis Sentinel: "+sentinel".
	Sentinel
	// Cluster is a Redis Cluster: "+cluster".
	Cluster
)

// String returns "single", "sentinel" or "cluster".
func (t Topology) String() string {
	switch t {
	case Sentinel:
		return "sentinel"
	case Cluster:
		return "cluster"
	}
	return "single"
}

// suffixes are the scheme suffixes of the topologies but Single.
var suffixes = map[Topology]string{Sentinel: "+sentinel", Cluster: "+cluster"}

// SplitScheme splits a scheme into its base and topology:
// "rediss+cluster" is ("rediss", Cluster), "redis" is ("redis", Single).
func SplitScheme(scheme string) (base string, t Topology) {
	s := strings.ToLower(scheme)
	for t, suf := range suffixes {
		if b, ok := strings.CutSuffix(s, suf); ok {
			return b, t
		}
	}
	return s, Single
}

// Schemes returns base and its "+sentinel" and "+cluster" forms, for a
// part to register.
func Schemes(base string) []string {
	return []string{base, base + suffixes[Sentinel], base + suffixes[Cluster]}
}

// Default ports of the hosts of a URL that name none.
const (
	DefaultPort         = "6379"
	DefaultSentinelPort = "26379"
)

// Defaults are a part's client settings, used where the URL does not
// set go-redis's parameter of the same name; zero leaves go-redis's own
// default.
type Defaults struct {
	DialTimeout, ReadTimeout, WriteTimeout time.Duration
	MaxRetries, DialerRetries, PoolSize    int
	// ContextTimeout makes a call's context deadline bound its reads and
	// writes too (go-redis's ContextTimeoutEnabled).
	ContextTimeout bool
}

// FailFast are the client settings of a part a request waits on (an INCR
// source, a per-period counter, the redisseg store): one retry, one
// redial of a second at most, reads of half a second (plus the WAIT
// timeout, whose reply comes after it), and the request's deadline
// bounding every read and write. Through a fail-over the request ends
// at once with an error wrapping idforge.ErrUnavailable, and its client
// can fail over to another node, instead of waiting out go-redis's own
// defaults (three retries of five redials each, 3s reads).
var FailFast = Defaults{
	DialTimeout: time.Second, ReadTimeout: 500 * time.Millisecond, WriteTimeout: 500 * time.Millisecond,
	MaxRetries: 1, DialerRetries: 1, ContextTimeout: true,
}

// Replication is how many replicas must hold a write that hands out
// values before the values are handed out (Writer.Eval): Redis's WAIT
// numreplicas timeout after the write. Sentinel and Cluster promote the
// replica with the most data, so a value that reached MinReplicas
// replicas survives a fail-over: it is never handed out again. A write
// that fewer replicas acknowledged within Timeout is not handed out: the
// caller gets an error wrapping idforge.ErrUnavailable, and the values
// become a gap.
type Replication struct {
	// MinReplicas is WAIT's numreplicas; 0 sends no WAIT. URL parameter
	// min_replicas; default DefaultMinReplicas for Sentinel and Cluster
	// URLs, 0 for a single server.
	MinReplicas int
	// Timeout is WAIT's timeout, at least 1ms. URL parameter
	// wait_timeout; default DefaultWaitTimeout.
	Timeout time.Duration
}

// Defaults of Replication read from a URL.
const (
	DefaultMinReplicas = 1
	DefaultWaitTimeout = 500 * time.Millisecond
)

// Options is what a Redis URL says: the client to build and, for a part
// that waits for replicas, its Replication.
type Options struct {
	Topology    Topology
	Replication Replication

	single   *goredis.Options
	failover *goredis.FailoverOptions
	cluster  *goredis.ClusterOptions
}

// Parse reads the Redis part of u: its hosts, user, password and path,
// and the parameters left in q (go-redis's own, and sentinel_username,
// sentinel_password, plus min_replicas and wait_timeout when waits is
// set). The topology is the scheme's suffix; useTLS says to reach Redis
// over TLS (a rediss scheme, or a part's tls parameter). Errors are q's
// (they wrap idforge.ErrInvalidArgument and show u redacted).
func Parse(u *url.URL, q *dsn.Query, useTLS, waits bool, d Defaults) (*Options, error) {
	_, topo := SplitScheme(u.Scheme)
	o := &Options{Topology: topo}
	if waits {
		def := 0
		if topo != Single {
			def = DefaultMinReplicas
		}
		o.Replication = Replication{
			MinReplicas: int(q.Int("min_replicas", int64(def), 0, math.MaxInt32)),
			Timeout:     q.Duration("wait_timeout", DefaultWaitTimeout, time.Millisecond),
		}
	}
	var sentinelUser, sentinelPass string
	if topo == Sentinel {
		sentinelUser = q.String("sentinel_username", "")
		sentinelPass = q.String("sentinel_password", "")
	}
	extra := q.List("addr")
	if err := q.Err(); err != nil {
		return nil, err
	}
	switch {
	case u.Opaque != "":
		return nil, q.Errorf("write %s://[user:password@]host:port/…", u.Scheme)
	case u.Fragment != "":
		return nil, q.Errorf("has a fragment")
	}
	scheme := "redis"
	if useTLS {
		scheme = "rediss"
	}
	rest := q.Rest()
	g := url.URL{Scheme: scheme, RawQuery: rest.Encode()}
	var err error
	switch topo {
	case Single:
		if len(extra) > 0 || strings.Contains(u.Host, ",") {
			return nil, q.Errorf("names several hosts; write %s for Sentinel or %s for a cluster", Schemes(u.Scheme)[1], Schemes(u.Scheme)[2])
		}
		g.User, g.Host, g.Path = u.User, u.Host, u.Path
		o.single, err = goredis.ParseURL(g.String())
	case Sentinel:
		hosts, herr := hostList(u.Host, extra, DefaultSentinelPort)
		if herr != nil {
			return nil, q.Errorf("%v", herr)
		}
		master, db, perr := sentinelPath(u.Path)
		if perr != nil {
			return nil, q.Errorf("%v", perr)
		}
		if master == "" && !rest.Has("master_name") {
			return nil, q.Errorf("names no master: write %s://sentinel1:26379,sentinel2:26379/<master name>", u.Scheme)
		}
		v := g.Query()
		if master != "" {
			v.Set("master_name", master)
		}
		if db != "" && !v.Has("db") {
			v.Set("db", db)
		}
		v.Del("addr")
		for _, h := range hosts[1:] {
			v.Add("addr", h)
		}
		if u.User != nil {
			if n := u.User.Username(); n != "" {
				v.Set("username", n)
			}
			if p, ok := u.User.Password(); ok {
				v.Set("password", p)
			}
		}
		g.Host, g.RawQuery = hosts[0], v.Encode()
		if sentinelUser != "" || sentinelPass != "" {
			g.User = url.UserPassword(sentinelUser, sentinelPass)
		}
		o.failover, err = goredis.ParseFailoverURL(g.String())
	case Cluster:
		hosts, herr := hostList(u.Host, extra, DefaultPort)
		if herr != nil {
			return nil, q.Errorf("%v", herr)
		}
		if p := strings.Trim(u.Path, "/"); p != "" && p != "0" {
			return nil, q.Errorf("a cluster has database 0 only, not %q", p)
		}
		v := g.Query()
		v.Del("addr")
		for _, h := range hosts[1:] {
			v.Add("addr", h)
		}
		g.User, g.Host, g.RawQuery = u.User, hosts[0], v.Encode()
		o.cluster, err = goredis.ParseClusterURL(g.String())
	}
	if err != nil {
		return nil, q.Errorf("%v", dsn.Scrub(err, password(u)))
	}
	if o.Replication.MinReplicas > 0 && d.ReadTimeout > 0 {
		d.ReadTimeout += o.Replication.Timeout // the reply to WAIT comes after it
	}
	o.applyDefaults(d)
	if o.Replication.MinReplicas > 0 {
		if rt := o.readTimeout(); rt > 0 && rt <= o.Replication.Timeout {
			return nil, q.Errorf("read_timeout %s must exceed wait_timeout %s: the reply to WAIT comes after it", rt, o.Replication.Timeout)
		}
	}
	return o, nil
}

func password(u *url.URL) string {
	if u.User == nil {
		return ""
	}
	p, _ := u.User.Password()
	return p
}

// hostList splits "h1:p1,h2,…" and adds extra (addr parameters), each
// with def as its port when it names none.
func hostList(host string, extra []string, def string) ([]string, error) {
	var out []string
	for _, h := range append(strings.Split(host, ","), extra...) {
		if h = strings.TrimSpace(h); h == "" {
			continue
		}
		if hp, p, err := net.SplitHostPort(h); err == nil {
			if hp == "" || p == "" {
				return nil, fmt.Errorf("host %q: empty host or port", h)
			}
			out = append(out, net.JoinHostPort(hp, p))
			continue
		}
		if strings.Contains(h, ":") && !strings.HasPrefix(h, "[") {
			return nil, fmt.Errorf("host %q: not host:port", h)
		}
		out = append(out, net.JoinHostPort(strings.Trim(h, "[]"), def))
	}
	if len(out) == 0 {
		return nil, errors.New("names no host")
	}
	return out, nil
}

// sentinelPath reads "/master" or "/master/db".
func sentinelPath(p string) (master, db string, err error) {
	f := strings.FieldsFunc(p, func(r rune) bool { return r == '/' })
	switch len(f) {
	case 0:
		return "", "", nil
	case 1:
		return f[0], "", nil
	case 2:
		if _, err := strconv.Atoi(f[1]); err != nil {
			return "", "", fmt.Errorf("path %q: want /<master name>[/<db>]", p)
		}
		return f[0], f[1], nil
	}
	return "", "", fmt.Errorf("path %q: want /<master name>[/<db>]", p)
}

// applyDefaults sets the fields the URL left zero.
func (o *Options) applyDefaults(d Defaults) {
	set := func(dial, read, write *time.Duration, retries, dialRetries, pool *int, ctxTimeout *bool) {
		*dial = cmp.Or(*dial, d.DialTimeout)
		*read = cmp.Or(*read, d.ReadTimeout)
		*write = cmp.Or(*write, d.WriteTimeout)
		*retries = cmp.Or(*retries, d.MaxRetries)
		*dialRetries = cmp.Or(*dialRetries, d.DialerRetries)
		*pool = cmp.Or(*pool, d.PoolSize)
		*ctxTimeout = *ctxTimeout || d.ContextTimeout
	}
	switch {
	case o.single != nil:
		s := o.single
		set(&s.DialTimeout, &s.ReadTimeout, &s.WriteTimeout, &s.MaxRetries, &s.DialerRetries, &s.PoolSize, &s.ContextTimeoutEnabled)
	case o.failover != nil:
		s := o.failover
		set(&s.DialTimeout, &s.ReadTimeout, &s.WriteTimeout, &s.MaxRetries, &s.DialerRetries, &s.PoolSize, &s.ContextTimeoutEnabled)
	case o.cluster != nil:
		s := o.cluster
		set(&s.DialTimeout, &s.ReadTimeout, &s.WriteTimeout, &s.MaxRetries, &s.DialerRetries, &s.PoolSize, &s.ContextTimeoutEnabled)
	}
}

// readTimeout is the client's read timeout; go-redis's 3s when unset.
func (o *Options) readTimeout() time.Duration {
	var rt time.Duration
	switch {
	case o.single != nil:
		rt = o.single.ReadTimeout
	case o.failover != nil:
		rt = o.failover.ReadTimeout
	case o.cluster != nil:
		rt = o.cluster.ReadTimeout
	}
	if rt == 0 {
		return 3 * time.Second
	}
	return rt
}

// TLS returns the TLS configuration, nil without TLS.
func (o *Options) TLS() *tls.Config {
	switch {
	case o.single != nil:
		return o.single.TLSConfig
	case o.failover != nil:
		return o.failover.TLSConfig
	}
	return o.cluster.TLSConfig
}

// Addrs returns the addresses the URL names: the server, the sentinels
// or the cluster's seed nodes.
func (o *Options) Addrs() []string {
	switch {
	case o.single != nil:
		return []string{o.single.Addr}
	case o.failover != nil:
		return o.failover.SentinelAddrs
	}
	return o.cluster.Addrs
}

// NewClient builds the client: a *goredis.Client for a single server or
// Sentinel (NewFailoverClient), a *goredis.ClusterClient for a cluster.
// It does not connect.
func (o *Options) NewClient() goredis.UniversalClient {
	switch {
	case o.single != nil:
		return goredis.NewClient(o.single)
	case o.failover != nil:
		return goredis.NewFailoverClient(o.failover)
	}
	return goredis.NewClusterClient(o.cluster)
}

// Single returns the options of a single server's client, nil for the
// other topologies.
func (o *Options) Single() *goredis.Options { return o.single }

// Failover returns the options of a Sentinel client, nil for the other
// topologies.
func (o *Options) Failover() *goredis.FailoverOptions { return o.failover }

// Cluster returns the options of a cluster client, nil for the other
// topologies.
func (o *Options) Cluster() *goredis.ClusterOptions { return o.cluster }
