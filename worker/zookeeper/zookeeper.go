package zookeeper

import (
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/dsn"
	"github.com/idforge/idforge/worker"
	"github.com/idforge/idforge/worker/internal/coord"
	"github.com/idforge/idforge/worker/internal/holder"
)

// Defaults of the URL parameters, and Leaf's fixed values.
const (
	// DefaultName is Leaf's leaf.name when the URL has no path.
	DefaultName = "idforge"
	// DefaultSessionTimeout is the ZooKeeper session timeout when the URL
	// sets no session_timeout.
	DefaultSessionTimeout = 10 * time.Second
	// DefaultMaxDrift is the largest start-up difference from the peers'
	// average clock when the URL sets no max_drift.
	DefaultMaxDrift = coord.DefaultMaxDrift
	// DefaultDialTimeout bounds the wait for a session in Acquire when the
	// URL sets no dial_timeout.
	DefaultDialTimeout = coord.DefaultDialTimeout
	// ReportInterval is how often a node writes its time to its nodes, as
	// Leaf does.
	ReportInterval = 3 * time.Second
)

const defaultPort = "2181"

func init() {
	open := holder.Opener(Open)
	for _, scheme := range []string{"zk", "zookeeper"} {
		worker.Register(worker.Scheme{Name: scheme, Form: scheme + "://[user:password@]host:2181[,host2:2181…]/name?session_timeout=10s",
			Doc: "a Leaf-snowflake sequential node in ZooKeeper"}, open)
	}
}

// Provider hands out Leaf-style worker IDs from ZooKeeper. It is safe for
// concurrent use; each Acquire opens its own session, which the lease
// closes on Release.
type Provider struct {
	servers        []string
	name           string
	sessionTimeout time.Duration
	maxDrift       time.Duration
	dialTimeout    time.Duration
	auth           []byte      // "user:password" for the digest scheme, or nil
	desc           string      // redacted URL
	node           holder.Node // its Owner is ip:port; its Cache nil without a data directory
	ip, port       string
}

var _ worker.Provider = (*Provider)(nil)

// Open returns the Provider for a zk:// or zookeeper:// URL (see the
// package documentation). It does not contact ZooKeeper. A malformed URL
// or a missing or malformed Owner (it must be host:port, which Leaf's
// node names and data carry) is an error wrapping
// idforge.ErrInvalidArgument.
func Open(u *url.URL, opts worker.Options) (*Provider, error) {
	p := &Provider{name: DefaultName, desc: dsn.Redacted(u)}
	q, servers, err := coord.ParseURL(u, "name", defaultPort, "zk", "zookeeper")
	if err != nil {
		return nil, err
	}
	p.servers = servers
	if name := strings.Trim(u.Path, "/"); name != "" {
		if strings.Contains(name, "/") {
			return nil, q.Errorf("name %q: want one path element (Leaf's leaf.name)", name)
		}
		p.name = name
	}
	if u.User != nil {
		pw, _ := u.User.Password()
		p.auth = []byte(u.User.Username() + ":" + pw)
	}
	p.sessionTimeout = q.Duration("session_timeout", DefaultSessionTimeout, time.Nanosecond)
	p.maxDrift = coord.MaxDrift(q)
	p.dialTimeout = coord.DialTimeout(q)
	if err := q.Done(); err != nil {
		return nil, err
	}
	if opts.Owner == "" {
		return nil, fmt.Errorf("%w: the ZooKeeper worker provider needs this node's host:port as its owner: Leaf binds worker IDs to it",
			idforge.ErrInvalidArgument)
	}
	if p.ip, p.port, err = net.SplitHostPort(opts.Owner); err != nil || p.ip == "" || p.port == "" {
		return nil, fmt.Errorf("%w: owner %q: want host:port", idforge.ErrInvalidArgument, opts.Owner)
	}
	if strings.Contains(opts.Owner, "/") {
		return nil, fmt.Errorf("%w: owner %q: a ZooKeeper node name cannot hold '/'", idforge.ErrInvalidArgument, opts.Owner)
	}
	p.node = holder.NewNode(opts, p.desc, true)
	return p, nil
}

// Describe returns the URL with its password redacted.
func (p *Provider) Describe() string { return p.desc }

// Base returns the Leaf tree of this provider, /snowflake/{name}.
func (p *Provider) Base() string { return "/snowflake/" + p.name }

func (p *Provider) foreverDir() string   { return p.Base() + "/forever" }
func (p *Provider) temporaryDir() string { return p.Base() + "/temporary" }
func (p *Provider) temporaryPath() string {
	return p.temporaryDir() + "/" + p.node.Owner
}

// foreverPath is the name ZooKeeper gives a sequential node: the prefix
// and ten digits.
func (p *Provider) foreverPath(seq int64) string {
	return fmt.Sprintf("%s/%s-%010d", p.foreverDir(), p.node.Owner, seq)
}
